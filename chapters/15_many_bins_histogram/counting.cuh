// Chapter 15: what every step shares. The job a launcher gets and the row of the
// step table (sw::bench::Step with More); values as keys and bins; the grid-wide loop
// over the input in 16-byte vectors; the blocks' rows of counters and their sum; the
// GPU's shared memory; and dispatch_bits, the one place where a value width becomes a type.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "common/bench/step.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/histogram_check.h"
#include "common/vec16.cuh"

namespace ch15 {

using sw::HistCount;
using sw::kFullMask;
using sw::kVec;
using sw::kWarp;

constexpr int kUnroll = 4;           // 16-byte loads per thread per step of the main loop
constexpr int kGlobalThreads = 256;  // global-atomic, global-match
constexpr int kBlockThreads =
    1024;                      // the shared-memory kernels: one block per SM once the bins fill it
constexpr int kHotLanes = 16;  // the hot-bin vote: lanes that must agree with lane 0
constexpr uint32_t kNoBin = 0xFFFFFFFFu;  // "no hot bin yet"
// 32-bit shared counters (shared32, cluster-dsmem): no block or cluster may count 2^32
// values. The launchers give each at most this many.
constexpr int64_t kMaxValuesPerBlock = int64_t{1} << 31;
constexpr int kClusterSizes[] = {2, 4, 8, 16};  // blocks per cluster; 16 needs a non-portable size
// Adding up the blocks' rows of counters.
constexpr int kAddThreads = 256;
constexpr int kRowsPerGroup = 32;

// --- the job and the step table ---------------------------------------------------------

// Device buffers the steps reuse: the blocks' rows of counters and partition's
// scratch. They grow on first use (in the checked runs, never while timing), and
// start poisoned so that no kernel can rely on their contents.
struct Workspace {
  sw::DeviceBuffer<uint32_t> partials, row_base;
  sw::DeviceBuffer<uint16_t> part_values, part_header;
  sw::DeviceBuffer<unsigned long long> part_total;  // partition: values per slice
  sw::DeviceBuffer<unsigned> part_next;             // partition: pass 2's next tile per slice

  template <class U>
  static U* grow(sw::DeviceBuffer<U>& b, int64_t count) {
    if (b.count() < count) {
      b.allocate(count);
      sw::poison(b.get(), b.bytes());
    }
    return b.get();
  }
  void poison() {
    for (auto* b : {&partials, &row_base})
      if (b->count()) sw::poison(b->get(), b->bytes());
    for (auto* b : {&part_values, &part_header})
      if (b->count()) sw::poison(b->get(), b->bytes());
    if (part_total.count()) sw::poison(part_total.get(), part_total.bytes());
    if (part_next.count()) sw::poison(part_next.get(), part_next.bytes());
  }
};

struct CubLines;  // CUB's row: its temporary storage and counters (many_bins_harness.cu)

// One histogram to compute: n values of value_bits bits at `in` into `bins` 64-bit
// totals at `hist` (the launch zeroes them: that is part of the job); CUB's row counts
// into its own 32-bit counters instead.
struct Job {
  const void* in;
  int64_t n;
  int value_bits;  // 16 or 32
  uint32_t bins;
  int cluster;  // blocks per cluster, for the cluster steps
  HistCount* hist;
  Workspace* ws;
  const CubLines* cub;  // CUB's row only
  template <class T>
  const T* values() const {
    return static_cast<const T*>(in);
  }
};

// A step's launcher: its grid, its block and its <<<>>>. measure() calls it with the job.
using Launch = void (*)(const Job&);
using Fits = bool (*)(const Job&);
inline bool always(const Job&) { return true; }

// What a row of the step table holds beside its name and launcher; the table has one
// per value width (the launchers differ).
struct More {
  Fits fits;                              // can it run this job (bins, width, cluster size, GPU)?
  int (*clusters)(const Job&) = nullptr;  // cluster steps: clusters resident at once (0: none fit)
  Launch (*pick)(const Job&) = nullptr;   // auto: the step it runs for this job
};
using Step = sw::bench::Step<Launch, More>;

// Whether this GPU has thread block clusters (an emulated one may not): without them
// the cluster steps fit no job, so they are never launched, and the problem reports
// each as skipped with the reason.
inline bool has_clusters(std::string* why = nullptr) {
  return sw::has_feature(sw::Feature::kClusters, why);
}

// Calls f(T{}) with T the type of `value_bits`-bit values: uint16_t or uint32_t.
template <class F>
decltype(auto) dispatch_bits(int value_bits, F&& f) {
  if (value_bits == 16) return f(uint16_t{});
  return f(uint32_t{});
}

// --- values, keys and bins -----------------------------------------------------------

// A value v becomes the key v << (32 - range bits): its bin among `bins` equal bins of
// the range is then one multiply-high, __umulhi(key, bins) = v * bins / range, exactly
// HistogramEven's bin. 16-bit values span 2^16, 32-bit values 2^20.
template <class T>
constexpr int kKeyShift = sizeof(T) == 2 ? 16 : 12;

__device__ __forceinline__ uint32_t bin_of_key(uint32_t key, uint32_t bins) {
  return __umulhi(key, bins);
}

template <class T>
__device__ __forceinline__ uint32_t key_of(T v) {
  return static_cast<uint32_t>(v) << kKeyShift<T>;
}

// The key of value k (0 to kVec<T> - 1, a constant after unrolling) of a 16-byte vector.
template <class T>
__device__ __forceinline__ uint32_t key_at(uint4 v, int k) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
  if constexpr (sizeof(T) == 2)
    return (k & 1) ? (w[k / 2] & 0xFFFF0000u) : (w[k / 2] << 16);
  else
    return w[k] << 12;
}

// Every value of the grid's share of [in, in + n) into `counter`: counter.step(v)
// with kUnroll vectors per thread and the whole warp present; edge values and the
// last vectors go to counter.add(key) one at a time.
template <class T, int kThreads, class Counter>
__device__ void count_input(const T* __restrict__ in, int64_t n, Counter& counter) {
  sw::for_each_vec16<kThreads, kUnroll>(
      in, n, [&](T value) { counter.add(key_of(value)); },
      [&](const uint4(&v)[kUnroll]) { counter.step(v); },
      [&](uint4 v) {
#pragma unroll
        for (int k = 0; k < kVec<T>; ++k) counter.add(key_at<T>(v, k));
      });
}

// counter.add(key) for every value of v[]: the step of a counter without a warp-wide part.
template <class T, class Counter>
__device__ __forceinline__ void add_all(Counter& counter, const uint4 (&v)[kUnroll]) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
#pragma unroll
    for (int k = 0; k < kVec<T>; ++k) counter.add(key_at<T>(v[u], k));
}

// --- adding up the blocks' counters ----------------------------------------------------

// The end of every shared-memory kernel: the block stores its counters as row
// blockIdx.x of `partials` (plain coalesced stores, no atomics) and says where
// the row starts in the whole histogram (in words). add_partials then adds the
// rows up: one atomic per nonzero word per kRowsPerGroup rows, where adding every
// block's counters to global memory directly would take one per bin per block.
__device__ inline void store_row(const uint32_t* words, int64_t nwords, uint32_t* partials,
                                 uint32_t* row_base, int64_t base) {
  uint32_t* row = partials + int64_t{blockIdx.x} * nwords;
  for (int64_t i = threadIdx.x; i < nwords; i += blockDim.x) row[i] = words[i];
  if (threadIdx.x == 0) row_base[blockIdx.x] = static_cast<uint32_t>(base);
}

// The histogram's words: packed words hold two bins.
template <bool kPacked>
__host__ __device__ constexpr int64_t add_words(uint32_t bins) {
  return kPacked ? (int64_t{bins} + 1) / 2 : int64_t{bins};
}

// Word w of the whole histogram: the sum of the rows that cover it, kRowsPerGroup rows
// per blockIdx.y. Packed words hold bins 2w and 2w + 1.
template <bool kPacked>
__global__ void __launch_bounds__(kAddThreads)
    add_partials(const uint32_t* __restrict__ partials, const uint32_t* __restrict__ row_base,
                 int64_t rows, int64_t row_words, uint32_t bins, HistCount* __restrict__ hist) {
  const int64_t w = int64_t{blockIdx.x} * kAddThreads + threadIdx.x;
  if (w >= add_words<kPacked>(bins)) return;
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

// add_partials' grid: a thread per word of the histogram, a blockIdx.y per kRowsPerGroup rows.
template <bool kPacked>
dim3 add_grid(uint32_t bins, int64_t rows) {
  return dim3(static_cast<unsigned>(sw::ceil_div(add_words<kPacked>(bins), kAddThreads)),
              static_cast<unsigned>(sw::ceil_div(rows, kRowsPerGroup)));
}

// --- what every launcher needs -----------------------------------------------------------

// The largest dynamic shared memory one block may opt in to (227 KiB on H100 and H200).
inline int64_t smem_optin() {
  return sw::device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>();
}

// Lets `kernel` use all the shared memory a block can opt in to (less its static part).
template <class Kernel>
void allow_all_smem(Kernel kernel) {
  cudaFuncAttributes a = {};
  CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  CUDA_CHECK(cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
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

inline void zero_hist(const Job& j) {
  CUDA_CHECK(cudaMemsetAsync(j.hist, 0, sizeof(HistCount) * j.bins));
}

inline int64_t packed_words(uint32_t bins) { return (int64_t{bins} + 1) / 2; }

}  // namespace ch15
