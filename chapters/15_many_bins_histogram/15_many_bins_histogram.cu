// Chapter 15: histograms with many bins: narrow counters, clusters, and which technique
// wins at which bin count.
//
// What changed:  chapter 08 had 256 bins, small enough for 32 private copies per block.
//                Here there are 256 to 2^20 bins (16-bit values up to 65,536 bins,
//                32-bit values below 2^20 beyond), and from about 58K bins not even one
//                32-bit copy fits in an SM's shared memory. One measured step at a time:
//                  global-atomic     every value adds 1 to its 64-bit counter in global memory
//                  global-match      lanes of a warp holding the same bin add once (__match_any_sync)
//                  shared32          one 32-bit histogram per block in shared memory, up to
//                                    ~58K bins (227 KiB / 4 B); +1 atomics that return nothing
//                  packed16          two 16-bit counters per 32-bit word, twice the bins; each
//                                    atomic returns the old word, and the add that wraps a
//                                    counter hands 2^16 to global memory
//                  packed16-batch    + 16 atomics, then one test of all their returned words
//                                    (an OR), instead of a test and a branch after each
//                  packed16-hot      + each warp elects a hot bin, and its lanes count that bin
//                                    in a register: repeated values stop queuing on one word
//                  cluster-dsmem     the Programming Guide's design: a cluster of 2 to 16 blocks
//                                    splits the bins, and every value is an atomic add on its
//                                    owner block's shared memory (distributed shared memory)
//                  cluster-packed16  the same with packed 16-bit counters (2^20 bins fit in 16 SMs)
//                  partition         beyond one SM's bins: pass 1 sorts each tile's values by
//                                    slice of 65,536 bins into global memory, pass 2 counts each
//                                    slice in one block with packed16-hot's counting
//                  auto              what a library would ship: shared32 where 32-bit counters
//                                    fit in one block, packed16-hot where 16-bit ones do, else
//                                    partition
// Why faster:    a shared-memory atomic stays in the SM; a global one travels to L2, and
//                one L2 address takes one atomic at a time. 16-bit counters double the
//                bins an SM holds. A register holds a hot bin's count for free. A remote
//                (DSMEM) atomic crosses the SM-to-SM network for every value; the partition
//                pass moves 2 bytes per value through DRAM instead, in 16-byte stores.
// Bottleneck:    global atomics: the L2's atomic units; shared memory: the atomic unit (bank
//                conflicts on uniform values, one word on repeated values) and, for packed
//                counters, the instructions that test the returned words; clusters: the
//                remote atomics; partition: DRAM traffic (4 + 2 + 2 bytes per 32-bit value)
//                and the tile sort.
// Steps:         global-atomic, global-match, shared32, packed16, packed16-batch, packed16-hot,
//                cluster-dsmem, cluster-packed16, partition, auto
// Run:           build/chapters/15_many_bins_histogram [--n 2^28] [--bins B --dist
//                uniform|equal|mix|image --value V --p P] [--step NAME] [--offset K]
//                [--verify-only [--large]] [--json]
//                Without --bins/--dist: the headline inputs at 65,536 and 2^20 bins, the
//                p-sweep at 65,536 bins, and the regime map from 256 to 2^20 bins.
#include <cooperative_groups.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cub/device/device_histogram.cuh>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/cli.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/gpu_timer.h"
#include "common/report.h"
#include "common/verify.h"
#include "many_bins_data.h"

namespace {

using ch15::HistCount;
using sw::kFullMask;
using sw::kWarp;

constexpr int kUnroll = 4;                // 16-byte loads per thread per step of the main loop
constexpr int kGlobalThreads = 256;       // global-atomic, global-match
constexpr int kBlockThreads = 1024;       // the shared-memory kernels: one block per SM once the bins fill it
constexpr int kHotLanes = 16;             // packed16-hot: lanes that must agree with lane 0 to elect a hot bin
constexpr int kColdLanes = 8;             // packed16-hot: fewer lanes than this on the hot bin drop it
constexpr uint32_t kFlushAt = 0x8000;     // packed16-hot: a register count this large goes to shared memory
constexpr uint32_t kNoBin = 0xFFFFFFFFu;  // "no hot bin yet"
constexpr int kBatchValues = 16;          // packed16-batch: atomics issued before their words are looked at
// 32-bit shared counters (shared32, cluster-dsmem): no block or cluster may count 2^32
// values. The launchers give each at most this many.
constexpr int64_t kMaxValuesPerBlock = int64_t{1} << 31;
const int kClusterSizes[] = {2, 4, 8, 16};  // 16 needs cudaFuncAttributeNonPortableClusterSizeAllowed
// partition: slices of at most 2^16 bins (a value's index in its slice is 16 bits).
constexpr int kMaxSliceLog2 = 16;
constexpr int kMaxParts = 64;
constexpr int kScatterThreads = 512;                                     // pass 1's block
constexpr int kTileValuesPerThread = 16;                                 // pass 1: values per thread per tile
constexpr int kTileValues = kScatterThreads * kTileValuesPerThread;      // 8192 values per tile
constexpr int kTilesPerClaim = 4;                                        // pass 2: tiles a warp takes at a time
constexpr int kCountUnroll = 8;                                          // pass 2: loads in flight per lane
constexpr uint32_t kHotCountLimit = 1u << 26;                            // pass 1: a register count this large goes out
// Adding up the blocks' rows of counters.
constexpr int kAddThreads = 256;
constexpr int kRowsPerGroup = 32;

// --- values, keys and bins -----------------------------------------------------------

// A value v becomes the key v << (32 - range bits): its bin among `bins` equal bins of
// the range is then one multiply-high, __umulhi(key, bins) = v * bins / range, exactly
// HistogramEven's bin. 16-bit values span 2^16, 32-bit values 2^20.
template <class T>
constexpr int kKeyShift = sizeof(T) == 2 ? 16 : 12;
template <class T>
constexpr int kPerVec = 16 / static_cast<int>(sizeof(T));  // values per 16-byte vector

__device__ __forceinline__ uint32_t bin_of_key(uint32_t key, uint32_t bins) { return __umulhi(key, bins); }

template <class T>
__device__ __forceinline__ uint32_t key_of(T v) {
  return static_cast<uint32_t>(v) << kKeyShift<T>;
}

// The key of value k (0 to kPerVec - 1, a constant after unrolling) of a 16-byte vector.
template <class T>
__device__ __forceinline__ uint32_t key_at(uint4 v, int k) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
  if constexpr (sizeof(T) == 2)
    return (k & 1) ? (w[k / 2] & 0xFFFF0000u) : (w[k / 2] << 16);
  else
    return w[k] << 12;
}

// [in, in + n) = a head up to the first 16-byte boundary, whole vectors, and a
// tail (fewer than one vector each side). The host computes the same split.
struct Split {
  int64_t head;  // values before the first vector
  int64_t nvec;  // whole vectors
  int64_t tail;  // index of the first value after the vectors
};
template <class T>
__host__ __device__ Split split16(const T* in, int64_t n) {
  const int64_t misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(in) & 15) / sizeof(T);
  const int64_t to_boundary = misaligned ? kPerVec<T> - misaligned : 0;
  const int64_t head = n < to_boundary ? n : to_boundary;
  const int64_t nvec = (n - head) / kPerVec<T>;
  return {head, nvec, head + nvec * kPerVec<T>};
}

// Every value of the grid's share of [in, in + n) into `counter`. The main loop
// loads kUnroll vectors per thread, then hands them to counter.step(v) with the whole
// warp present (the loop bounds are the same for all its lanes); edge values and the
// last vectors go to counter.add(key) one at a time.
template <class T, int kThreads, class Counter>
__device__ void count_input(const T* __restrict__ in, int64_t n, Counter& counter) {
  const Split s = split16(in, n);
  const int64_t threads = int64_t{gridDim.x} * kThreads;
  const int64_t tid = int64_t{blockIdx.x} * kThreads + threadIdx.x;
  const int lane = threadIdx.x % kWarp;
  if (tid < s.head) counter.add(key_of(in[tid]));
  if (tid < n - s.tail) counter.add(key_of(in[s.tail + tid]));
  const uint4* vec = reinterpret_cast<const uint4*>(in + s.head);
  int64_t first = tid - lane;  // the warp's first vector
  for (; first + (kWarp - 1) + (kUnroll - 1) * threads < s.nvec; first += kUnroll * threads) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(&vec[first + lane + u * threads]);
    counter.step(v);
  }
  for (int64_t i = first + lane; i < s.nvec; i += threads) {
    const uint4 v = __ldg(&vec[i]);
#pragma unroll
    for (int k = 0; k < kPerVec<T>; ++k) counter.add(key_at<T>(v, k));
  }
}

// counter.add(key) for every value of v[]: the step of a counter without a warp-wide part.
template <class T, class Counter>
__device__ __forceinline__ void add_all(Counter& counter, const uint4 (&v)[kUnroll]) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
#pragma unroll
    for (int k = 0; k < kPerVec<T>; ++k) counter.add(key_at<T>(v[u], k));
}

// --- packed 16-bit counters ----------------------------------------------------------

// Bin b lives in the low (b even) or high (b odd) half of word b / 2. An add of k
// (1 to 0xFFFF) is one 32-bit atomicAdd of k << 0 or k << 16, and the word it returns
// tells this thread alone whether ITS add wrapped the field past 0xFFFF:
//   low field wrapped:  the field lost 2^16 and the carry put 1 into the high field.
//                       We hand 2^16 to hist[b], and -1 to hist[b + 1]; if that carry
//                       itself wrapped the high field (it was 0xFFFF), +2^16 too.
//   high field wrapped: the carry left the word; we hand 2^16 to hist[b].
// Nothing is ever subtracted in shared memory and no thread waits for another: every
// wrap, whoever causes it, is seen by exactly one atomic's return value. At the end,
// hist[b] plus the field equals the count. (hist is 64-bit and adds mod 2^64, so a
// -1 arriving before its +2^16 is harmless.) `local` indexes `words`; `bin` is the
// same bin in the whole histogram of `bins` bins (they differ in a cluster or slice,
// which always start at an even bin).
__device__ __noinline__ void hand_over_wrap(uint32_t bin, uint32_t old, uint32_t bins, HistCount* hist) {
  atomicAdd(&hist[bin], HistCount{0x10000});
  if ((bin & 1) == 0 && bin + 1 < bins)
    atomicAdd(&hist[bin + 1], (old >> 16) == 0xFFFFu ? HistCount{0xFFFF} : ~HistCount{0});
}

// packed_add in two halves: the atomic, and the look at the word it returned.
__device__ __forceinline__ uint32_t packed_issue(uint32_t* words, uint32_t local, uint32_t k) {
  return atomicAdd(&words[local >> 1], k << ((local & 1) * 16));
}
__device__ __forceinline__ bool packed_wrapped(uint32_t old, uint32_t local, uint32_t k) {
  return ((old >> ((local & 1) * 16)) & 0xFFFFu) + k > 0xFFFFu;
}

__device__ __forceinline__ void packed_add(uint32_t* words, uint32_t local, uint32_t bin, uint32_t k, uint32_t bins,
                                           HistCount* hist) {
  const uint32_t old = packed_issue(words, local, k);
  if (packed_wrapped(old, local, k)) hand_over_wrap(bin, old, bins, hist);
}

// +1 for every value of v[] (with kSkipHot, all but those of bin `hot`, which it
// only counts), kBatchValues atomics at a time. A +1 wraps a field only if the field
// was 0xFFFF, so the batch first ORs the words its atomics returned: only when some
// field in them is 2^15 or more (rare unless one bin is hot) does it look at each
// word exactly. packed_add's look costs about as many instructions as the atomic.
template <class T, bool kSkipHot>
__device__ __forceinline__ uint32_t packed_add_batch(uint32_t* words, uint32_t bins, HistCount* hist,
                                                     const uint4 (&v)[kUnroll], uint32_t hot = kNoBin) {
  constexpr int kValues = kUnroll * kPerVec<T>;
  static_assert(kValues % kBatchValues == 0, "whole batches per step");
  const auto bin_at = [&](int i) { return bin_of_key(key_at<T>(v[i / kPerVec<T>], i % kPerVec<T>), bins); };
  uint32_t hits = 0;
#pragma unroll
  for (int first = 0; first < kValues; first += kBatchValues) {
    uint32_t old[kBatchValues];
    uint32_t seen = 0;
#pragma unroll
    for (int i = 0; i < kBatchValues; ++i) {
      const uint32_t bin = bin_at(first + i);
      const bool counted = !kSkipHot || bin != hot;
      hits += !counted;
      old[i] = counted ? packed_issue(words, bin, 1) : 0u;
      seen |= old[i];
    }
    if (seen & 0x80008000u) {
#pragma unroll
      for (int i = 0; i < kBatchValues; ++i) {
        const uint32_t bin = bin_at(first + i);
        if (packed_wrapped(old[i], bin, 1)) hand_over_wrap(bin, old[i], bins, hist);
      }
    }
  }
  return hits;
}

// --- adding up the blocks' counters ----------------------------------------------------

// The end of every shared-memory kernel: the block stores its counters as row
// blockIdx.x of `partials` (plain coalesced stores, no atomics) and says where
// the row starts in the whole histogram (in words). add_partials then adds the
// rows up: one atomic per nonzero word per kRowsPerGroup rows, where adding every
// block's counters to global memory directly would take one per bin per block.
__device__ void store_row(const uint32_t* words, int64_t nwords, uint32_t* partials, uint32_t* row_base,
                          int64_t base) {
  uint32_t* row = partials + int64_t{blockIdx.x} * nwords;
  for (int64_t i = threadIdx.x; i < nwords; i += blockDim.x) row[i] = words[i];
  if (threadIdx.x == 0) row_base[blockIdx.x] = static_cast<uint32_t>(base);
}

// Word w of the whole histogram: the sum of the rows that cover it, kRowsPerGroup rows
// per blockIdx.y. Packed words hold bins 2w and 2w + 1.
template <bool kPacked>
__global__ void __launch_bounds__(kAddThreads)
add_partials(const uint32_t* __restrict__ partials, const uint32_t* __restrict__ row_base, int64_t rows,
             int64_t row_words, int64_t words, uint32_t bins, HistCount* __restrict__ hist) {
  const int64_t w = int64_t{blockIdx.x} * kAddThreads + threadIdx.x;
  if (w >= words) return;
  const int64_t first = int64_t{blockIdx.y} * kRowsPerGroup;
  const int64_t last = first + kRowsPerGroup < rows ? first + kRowsPerGroup : rows;
  HistCount lo = 0, hi = 0;
#pragma unroll 8
  for (int64_t r = first; r < last; ++r) {
    const int64_t at = w - static_cast<int64_t>(row_base[r]);
    if (at >= 0 && at < row_words) {
      const uint32_t x = partials[r * row_words + at];
      lo += kPacked ? (x & 0xFFFFu) : x;
      hi += kPacked ? (x >> 16) : 0u;
    }
  }
  const int64_t bin = kPacked ? 2 * w : w;
  if (lo) atomicAdd(&hist[bin], lo);
  if (hi && bin + 1 < bins) atomicAdd(&hist[bin + 1], hi);
}

template <bool kPacked>
void add_rows(const uint32_t* partials, const uint32_t* row_base, int64_t rows, int64_t row_words, uint32_t bins,
              HistCount* hist) {
  const int64_t words = kPacked ? (int64_t{bins} + 1) / 2 : bins;
  const dim3 grid(static_cast<unsigned>(sw::ceil_div(words, kAddThreads)),
                  static_cast<unsigned>(sw::ceil_div(rows, kRowsPerGroup)));
  add_partials<kPacked><<<grid, kAddThreads>>>(partials, row_base, rows, row_words, words, bins, hist);
  CHECK_LAUNCH();
}

// --- what every launcher needs -----------------------------------------------------------

// Device buffers the steps reuse: the blocks' rows of counters and partition's
// scratch. They grow on first use (in the checked runs, never while timing), and
// start poisoned so that no kernel can rely on their contents.
struct Workspace {
  sw::DeviceBuffer<uint32_t> partials, row_base;
  sw::DeviceBuffer<uint16_t> part_values, part_header;
  sw::DeviceBuffer<unsigned long long> part_total;  // [kMaxParts]: values per slice
  sw::DeviceBuffer<unsigned> part_next;             // [kMaxParts]: pass 2's next tile per slice

  template <class U>
  static U* grow(sw::DeviceBuffer<U>& b, int64_t count) {
    if (b.count() < count) {
      b.allocate(count);
      sw::poison(b.get(), b.bytes());
    }
    return b.get();
  }
  void poison() {
    for (auto* b : {&partials, &row_base}) if (b->count()) sw::poison(b->get(), b->bytes());
    for (auto* b : {&part_values, &part_header}) if (b->count()) sw::poison(b->get(), b->bytes());
    if (part_total.count()) sw::poison(part_total.get(), part_total.bytes());
    if (part_next.count()) sw::poison(part_next.get(), part_next.bytes());
  }
};

// One histogram to compute: n values of value_bits bits at `in` into `bins` 64-bit
// totals at `hist` (the launch zeroes them: that is part of the job).
struct Job {
  const void* in;
  int64_t n;
  int value_bits;  // 16 or 32
  uint32_t bins;
  int cluster;     // blocks per cluster, for the cluster steps
  HistCount* hist;
  Workspace* ws;
};

// The largest dynamic shared memory one block may opt in to (227 KiB on H100 and H200).
int64_t smem_optin() {
  static int64_t bytes = -1;
  if (bytes < 0) {
    int device = 0, v = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    bytes = v;
  }
  return bytes;
}

bool has_clusters() { return sw::cc_major() >= 9; }

// Lets `kernel` use all the shared memory a block can opt in to (less its static part).
template <class Kernel>
void allow_all_smem(Kernel kernel) {
  cudaFuncAttributes a = {};
  CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(smem_optin() - static_cast<int64_t>(a.sharedSizeBytes))));
}

// One full wave of `kernel` (blocks of `threads`, `smem` bytes of dynamic shared
// memory each): asked once per kernel and size.
template <class Kernel>
int64_t wave(Kernel kernel, int threads, size_t smem) {
  static std::map<std::pair<const void*, size_t>, int64_t> known;
  const auto key = std::make_pair(reinterpret_cast<const void*>(kernel), smem);
  const auto it = known.find(key);
  if (it != known.end()) return it->second;
  allow_all_smem(kernel);
  return known[key] = sw::resident_grid(kernel, threads, smem);
}

void zero_hist(const Job& j) { CUDA_CHECK(cudaMemsetAsync(j.hist, 0, sizeof(HistCount) * j.bins)); }

int64_t packed_words(uint32_t bins) { return (int64_t{bins} + 1) / 2; }

// =========================================================================================
// Step 1: global-atomic. Every value adds 1 to its bin in global memory.
// =========================================================================================

template <class T>
struct GlobalCounter {
  HistCount* hist;
  uint32_t bins;
  __device__ void add(uint32_t key) { atomicAdd(&hist[bin_of_key(key, bins)], HistCount{1}); }
  __device__ void step(const uint4 (&v)[kUnroll]) { add_all<T>(*this, v); }
};

template <class T>
__global__ void __launch_bounds__(kGlobalThreads)
count_global_atomic(const T* __restrict__ in, int64_t n, uint32_t bins, HistCount* __restrict__ hist) {
  GlobalCounter<T> counter{hist, bins};
  count_input<T, kGlobalThreads>(in, n, counter);
}

template <class T>
void global_atomic(const Job& j) {
  const int64_t grid = wave(count_global_atomic<T>, kGlobalThreads, 0);
  zero_hist(j);
  count_global_atomic<T><<<grid, kGlobalThreads>>>(static_cast<const T*>(j.in), j.n, j.bins, j.hist);
  CHECK_LAUNCH();
}
void launch_global_atomic(const Job& j) { j.value_bits == 16 ? global_atomic<uint16_t>(j) : global_atomic<uint32_t>(j); }

// =========================================================================================
// Step 2: global-match. The lanes of a warp that hold the same bin find each other
// (__match_any_sync) and the first of them adds their number: one atomic per distinct
// bin per warp instruction. Edges and the last vectors add plainly.
// =========================================================================================

template <class T>
struct MatchCounter {
  HistCount* hist;
  uint32_t bins;
  __device__ void add(uint32_t key) { atomicAdd(&hist[bin_of_key(key, bins)], HistCount{1}); }
  __device__ void step(const uint4 (&v)[kUnroll]) {  // the whole warp is here
    const int lane = threadIdx.x % kWarp;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int k = 0; k < kPerVec<T>; ++k) {
        const uint32_t bin = bin_of_key(key_at<T>(v[u], k), bins);
        const unsigned peers = __match_any_sync(kFullMask, bin);
        if (lane == __ffs(peers) - 1) atomicAdd(&hist[bin], HistCount{static_cast<unsigned>(__popc(peers))});
      }
  }
};

template <class T>
__global__ void __launch_bounds__(kGlobalThreads)
count_global_match(const T* __restrict__ in, int64_t n, uint32_t bins, HistCount* __restrict__ hist) {
  MatchCounter<T> counter{hist, bins};
  count_input<T, kGlobalThreads>(in, n, counter);
}

template <class T>
void global_match(const Job& j) {
  const int64_t grid = wave(count_global_match<T>, kGlobalThreads, 0);
  zero_hist(j);
  count_global_match<T><<<grid, kGlobalThreads>>>(static_cast<const T*>(j.in), j.n, j.bins, j.hist);
  CHECK_LAUNCH();
}
void launch_global_match(const Job& j) { j.value_bits == 16 ? global_match<uint16_t>(j) : global_match<uint32_t>(j); }

// =========================================================================================
// Step 3: shared32. One 32-bit histogram per block in shared memory: +1 atomics that
// stay in the SM (the hardware merges lanes adding 1 to the same word), then the
// block's row of counters goes to memory once.
// =========================================================================================

template <class T>
struct Shared32Counter {
  uint32_t* counts;
  uint32_t bins;
  __device__ void add(uint32_t key) { atomicAdd(&counts[bin_of_key(key, bins)], 1u); }
  __device__ void step(const uint4 (&v)[kUnroll]) { add_all<T>(*this, v); }
};

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
count_shared32(const T* __restrict__ in, int64_t n, uint32_t bins, uint32_t* __restrict__ partials,
               uint32_t* __restrict__ row_base) {
  extern __shared__ uint32_t counts[];  // [bins]
  for (int64_t i = threadIdx.x; i < bins; i += kBlockThreads) counts[i] = 0;
  __syncthreads();
  Shared32Counter<T> counter{counts, bins};
  count_input<T, kBlockThreads>(in, n, counter);
  __syncthreads();
  store_row(counts, bins, partials, row_base, 0);
}

bool fits_shared32(const Job& j) { return int64_t{j.bins} * 4 <= smem_optin(); }

template <class T>
void shared32(const Job& j) {
  const size_t smem = sizeof(uint32_t) * j.bins;
  const int64_t grid = std::max(wave(count_shared32<T>, kBlockThreads, smem), sw::ceil_div(j.n, kMaxValuesPerBlock));
  uint32_t* partials = Workspace::grow(j.ws->partials, grid * j.bins);
  uint32_t* row_base = Workspace::grow(j.ws->row_base, grid);
  zero_hist(j);
  count_shared32<T><<<grid, kBlockThreads, smem>>>(static_cast<const T*>(j.in), j.n, j.bins, partials, row_base);
  CHECK_LAUNCH();
  add_rows<false>(partials, row_base, grid, j.bins, j.bins, j.hist);
}
void launch_shared32(const Job& j) { j.value_bits == 16 ? shared32<uint16_t>(j) : shared32<uint32_t>(j); }

// =========================================================================================
// Step 4: packed16. Two 16-bit counters per word (see packed_add): 65,536 bins in
// 128 KiB, up to ~116K bins in 227 KiB. The atomic must now return the old word, and
// lanes adding to the same word are served one after another.
// =========================================================================================

template <class T>
struct Packed16Counter {
  uint32_t* words;
  uint32_t bins;
  HistCount* hist;
  __device__ void add(uint32_t key) {
    const uint32_t bin = bin_of_key(key, bins);
    packed_add(words, bin, bin, 1, bins, hist);
  }
  __device__ void step(const uint4 (&v)[kUnroll]) { add_all<T>(*this, v); }
};

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
count_packed16(const T* __restrict__ in, int64_t n, uint32_t bins, HistCount* __restrict__ hist,
               uint32_t* __restrict__ partials, uint32_t* __restrict__ row_base) {
  extern __shared__ uint32_t words[];  // [(bins + 1) / 2]
  const int64_t nwords = (int64_t{bins} + 1) / 2;
  for (int64_t i = threadIdx.x; i < nwords; i += kBlockThreads) words[i] = 0;
  __syncthreads();
  Packed16Counter<T> counter{words, bins, hist};
  count_input<T, kBlockThreads>(in, n, counter);
  __syncthreads();
  store_row(words, nwords, partials, row_base, 0);
}

bool fits_packed16(const Job& j) { return packed_words(j.bins) * 4 <= smem_optin(); }

template <class T, class Kernel>
void packed16_with(const Job& j, Kernel kernel) {
  const int64_t nwords = packed_words(j.bins);
  const size_t smem = sizeof(uint32_t) * nwords;
  const int64_t grid = wave(kernel, kBlockThreads, smem);
  uint32_t* partials = Workspace::grow(j.ws->partials, grid * nwords);
  uint32_t* row_base = Workspace::grow(j.ws->row_base, grid);
  zero_hist(j);
  kernel<<<grid, kBlockThreads, smem>>>(static_cast<const T*>(j.in), j.n, j.bins, j.hist, partials, row_base);
  CHECK_LAUNCH();
  add_rows<true>(partials, row_base, grid, nwords, j.bins, j.hist);
}
void launch_packed16(const Job& j) {
  j.value_bits == 16 ? packed16_with<uint16_t>(j, count_packed16<uint16_t>)
                     : packed16_with<uint32_t>(j, count_packed16<uint32_t>);
}

// =========================================================================================
// Step 5: packed16-batch. The same counters; the main loop's values go through
// packed_add_batch: kBatchValues atomics, then one test of all their returned words,
// instead of a test and a branch after every atomic.
// =========================================================================================

template <class T>
struct Packed16BatchCounter {
  uint32_t* words;
  uint32_t bins;
  HistCount* hist;
  __device__ void add(uint32_t key) {
    const uint32_t bin = bin_of_key(key, bins);
    packed_add(words, bin, bin, 1, bins, hist);
  }
  __device__ void step(const uint4 (&v)[kUnroll]) { packed_add_batch<T, false>(words, bins, hist, v); }
};

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
count_packed16_batch(const T* __restrict__ in, int64_t n, uint32_t bins, HistCount* __restrict__ hist,
                     uint32_t* __restrict__ partials, uint32_t* __restrict__ row_base) {
  extern __shared__ uint32_t words[];  // [(bins + 1) / 2]
  const int64_t nwords = (int64_t{bins} + 1) / 2;
  for (int64_t i = threadIdx.x; i < nwords; i += kBlockThreads) words[i] = 0;
  __syncthreads();
  Packed16BatchCounter<T> counter{words, bins, hist};
  count_input<T, kBlockThreads>(in, n, counter);
  __syncthreads();
  store_row(words, nwords, partials, row_base, 0);
}

void launch_packed16_batch(const Job& j) {
  j.value_bits == 16 ? packed16_with<uint16_t>(j, count_packed16_batch<uint16_t>)
                     : packed16_with<uint32_t>(j, count_packed16_batch<uint32_t>);
}

// =========================================================================================
// Step 6: packed16-hot. Once per step of the main loop the warp votes: when at least
// kHotLanes lanes hold lane 0's first bin, that bin becomes the warp's hot bin (until
// another wins a vote, or fewer than kColdLanes lanes' first values hold it). Each
// lane then counts the hot bin in a register and sends only the other values to
// shared memory (packed_add_batch, as packed16-batch); the register count goes there
// in one add of up to kFlushAt + 31, when it grows large, when the hot bin changes,
// and at the end. Uniform values rarely elect anything: a warp without a hot bin
// takes packed16-batch's path, without a compare per value.
// =========================================================================================

template <class T>
struct PackedHotCounter {
  uint32_t* words;
  uint32_t bins;
  HistCount* hist;
  uint32_t hot = kNoBin;  // the same in every lane of the warp
  uint32_t count = 0;     // this lane's values of bin `hot` not yet in shared memory

  __device__ void flush() {
    if (count) packed_add(words, hot, hot, count, bins, hist);
    count = 0;
  }
  __device__ void add(uint32_t key) {
    const uint32_t bin = bin_of_key(key, bins);
    if (bin != hot) {
      packed_add(words, bin, bin, 1, bins, hist);
    } else if (++count >= kFlushAt) {
      flush();
    }
  }
  __device__ void elect(uint32_t mine) {  // the whole warp is here
    const uint32_t lead = __shfl_sync(kFullMask, mine, 0);
    const unsigned agree = __ballot_sync(kFullMask, mine == lead);
    if (lead != hot && __popc(agree) >= kHotLanes) {
      flush();
      hot = lead;
    } else if (hot != kNoBin && __popc(__ballot_sync(kFullMask, mine == hot)) < kColdLanes) {
      flush();  // the hot bin has cooled: its compare per value no longer pays
      hot = kNoBin;
    }
  }
  __device__ void step(const uint4 (&v)[kUnroll]) {
    elect(bin_of_key(key_at<T>(v[0], 0), bins));
    if (hot == kNoBin) {  // the same in the whole warp: no compare per value while nothing is hot
      packed_add_batch<T, false>(words, bins, hist, v);
      return;
    }
    count += packed_add_batch<T, true>(words, bins, hist, v, hot);
    if (count >= kFlushAt) flush();  // at most kFlushAt - 1 + kUnroll * 8 < 2^16
  }
};

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
count_packed16_hot(const T* __restrict__ in, int64_t n, uint32_t bins, HistCount* __restrict__ hist,
                   uint32_t* __restrict__ partials, uint32_t* __restrict__ row_base) {
  extern __shared__ uint32_t words[];  // [(bins + 1) / 2]
  const int64_t nwords = (int64_t{bins} + 1) / 2;
  for (int64_t i = threadIdx.x; i < nwords; i += kBlockThreads) words[i] = 0;
  __syncthreads();
  PackedHotCounter<T> counter{words, bins, hist};
  count_input<T, kBlockThreads>(in, n, counter);
  counter.flush();
  __syncthreads();
  store_row(words, nwords, partials, row_base, 0);
}

void launch_packed16_hot(const Job& j) {
  j.value_bits == 16 ? packed16_with<uint16_t>(j, count_packed16_hot<uint16_t>)
                     : packed16_with<uint32_t>(j, count_packed16_hot<uint32_t>);
}

// =========================================================================================
// Steps 7 and 8: cluster-dsmem and cluster-packed16, the CUDA Programming Guide's
// distributed shared memory histogram. A cluster of k blocks splits the bins into k
// slices, one per block; every value is an atomic add on the shared memory of the
// block that owns its bin, through cluster.map_shared_rank. cluster.sync() after the
// zeroing (no add lands on uncleared memory) and before any block stores its slice
// or exits (no add still in flight to it). The grid: as many clusters as fit at once
// (cudaOccupancyMaxActiveClusters), striding over the input.
// =========================================================================================

// Clusters exist from compute capability 9.0; below it these are never called (the
// cluster steps are skipped) but must compile.
__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#endif
}
__device__ __forceinline__ unsigned cluster_rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().block_rank();
#else
  return 0;
#endif
}
__device__ __forceinline__ uint32_t* cluster_words(uint32_t* words, unsigned rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().map_shared_rank(words, rank);
#else
  return words;
#endif
}

template <class T, bool kPacked>
struct ClusterCounter {
  uint32_t* words;
  uint32_t bins, slice;  // bins per block (even when packed)
  HistCount* hist;
  __device__ void add(uint32_t key) {
    const uint32_t bin = bin_of_key(key, bins);
    const uint32_t owner = bin / slice, local = bin - owner * slice;
    uint32_t* theirs = cluster_words(words, owner);
    if (kPacked)
      packed_add(theirs, local, bin, 1, bins, hist);
    else
      atomicAdd(&theirs[local], 1u);
  }
  __device__ void step(const uint4 (&v)[kUnroll]) { add_all<T>(*this, v); }
};

template <class T, bool kPacked>
__device__ void cluster_histogram(const T* __restrict__ in, int64_t n, uint32_t bins, uint32_t slice,
                                  HistCount* __restrict__ hist, uint32_t* __restrict__ partials,
                                  uint32_t* __restrict__ row_base) {
  extern __shared__ uint32_t words[];  // this block's slice of the bins
  const int64_t nwords = kPacked ? slice / 2 : slice;
  for (int64_t i = threadIdx.x; i < nwords; i += kBlockThreads) words[i] = 0;
  cluster_sync();
  ClusterCounter<T, kPacked> counter{words, bins, slice, hist};
  count_input<T, kBlockThreads>(in, n, counter);
  cluster_sync();
  store_row(words, nwords, partials, row_base, int64_t{cluster_rank()} * nwords);
}

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
count_cluster_dsmem(const T* __restrict__ in, int64_t n, uint32_t bins, uint32_t slice, HistCount* __restrict__ hist,
                    uint32_t* __restrict__ partials, uint32_t* __restrict__ row_base) {
  cluster_histogram<T, false>(in, n, bins, slice, hist, partials, row_base);
}

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
count_cluster_packed16(const T* __restrict__ in, int64_t n, uint32_t bins, uint32_t slice,
                       HistCount* __restrict__ hist, uint32_t* __restrict__ partials,
                       uint32_t* __restrict__ row_base) {
  cluster_histogram<T, true>(in, n, bins, slice, hist, partials, row_base);
}

// A block's slice of the bins, in bins (even when packed) and in words.
struct Slice {
  uint32_t bins;
  int64_t words;
};
Slice cluster_slice(uint32_t bins, int k, bool packed) {
  uint32_t slice = static_cast<uint32_t>(sw::ceil_div(bins, k));
  if (packed) slice += slice & 1;
  return {slice, packed ? slice / 2 : slice};
}

cudaLaunchConfig_t cluster_config(cudaLaunchAttribute* attr, int64_t grid, int k, size_t smem) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(grid));
  config.blockDim = dim3(kBlockThreads);
  config.dynamicSmemBytes = smem;
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = static_cast<unsigned>(k);
  attr->val.clusterDim.y = 1;
  attr->val.clusterDim.z = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  return config;
}

// Clusters of k blocks with `smem` bytes each that fit on the GPU at once; 0 when
// none does (too much shared memory, or a size this GPU does not allow).
template <class Kernel>
int active_clusters(Kernel kernel, int k, size_t smem) {
  static std::map<std::tuple<const void*, int, size_t>, int> known;
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), k, smem);
  const auto it = known.find(key);
  if (it != known.end()) return it->second;
  int clusters = 0;
  if (has_clusters() && static_cast<int64_t>(smem) <= smem_optin()) {
    allow_all_smem(kernel);
    bool allowed = true;
    if (k > 8 && cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
      cudaGetLastError();  // clear it: this GPU allows no more than 8
      allowed = false;
    }
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t config = cluster_config(&attr, k, k, smem);
    if (allowed && cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
      cudaGetLastError();
      clusters = 0;
    }
  }
  return known[key] = clusters;
}

template <class T, bool kPacked, class Kernel>
void cluster_launch(const Job& j, Kernel kernel) {
  const Slice s = cluster_slice(j.bins, j.cluster, kPacked);
  const size_t smem = sizeof(uint32_t) * s.words;
  // 32-bit counters: no cluster may see 2^32 values.
  const int64_t clusters = std::max<int64_t>(active_clusters(kernel, j.cluster, smem),
                                             kPacked ? 1 : sw::ceil_div(j.n, kMaxValuesPerBlock));
  const int64_t grid = clusters * j.cluster;
  uint32_t* partials = Workspace::grow(j.ws->partials, grid * s.words);
  uint32_t* row_base = Workspace::grow(j.ws->row_base, grid);
  zero_hist(j);
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t config = cluster_config(&attr, grid, j.cluster, smem);
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<const T*>(j.in), j.n, j.bins, s.bins, j.hist, partials,
                                row_base));
  CHECK_LAUNCH();
  add_rows<kPacked>(partials, row_base, grid, s.words, j.bins, j.hist);
}

// The clusters of the job's size that fit at once (the grid of the cluster steps).
int clusters_for(const Job& j, bool packed) {
  const size_t smem = sizeof(uint32_t) * cluster_slice(j.bins, j.cluster, packed).words;
  if (packed)
    return j.value_bits == 16 ? active_clusters(count_cluster_packed16<uint16_t>, j.cluster, smem)
                              : active_clusters(count_cluster_packed16<uint32_t>, j.cluster, smem);
  return j.value_bits == 16 ? active_clusters(count_cluster_dsmem<uint16_t>, j.cluster, smem)
                            : active_clusters(count_cluster_dsmem<uint32_t>, j.cluster, smem);
}
template <bool kPacked>
bool fits_cluster(const Job& j) {
  return clusters_for(j, kPacked) > 0;
}

void launch_cluster_dsmem(const Job& j) {
  j.value_bits == 16 ? cluster_launch<uint16_t, false>(j, count_cluster_dsmem<uint16_t>)
                     : cluster_launch<uint32_t, false>(j, count_cluster_dsmem<uint32_t>);
}
void launch_cluster_packed16(const Job& j) {
  j.value_bits == 16 ? cluster_launch<uint16_t, true>(j, count_cluster_packed16<uint16_t>)
                     : cluster_launch<uint32_t, true>(j, count_cluster_packed16<uint32_t>);
}

// =========================================================================================
// Step 9: partition. Bins beyond one SM are split into slices of 2^16 bins (a slice's
// packed counters fill 128 KiB). Pass 1 reads each tile of 8192 values, counts the
// warp's hot bin in registers (as packed16-hot) and sorts the other values by slice in
// shared memory; the tile's sorted values, as 16-bit indices within their slice, go
// to the tile's own place in global memory with 16-byte stores, with the slices'
// offsets in a small header. Pass 2 gives every slice blocks in proportion to its
// values; each block holds its slice's counters and its warps take tiles from a
// per-slice counter, counting the slice's part of each tile with packed16-hot.
// DRAM traffic per 32-bit value: 4 bytes read, 2 written, 2 read again.
// =========================================================================================

// The warp's counts of its hot bin (the same bin in every lane) in one global atomic:
// one per lane would queue up to 32 adds on one L2 address. The whole warp calls it.
__device__ void add_warp_count(HistCount* hist, uint32_t hot, uint32_t count) {
  uint32_t sum = count;  // lanes hold at most kHotCountLimit each: the sum fits 32 bits
#pragma unroll
  for (int d = kWarp / 2; d > 0; d /= 2) sum += __shfl_xor_sync(kFullMask, sum, d);
  if (threadIdx.x % kWarp == 0 && sum) atomicAdd(&hist[hot], HistCount{sum});
}

// Pass 1. `values` holds kTileValues 16-bit entries per tile; header[t][r] is where
// slice r's entries of tile t start (header[t][parts] = how many the tile kept).
template <class T>
__global__ void __launch_bounds__(kScatterThreads)
scatter_partitions(const T* __restrict__ in, int64_t n, uint32_t bins, int slice_log2, int parts,
                   uint16_t* __restrict__ values, uint16_t* __restrict__ header,
                   unsigned long long* __restrict__ part_total, HistCount* __restrict__ hist) {
  constexpr int kVecs = kTileValuesPerThread / kPerVec<T>;  // vectors per thread per tile
  constexpr int kTileVecs = kScatterThreads * kVecs;
  __shared__ uint32_t count[kMaxParts];       // the tile's values per slice, then positions in it
  __shared__ uint32_t offset[kMaxParts + 1];  // where each slice starts in the sorted tile
  __shared__ __align__(16) uint16_t stage[kTileValues];
  const int lane = threadIdx.x % kWarp;
  const uint32_t slice_mask = (1u << slice_log2) - 1;
  const Split s = split16(in, n);
  const int64_t tid = int64_t{blockIdx.x} * kScatterThreads + threadIdx.x;
  if (tid < s.head) atomicAdd(&hist[bin_of_key(key_of(in[tid]), bins)], HistCount{1});  // edges: straight to memory
  if (tid < n - s.tail) atomicAdd(&hist[bin_of_key(key_of(in[s.tail + tid]), bins)], HistCount{1});
  for (int r = threadIdx.x; r < kMaxParts; r += kScatterThreads) count[r] = 0;
  __syncthreads();
  const uint4* vec = reinterpret_cast<const uint4*>(in + s.head);
  const int64_t tiles = sw::ceil_div(s.nvec, kTileVecs);
  uint32_t hot = kNoBin, hot_count = 0;  // as in packed16-hot, but the count goes to global memory
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {  // the same trip count for the whole block
    uint4 v[kVecs];
    bool ok[kVecs];
#pragma unroll
    for (int u = 0; u < kVecs; ++u) {
      const int64_t i = t * kTileVecs + int64_t{u} * kScatterThreads + threadIdx.x;
      ok[u] = i < s.nvec;
      v[u] = ok[u] ? __ldg(&vec[i]) : make_uint4(0, 0, 0, 0);
    }
    // The vote of packed16-hot.
    const uint32_t mine = ok[0] ? bin_of_key(key_at<T>(v[0], 0), bins) : kNoBin;
    const uint32_t lead = __shfl_sync(kFullMask, mine, 0);
    const unsigned agree = __ballot_sync(kFullMask, mine == lead);
    if (lead != kNoBin && lead != hot && __popc(agree) >= kHotLanes) {
      add_warp_count(hist, hot, hot_count);
      hot = lead;
      hot_count = 0;
    }
    // Each value: the hot bin in the register, the others take a place in their slice.
    uint32_t where[kTileValuesPerThread];  // slice << 16 | place in the slice, or kNoBin
    uint32_t local[kTileValuesPerThread];  // the bin's index in its slice
#pragma unroll
    for (int u = 0; u < kVecs; ++u)
#pragma unroll
      for (int k = 0; k < kPerVec<T>; ++k) {
        const int j = u * kPerVec<T> + k;
        const uint32_t bin = bin_of_key(key_at<T>(v[u], k), bins);
        where[j] = kNoBin;
        local[j] = bin & slice_mask;
        if (ok[u]) {
          if (bin == hot) {
            ++hot_count;
          } else {
            const uint32_t r = bin >> slice_log2;
            where[j] = (r << 16) | atomicAdd(&count[r], 1u);
          }
        }
      }
    if (hot_count >= kHotCountLimit) {
      atomicAdd(&hist[hot], HistCount{hot_count});
      hot_count = 0;
    }
    __syncthreads();  // 1: the tile's counts are complete
    if (threadIdx.x < kWarp) {  // warp 0: offsets by a scan over the slices (two per lane), totals
      const uint32_t a = lane < parts ? count[lane] : 0;
      const uint32_t b = lane + kWarp < parts ? count[lane + kWarp] : 0;
      uint32_t sa = a, sb = b;
#pragma unroll
      for (int d = 1; d < kWarp; d *= 2) {
        const uint32_t ya = __shfl_up_sync(kFullMask, sa, d), yb = __shfl_up_sync(kFullMask, sb, d);
        if (lane >= d) sa += ya, sb += yb;
      }
      const uint32_t first_half = __shfl_sync(kFullMask, sa, kWarp - 1);
      if (lane == 0) offset[0] = 0;
      offset[lane + 1] = sa;
      offset[lane + kWarp + 1] = first_half + sb;
      if (a) atomicAdd(&part_total[lane], static_cast<unsigned long long>(a));
      if (b) atomicAdd(&part_total[lane + kWarp], static_cast<unsigned long long>(b));
    }
    __syncthreads();  // 2: offsets known; count[] read
#pragma unroll
    for (int j = 0; j < kTileValuesPerThread; ++j)
      if (where[j] != kNoBin) stage[offset[where[j] >> 16] + (where[j] & 0xFFFFu)] = static_cast<uint16_t>(local[j]);
    for (int r = threadIdx.x; r <= parts; r += kScatterThreads) header[t * (parts + 1) + r] = static_cast<uint16_t>(offset[r]);
    for (int r = threadIdx.x; r < kMaxParts; r += kScatterThreads) count[r] = 0;
    __syncthreads();  // 3: the tile is sorted in `stage`
    const int64_t kept = offset[parts];
    uint4* out = reinterpret_cast<uint4*>(values + t * kTileValues);
    const uint4* sorted = reinterpret_cast<const uint4*>(stage);
    for (int64_t i = threadIdx.x; i < sw::ceil_div(kept, 8); i += kScatterThreads) out[i] = sorted[i];
  }
  add_warp_count(hist, hot, hot_count);
}

// Pass 2's choice for block g of `blocks`: one block for each slice with values,
// the others spread in proportion to the values (block g stands for the point
// (g - busy + 1/2) / spare of all values).
__device__ int pick_slice(const unsigned long long* total, int parts, unsigned g, unsigned blocks) {
  int busy = 0;
  unsigned long long sum = 0;
  for (int r = 0; r < parts; ++r) {
    busy += total[r] > 0;
    sum += total[r];
  }
  if (busy == 0) return static_cast<int>(g % parts);
  if (g < static_cast<unsigned>(busy)) {
    for (int r = 0, seen = 0; r < parts; ++r)
      if (total[r] > 0 && seen++ == static_cast<int>(g)) return r;
  }
  const unsigned long long spare = blocks - busy;
  const unsigned long long point = ((g - busy) * 2ull + 1) * sum / (2 * spare);
  unsigned long long below = 0;
  for (int r = 0; r < parts; ++r) {
    below += total[r];
    if (point < below) return r;
  }
  return parts - 1;
}

// Pass 2: the block's slice of the bins in shared memory (packed), its warps
// taking tiles kTilesPerClaim at a time.
__global__ void __launch_bounds__(kBlockThreads, 1)
count_partitions(const uint16_t* __restrict__ values, const uint16_t* __restrict__ header, int64_t tiles, int parts,
                 int slice_log2, uint32_t bins, const unsigned long long* __restrict__ part_total,
                 unsigned* __restrict__ part_next, HistCount* __restrict__ hist, uint32_t* __restrict__ partials,
                 uint32_t* __restrict__ row_base) {
  extern __shared__ uint32_t words[];  // 2^slice_log2 bins, packed
  __shared__ int slice;
  const int64_t nwords = int64_t{1} << (slice_log2 - 1);
  const int lane = threadIdx.x % kWarp;
  if (threadIdx.x == 0) slice = pick_slice(part_total, parts, blockIdx.x, gridDim.x);
  for (int64_t i = threadIdx.x; i < nwords; i += kBlockThreads) words[i] = 0;
  __syncthreads();
  const int r = slice;
  const uint32_t first_bin = static_cast<uint32_t>(r) << slice_log2;
  uint32_t hot = kNoBin, hot_count = 0;  // a local index, as in packed16-hot
  for (;;) {
    unsigned t0 = 0;
    if (lane == 0) t0 = atomicAdd(&part_next[r], static_cast<unsigned>(kTilesPerClaim));
    t0 = __shfl_sync(kFullMask, t0, 0);
    if (t0 >= tiles) break;
    const int64_t t_end = t0 + kTilesPerClaim < tiles ? t0 + kTilesPerClaim : tiles;
    for (int64_t t = t0; t < t_end; ++t) {
      const int b = header[t * (parts + 1) + r], e = header[t * (parts + 1) + r + 1];
      const uint16_t* tile = values + t * kTileValues;
      for (int base = b; base < e; base += kWarp * kCountUnroll) {  // the same trips for the whole warp
        uint32_t x[kCountUnroll];
#pragma unroll
        for (int u = 0; u < kCountUnroll; ++u) {
          const int i = base + u * kWarp + lane;
          x[u] = i < e ? __ldg(&tile[i]) : kNoBin;
        }
        const uint32_t lead = __shfl_sync(kFullMask, x[0], 0);
        const unsigned agree = __ballot_sync(kFullMask, x[0] == lead);
        if (lead != kNoBin && lead != hot && __popc(agree) >= kHotLanes) {
          if (hot_count) packed_add(words, hot, first_bin + hot, hot_count, bins, hist);
          hot = lead;
          hot_count = 0;
        }
        uint32_t old[kCountUnroll], seen = 0;  // as packed_add_batch
#pragma unroll
        for (int u = 0; u < kCountUnroll; ++u) {
          const bool valid = x[u] != kNoBin, is_hot = valid && x[u] == hot;
          hot_count += is_hot;
          old[u] = valid && !is_hot ? packed_issue(words, x[u], 1) : 0u;
          seen |= old[u];
        }
        if (seen & 0x80008000u) {
#pragma unroll
          for (int u = 0; u < kCountUnroll; ++u)
            if (packed_wrapped(old[u], x[u], 1)) hand_over_wrap(first_bin + x[u], old[u], bins, hist);
        }
        if (hot_count >= kFlushAt) {
          packed_add(words, hot, first_bin + hot, hot_count, bins, hist);
          hot_count = 0;
        }
      }
    }
  }
  if (hot_count) packed_add(words, hot, first_bin + hot, hot_count, bins, hist);
  __syncthreads();
  store_row(words, nwords, partials, row_base, int64_t{r} * nwords);
}

// Slices of 2^16 bins, or fewer where a GPU's shared memory is smaller.
int slice_log2() {
  int s = kMaxSliceLog2;
  while (s > 1 && (int64_t{1} << s) / 2 * 4 > smem_optin() - 64) --s;  // 64: its static shared memory
  return s;
}
int64_t slice_count(uint32_t bins) { return sw::ceil_div(bins, int64_t{1} << slice_log2()); }

bool fits_partition(const Job& j) { return slice_count(j.bins) >= 2 && slice_count(j.bins) <= kMaxParts; }

template <class T>
void partition(const Job& j) {
  constexpr int kTileVecs = kScatterThreads * (kTileValuesPerThread / kPerVec<T>);
  const int sl = slice_log2();
  const int parts = static_cast<int>(slice_count(j.bins));
  const int64_t nwords = int64_t{1} << (sl - 1);
  const int64_t tiles = sw::ceil_div(split16(static_cast<const T*>(j.in), j.n).nvec, kTileVecs);
  Workspace& w = *j.ws;
  uint16_t* values = Workspace::grow(w.part_values, std::max<int64_t>(tiles, 1) * kTileValues);
  uint16_t* header = Workspace::grow(w.part_header, std::max<int64_t>(tiles, 1) * (parts + 1));
  unsigned long long* part_total = Workspace::grow(w.part_total, kMaxParts);
  unsigned* part_next = Workspace::grow(w.part_next, kMaxParts);
  const size_t smem = sizeof(uint32_t) * nwords;
  const int64_t grid1 = wave(scatter_partitions<T>, kScatterThreads, 0);
  const int64_t grid2 = std::max<int64_t>(wave(count_partitions, kBlockThreads, smem), parts);
  uint32_t* partials = Workspace::grow(w.partials, grid2 * nwords);
  uint32_t* row_base = Workspace::grow(w.row_base, grid2);
  zero_hist(j);
  CUDA_CHECK(cudaMemsetAsync(part_total, 0, sizeof(unsigned long long) * kMaxParts));
  CUDA_CHECK(cudaMemsetAsync(part_next, 0, sizeof(unsigned) * kMaxParts));
  scatter_partitions<T><<<grid1, kScatterThreads>>>(static_cast<const T*>(j.in), j.n, j.bins, sl, parts, values, header,
                                                    part_total, j.hist);
  CHECK_LAUNCH();
  count_partitions<<<grid2, kBlockThreads, smem>>>(values, header, tiles, parts, sl, j.bins, part_total, part_next,
                                                   j.hist, partials, row_base);
  CHECK_LAUNCH();
  add_rows<true>(partials, row_base, grid2, nwords, j.bins, j.hist);
}
void launch_partition(const Job& j) { j.value_bits == 16 ? partition<uint16_t>(j) : partition<uint32_t>(j); }

// =========================================================================================
// Step 10: auto, the choice a library would make from the bin count and the GPU alone:
// shared32 while 32-bit counters fit in one block's shared memory (its +1 atomics need
// no answer), packed16-hot while 16-bit ones do, partition beyond.
// =========================================================================================

bool fits_auto(const Job& j) { return fits_shared32(j) || fits_packed16(j) || fits_partition(j); }
void launch_auto(const Job& j) {
  if (fits_shared32(j))
    launch_shared32(j);
  else if (fits_packed16(j))
    launch_packed16_hot(j);
  else
    launch_partition(j);
}

// --- the steps ------------------------------------------------------------------------------

using Launch = void (*)(const Job&);
using Fits = bool (*)(const Job&);
bool always(const Job&) { return true; }

struct Step {
  const char* name;
  Launch launch;
  Fits fits;               // can it run this job (bins, value width, cluster size, GPU)?
  bool clustered = false;  // runs once per cluster size that fits; needs compute capability 9.0
};

const Step kSteps[] = {
    {"global-atomic", launch_global_atomic, always},
    {"global-match", launch_global_match, always},
    {"shared32", launch_shared32, fits_shared32},
    {"packed16", launch_packed16, fits_packed16},
    {"packed16-batch", launch_packed16_batch, fits_packed16},
    {"packed16-hot", launch_packed16_hot, fits_packed16},
    {"cluster-dsmem", launch_cluster_dsmem, fits_cluster<false>, true},
    {"cluster-packed16", launch_cluster_packed16, fits_cluster<true>, true},
    {"partition", launch_partition, fits_partition},
    {"auto", launch_auto, fits_auto},
};

// A packed-counter test the inputs cannot force: a carry into a high field that
// holds 0xFFFF, then 1024 threads adding 1 to 7 to the two bins of one word.
__global__ void test_packed_counters(HistCount* hist, uint32_t* word_out, int rounds) {
  __shared__ uint32_t word[1];
  if (threadIdx.x == 0) {
    word[0] = 0;
    packed_add(word, 1, 1, 0xFFFF, 2, hist);  // high field 0xFFFF
    packed_add(word, 0, 0, 0xFFFF, 2, hist);  // low field 0xFFFF
    packed_add(word, 0, 0, 1, 2, hist);       // low wraps; its carry wraps the high field
    packed_add(word, 1, 1, 2, 2, hist);
  }
  __syncthreads();
  for (int i = 0; i < rounds; ++i) packed_add(word, threadIdx.x & 1, threadIdx.x & 1, 1 + threadIdx.x % 7, 2, hist);
  __syncthreads();
  if (threadIdx.x == 0) *word_out = word[0];
}

// =========================================================================================
// The vendor line, inputs, checks, the benchmark and the correctness sweep.
// =========================================================================================

// cub::DeviceHistogram::HistogramEven with the same levels: bins + 1 levels from 0 to
// 2^16 (16-bit values) or 2^20 (32-bit values); 32-bit counters, int offsets, so
// inputs beyond INT_MAX values are skipped. Temporary storage is sized in prepare(),
// outside any timed loop.
class Cub {
 public:
  Cub() : counts_(int64_t{1} << 20) {}
  void prepare(int value_bits, uint32_t bins, int64_t n) {
    size_t bytes = 0;
    call(nullptr, bytes, nullptr, n, value_bits, bins);
    if (static_cast<int64_t>(bytes) > temp_.count()) temp_.allocate(static_cast<int64_t>(std::max<size_t>(bytes, 1)));
  }
  void run(const void* in, int64_t n, int value_bits, uint32_t bins) {
    size_t bytes = static_cast<size_t>(temp_.count());
    call(temp_.get(), bytes, in, n, value_bits, bins);
    CHECK_LAUNCH();
  }
  void poison(uint32_t bins) { sw::poison(counts_.get(), sizeof(int) * bins); }
  std::vector<uint64_t> read(uint32_t bins) const {
    const std::vector<int> c = sw::read(counts_.get(), bins);
    std::vector<uint64_t> out(bins);
    for (uint32_t b = 0; b < bins; ++b) out[b] = static_cast<uint32_t>(c[b]);
    return out;
  }

 private:
  void call(void* temp, size_t& bytes, const void* in, int64_t n, int value_bits, uint32_t bins) {
    const int levels = static_cast<int>(bins) + 1;
    if (value_bits == 16)
      CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp, bytes, static_cast<const uint16_t*>(in), counts_.get(), levels,
                                                     0, 1 << 16, static_cast<int>(n)));
    else
      CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp, bytes, static_cast<const uint32_t*>(in), counts_.get(), levels,
                                                     0u, 1u << 20, static_cast<int>(n)));
  }
  sw::DeviceBuffer<int> counts_;
  sw::DeviceBuffer<uint8_t> temp_;
};

constexpr int64_t kMaxOffset = 7;  // --offset: start this many values past a 256-byte aligned address

// One input on the device (at `offset` values past an aligned address), its copy on
// the host and the CPU's count of every value.
class Input {
 public:
  Input(const sw::Gpu& gpu, const std::string& option, int64_t max_n, int max_bits, double extra_per_value)
      : capacity_(max_n * (max_bits / 8) + (kMaxOffset + 1) * 4) {
    sw::require_fits(gpu, option, max_n, max_bits / 8 + extra_per_value, static_cast<double>(capacity_ - max_n * (max_bits / 8)));
    device_.allocate(capacity_);
    host_.reset(new uint8_t[static_cast<size_t>(capacity_)]);
  }
  void generate(int value_bits, int64_t n, const ch15::ValueSpec& spec, uint64_t seed, int64_t offset) {
    bits_ = value_bits;
    n_ = n;
    offset_ = offset;
    spec_ = spec;
    if (n * (value_bits / 8) + offset * 4 > capacity_) {
      std::fprintf(stderr, "internal error: input of %lld values does not fit\n", static_cast<long long>(n));
      std::exit(sw::kExitFailed);
    }
    ch15::fill_values(device_.get() + offset_ * (bits_ / 8), value_bits, n, seed, spec);
    CUDA_CHECK(cudaMemcpy(host_.get(), device(), static_cast<size_t>(n * (value_bits / 8)), cudaMemcpyDeviceToHost));
    counts_ = ch15::count_values(host_.get(), value_bits, n);
  }
  const void* device() const { return device_.get() + offset_ * (bits_ / 8); }
  std::vector<uint64_t> want(uint32_t bins) const { return ch15::fold_bins(counts_, bits_, bins); }
  int bits() const { return bits_; }
  int64_t n() const { return n_; }
  int64_t offset() const { return offset_; }
  std::string note() const { return ch15::spec_note(spec_); }
  uint64_t count_of(uint32_t value) const { return counts_[value]; }

 private:
  int64_t capacity_;
  sw::DeviceBuffer<uint8_t> device_;
  std::unique_ptr<uint8_t[]> host_;
  std::vector<uint64_t> counts_;
  int bits_ = 16;
  int64_t n_ = 0, offset_ = 0;
  ch15::ValueSpec spec_;
};

// One row source: a step at one cluster size, or CUB (step == nullptr).
struct Version {
  const Step* step;
  int cluster;
  std::string name() const { return step ? step->name : "cub"; }
  std::string label() const { return name() + (step && step->clustered ? " cluster=" + std::to_string(cluster) : ""); }
};

struct Context {
  const sw::CommonOptions& opt;
  sw::Report& report;
  Workspace ws;
  Cub cub;
  sw::DeviceBuffer<HistCount> hist{int64_t{1} << 20};
  bool clusters = false;
  std::string only;  // --step: run this version only ("all": every one)
};

Job job_for(Context& c, const Input& in, uint32_t bins, int cluster) {
  return Job{in.device(), in.n(), in.bits(), bins, cluster, c.hist.get(), &c.ws};
}

// The versions that run on this input at this bin count: CUB, then every step that
// fits, a clustered step at each size in `sizes` that fits.
std::vector<Version> versions_for(Context& c, const Input& in, uint32_t bins, bool with_cub, bool all_sizes) {
  std::vector<Version> out;
  if (with_cub && (c.only == "all" || c.only == "cub") && in.n() <= INT_MAX) out.push_back({nullptr, 0});
  for (const Step& s : kSteps) {
    if (c.only != "all" && c.only != s.name) continue;
    if (!s.clustered) {
      if (s.fits(job_for(c, in, bins, 0))) out.push_back({&s, 0});
      continue;
    }
    if (!c.clusters) continue;
    for (int k : kClusterSizes) {
      if (!s.fits(job_for(c, in, bins, k))) continue;
      out.push_back({&s, k});
      if (!all_sizes) break;  // the smallest cluster that fits
    }
  }
  return out;
}

void run_version(Context& c, const Input& in, uint32_t bins, const Version& v) {
  if (v.step)
    v.step->launch(job_for(c, in, bins, v.cluster));
  else
    c.cub.run(in.device(), in.n(), in.bits(), bins);
}
void poison_version(Context& c, uint32_t bins, const Version& v) {
  if (v.step) {
    sw::poison(c.hist.get(), sizeof(HistCount) * bins);
    c.ws.poison();
  } else {
    c.cub.poison(bins);
  }
}
std::vector<uint64_t> read_version(Context& c, uint32_t bins, const Version& v) {
  if (!v.step) return c.cub.read(bins);
  const std::vector<HistCount> got = sw::read(c.hist.get(), bins);
  return std::vector<uint64_t>(got.begin(), got.end());
}
bool matches(const std::vector<uint64_t>& got, const std::vector<uint64_t>& want) {
  return sw::count_mismatches("bin", got.data(), want.data(), static_cast<int64_t>(want.size())) == 0;
}

constexpr double kSlowRunMs = 20;  // a first run this slow is timed once (the checked runs warmed it up)

// Poisons the output and the scratch, runs, checks; runs again WITHOUT poisoning
// (a kernel that adds onto the last run's counts fails), checks; then times it
// and checks the last timed result.
void bench(Context& c, const sw::CommonOptions& opt, const Input& in, uint32_t bins, const std::vector<uint64_t>& want,
           const Version& v, const std::string& role, std::map<std::string, double> extra) {
  if (!v.step) c.cub.prepare(in.bits(), bins, in.n());
  sw::CommonOptions once = opt;
  once.reps = 1;
  once.warmup = 0;
  const sw::Timing first = sw::time_gpu(once, [&] { run_version(c, in, bins, v); }, [&] { poison_version(c, bins, v); });
  bool ok = matches(read_version(c, bins, v), want);
  run_version(c, in, bins, v);
  ok = matches(read_version(c, bins, v), want) && ok;
  const sw::Timing t = sw::time_gpu(first.ms_median > kSlowRunMs ? once : opt, [&] { run_version(c, in, bins, v); });
  ok = matches(read_version(c, bins, v), want) && ok;
  sw::Result r{v.name(), in.n(), static_cast<double>(in.n()) * (in.bits() / 8) + sizeof(HistCount) * static_cast<double>(bins), t,
               ok, v.step ? role : (role == "step" ? "vendor" : role)};
  r.problem = "histogram-" + std::to_string(bins);
  r.note = in.note();
  r.extra = std::move(extra);
  r.extra["bins"] = bins;
  r.extra["value_bits"] = in.bits();
  if (v.step && v.step->clustered) {
    r.extra["cluster"] = v.cluster;  // blocks per cluster, and clusters resident at once:
    r.extra["clusters"] = clusters_for(job_for(c, in, bins, v.cluster), v.step->launch == launch_cluster_packed16);
  }
  if (in.offset()) r.extra["offset"] = static_cast<double>(in.offset());
  r.extra["gvalues_s"] = t.ms_median > 0 ? static_cast<double>(in.n()) / (t.ms_median * 1e6) : 0.0;
  c.report.add(r);
}

void bench_all(Context& c, const sw::CommonOptions& opt, const Input& in, uint32_t bins, const std::string& role,
               bool all_sizes, const std::map<std::string, double>& extra = {}) {
  const std::vector<uint64_t> want = in.want(bins);
  for (const Version& v : versions_for(c, in, bins, true, all_sizes)) bench(c, opt, in, bins, want, v, role, extra);
}

// --- the correctness sweep ------------------------------------------------------------------

bool check_packed_counters(sw::Report& report) {
  constexpr int kThreads = 1024, kRounds = 5000;
  sw::DeviceBuffer<HistCount> hist(2);
  sw::DeviceBuffer<uint32_t> word(1);
  CUDA_CHECK(cudaMemset(hist.get(), 0, hist.bytes()));
  test_packed_counters<<<1, kThreads>>>(hist.get(), word.get(), kRounds);
  CHECK_LAUNCH();
  const std::vector<HistCount> h = sw::read(hist.get(), 2);
  const uint32_t w = sw::read(word.get());
  uint64_t want[2] = {0xFFFF + 1, 0xFFFF + 2};
  for (int t = 0; t < kThreads; ++t) want[t & 1] += uint64_t{kRounds} * (1 + t % 7);
  const uint64_t got[2] = {h[0] + (w & 0xFFFFu), h[1] + (w >> 16)};
  const bool ok = got[0] == want[0] && got[1] == want[1];
  report.check(ok, "packed16 counters: a carry into a full high field, then 1024 threads adding 1 to 7",
               ok ? "" : "bins 0 and 1: got " + std::to_string(got[0]) + " and " + std::to_string(got[1]) + ", want " +
                             std::to_string(want[0]) + " and " + std::to_string(want[1]));
  return ok;
}

// Every step (each cluster size that fits) on awkward sizes and start offsets, at
// bin counts on both sides of 256, 2^16 and at 2^20, on uniform, all-equal (long
// enough that narrow counters wrap in every block), 90%-one-value and image inputs.
// With --large: more than 2^32 values, all equal (one bin passes 2^32) and uniform.
int verify(Context& c, const sw::Gpu& gpu, bool large) {
  struct Case {
    int bits;
    int64_t n;
    ch15::ValueSpec spec;
    int64_t offset;
    std::vector<uint32_t> bins;
  };
  using ch15::Dist;
  const std::vector<uint32_t> b16 = {255, 256, 257, 65535, 65536}, b32 = {65537, 1u << 20};
  std::vector<Case> cases;
  if (large) {
    const int64_t n = (int64_t{1} << 32) + (int64_t{1} << 20) + 3;
    cases = {{16, n, {Dist::Equal, 0xFFFF}, 5, {65536, 257}},
             {16, n, {Dist::Uniform}, 0, {65536}},
             {32, n, {Dist::Equal, (1u << 20) - 1}, 1, {1u << 20}}};
  } else {
    check_packed_counters(c.report);
    for (int bits : {16, 32}) {
      const std::vector<uint32_t>& bins = bits == 16 ? b16 : b32;
      const uint32_t top = (1u << ch15::range_bits(bits)) - 1;
      for (int64_t n : {1, 31, 32, 33, 1000003})
        for (int64_t offset : {0, 1, 3}) cases.push_back({bits, n, {Dist::Uniform}, offset, bins});
      cases.push_back({bits, (int64_t{1} << 25) + 13, {Dist::Equal, 0}, 1, bins});
      cases.push_back({bits, (int64_t{1} << 25) + 13, {Dist::Equal, top}, 3, bins});
      cases.push_back({bits, (int64_t{1} << 24) + 5, {Dist::Mix, 7, 0.9}, 0, bins});
      cases.push_back({bits, (int64_t{1} << 24) + 5, {Dist::Image}, 1, bins});
    }
  }
  int64_t max_n = 1;
  for (const Case& k : cases) max_n = std::max(max_n, k.n);
  Input in(gpu, large ? "--large" : "--n", max_n, 32, 2.0);
  for (const Case& k : cases) {
    in.generate(k.bits, k.n, k.spec, c.opt.seed, k.offset);
    if (large && k.spec.dist == Dist::Equal)
      c.report.check(in.count_of(k.spec.value) == static_cast<uint64_t>(k.n) && in.count_of(k.spec.value) > 0xFFFFFFFFull,
                     "reference: value " + std::to_string(k.spec.value) + " occurs all " + std::to_string(k.n) +
                         " times, beyond 2^32");
    for (uint32_t bins : k.bins) {
      const std::vector<uint64_t> want = in.want(bins);
      const std::string at = " bins=" + std::to_string(bins) + " n=" + std::to_string(k.n) + " offset=" +
                             std::to_string(k.offset) + " " + in.note() + " value_bits=" + std::to_string(k.bits);
      for (const Version& v : versions_for(c, in, bins, false, true)) {
        poison_version(c, bins, v);
        run_version(c, in, bins, v);
        bool ok = matches(read_version(c, bins, v), want);
        run_version(c, in, bins, v);  // again, onto the last run's counts
        ok = matches(read_version(c, bins, v), want) && ok;
        c.report.check(ok, v.label() + at);
      }
    }
  }
  return c.report.exit_code();
}

// --- the benchmark ------------------------------------------------------------------------------

constexpr uint32_t kHeadlineSmall = 65536, kHeadlineLarge = 1u << 20;
const uint32_t kMapBins[] = {256,   512,   1024,  2048,   4096,   8192,   16384,  32768,
                             49152, 65536, 98304, 131072, 262144, 524288, 1048576};
const double kSweepP[] = {0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0};
constexpr double kMapRepsFraction = 0.25;  // map and sweep points: a quarter of the reps

// The default run: per value width, the headline inputs at 65,536 (16-bit) or 2^20
// (32-bit) bins with every cluster size, the regime map on uniform and all-equal
// values at every bin count of that width, and (16-bit) the p-sweep.
void default_run(Context& c, Input& in, int64_t n, int64_t offset) {
  using ch15::Dist;
  sw::CommonOptions map = c.opt;
  map.reps = std::max(1, static_cast<int>(c.opt.reps * kMapRepsFraction));
  map.warmup = std::min(c.opt.warmup, 1);
  for (int bits : {16, 32}) {
    const uint32_t headline = bits == 16 ? kHeadlineSmall : kHeadlineLarge;
    const ch15::ValueSpec specs[] = {{Dist::Uniform}, {Dist::Equal, 0}, {Dist::Mix, 0, 0.9}, {Dist::Image}};
    for (const ch15::ValueSpec& spec : specs) {
      in.generate(bits, n, spec, c.opt.seed, offset);
      bench_all(c, c.opt, in, headline, "step", true);
      if (spec.dist == Dist::Image) continue;
      for (uint32_t bins : kMapBins)
        if ((bits == 16) == (bins <= kHeadlineSmall)) bench_all(c, map, in, bins, "sweep", false);
    }
  }
  for (double p : kSweepP) {
    in.generate(16, n, {Dist::Mix, 0, p}, c.opt.seed, offset);
    bench_all(c, map, in, kHeadlineSmall, "sweep", false, {{"p", p}});
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = int64_t{1} << 28;
  int64_t bins = kHeadlineSmall;
  std::string dist = "uniform", step = "all";
  int64_t value = 0, offset = 0;
  double p = 0.9;
  bool large = false;
  sw::Cli cli("15_many_bins_histogram",
              "Histograms of 256 to 2^20 bins: global atomics, shared memory, packed 16-bit counters, clusters.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "values to histogram (16-bit up to 65536 bins, 32-bit beyond)");
  cli.add_int("--bins", &bins, 256, int64_t{1} << 20, "bins, evenly spaced over the values' range (benchmarks this count only)");
  cli.add_choice("--dist", &dist, {"uniform", "equal", "mix", "image"}, "distribution of the values (benchmarks this input only)");
  cli.add_int("--value", &value, 0, 65535, "the repeated value of --dist equal and mix");
  cli.add_number("--p", &p, 0.0, 1.0, "--dist mix: probability that a value is --value");
  cli.add_int("--offset", &offset, 0, kMaxOffset, "start the input this many values past a 16-byte boundary");
  std::vector<std::string> names, choices = {"all", "cub"};
  for (const Step& s : kSteps) names.push_back(s.name);
  choices.insert(choices.end(), names.begin(), names.end());
  cli.add_choice("--step", &step, choices, "run only this step (or cub)");
  cli.add_flag("--large", &large, "with --verify-only: the checks above 2^32 values");
  cli.set_steps(names);
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "15", "histogram");
  Context c{opt, report};
  c.only = step;
  c.clusters = has_clusters();
  if (!c.clusters)
    report.note("cluster-dsmem and cluster-packed16 skipped: thread block clusters need compute capability 9.0, this GPU has " +
                std::to_string(gpu.info.cc_major) + "." + std::to_string(gpu.info.cc_minor));
  if (opt.verify_only) return verify(c, gpu, large);

  const bool one_input = cli.was_given("--bins") || cli.was_given("--dist") || cli.was_given("--value") ||
                         cli.was_given("--p");
  const int one_bits = bins <= kHeadlineSmall ? 16 : 32;
  // The input, and partition's 2 bytes per value of scratch.
  Input in(gpu, "--n", n, one_input ? one_bits : 32, 2.0);
  if (one_input) {
    ch15::ValueSpec spec;
    spec.dist = dist == "equal" ? ch15::Dist::Equal
                : dist == "mix" ? ch15::Dist::Mix
                : dist == "image" ? ch15::Dist::Image
                                  : ch15::Dist::Uniform;
    spec.value = static_cast<uint32_t>(value);
    spec.p = p;
    in.generate(one_bits, n, spec, opt.seed, offset);
    bench_all(c, opt, in, static_cast<uint32_t>(bins), "step", true);
    return report.exit_code();
  }
  default_run(c, in, n, offset);
  return report.exit_code();
}
