// Chapter 13: top-2, the two largest elements of an array and where they are.
//
// What changed:  chapters 02-06 combined partial results with +. Here two partial
//                results are combined by merging two top-2 lists: four values (two
//                keys, two indices) instead of one, so the merge costs more registers
//                and more shuffles, but the shape of the reduction is the same.
// Semantics:     elements are ranked by value, equal values by the smaller index first.
//                The answer is the first two elements of that ranking, so a repeated
//                maximum gives (max at its first index, max at its second index).
//                INT_MIN is an ordinary value: an empty slot is marked by index -1,
//                never by a sentinel value (the seed's INT_MIN sentinel can never
//                report an INT_MIN element; the tests show it). Float input: NaN ranks
//                above +inf (as in torch.topk), NaNs among themselves by index, and
//                -0.0 equals +0.0. Fewer than 2 elements is an error (--n starts at 2).
// Steps:         thread-pairs  each thread keeps a top-2 in registers during a
//                              grid-stride pass and writes it to memory
//                shared-tree   + the block merges its threads' pairs in a shared-memory
//                              tree (the seed's version, with the indices added)
//                warp-shuffle  + the block merges with __shfl_xor_sync instead
//                shuffle-int4  + 16-byte loads, two in flight per thread
//                Every step ends with a second pass: one block merges the results of
//                the first pass in a fixed order, so the answer is deterministic.
// Bottleneck:    DRAM read bandwidth once the merge is cheap. Goal: at least
//                cub::DeviceReduce::Reduce with the same merge as its operator.
// Run:           build/chapters/13_top2 [--n 2^28] [--verify-only [--large]] [--json]
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cub/device/device_reduce.cuh>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/cli.h"
#include "common/data.h"
#include "common/device.h"
#include "common/gpu_timer.h"
#include "common/parallel.h"
#include "common/report.h"
#include "common/timing.h"

namespace {

constexpr int kBlock = 256;        // threads per block of the first pass
constexpr int kFinalBlock = 1024;  // threads of the single block of the second pass
constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kVec = 4;            // elements per 16-byte load
constexpr int kUnroll = 2;         // 16-byte loads in flight per thread
constexpr int64_t kNoIndex = -1;   // an empty slot
constexpr int64_t kDefaultN = int64_t{1} << 28;  // 1 GiB of int32, far beyond L2
// More than 2^31 elements, not a multiple of the vector width.
constexpr int64_t kLargeN = (int64_t{1} << 31) + (int64_t{1} << 20) + 3;
constexpr int kRefChunks = 64;     // parallel chunks of the CPU reference

// --- the top-2 of a multiset ----------------------------------------------------------

// The two highest-ranked elements seen so far: keys and indices. i1 < 0 means
// empty, and i2 < 0 whenever i1 < 0. Keys of empty slots are never read.
template <class K>
struct Top2 {
  K k1, k2;
  int64_t i1, i2;
};

template <class K>
__host__ __device__ Top2<K> empty_top2() {
  return {K{}, K{}, kNoIndex, kNoIndex};
}

// Does element (ka, ia) rank above (kb, ib)? Larger key first, then smaller index;
// anything ranks above an empty slot.
template <class K>
__host__ __device__ __forceinline__ bool ranks_above(K ka, int64_t ia, K kb, int64_t ib) {
  return ia >= 0 && (ib < 0 || ka > kb || (ka == kb && ia < ib));
}

// The top-2 of the union of two disjoint sets.
template <class K>
__host__ __device__ __forceinline__ Top2<K> merge(const Top2<K>& a, const Top2<K>& b) {
  Top2<K> r;
  if (ranks_above(a.k1, a.i1, b.k1, b.i1)) {  // a's first wins; second: a's second or b's first
    r.k1 = a.k1, r.i1 = a.i1;
    const bool a2 = ranks_above(a.k2, a.i2, b.k1, b.i1);
    r.k2 = a2 ? a.k2 : b.k1, r.i2 = a2 ? a.i2 : b.i1;
  } else {
    r.k1 = b.k1, r.i1 = b.i1;
    const bool a1 = ranks_above(a.k1, a.i1, b.k2, b.i2);
    r.k2 = a1 ? a.k1 : b.k2, r.i2 = a1 ? a.i1 : b.i2;
  }
  return r;
}

// Adds element (k, i). Precondition: i is larger than every index already in t
// (true in a grid-stride pass), so an equal key ranks below and strict > suffices.
template <class K>
__host__ __device__ __forceinline__ void insert(Top2<K>& t, K k, int64_t i) {
  if (t.i2 < 0 || k > t.k2) {  // usually false once both slots are full
    if (t.i1 < 0 || k > t.k1) {
      t.k2 = t.k1, t.i2 = t.i1;
      t.k1 = k, t.i1 = i;
    } else {
      t.k2 = k, t.i2 = i;
    }
  }
}

// --- keys: what "larger" means for each element type ------------------------------------

__host__ __device__ inline uint32_t float_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
#endif
}

// An unsigned key whose order is the float order, with every NaN above +inf and
// -0.0 equal to +0.0.
__host__ __device__ inline uint32_t float_rank_key(float f) {
  if (f != f) return 0xFFFFFFFFu;                      // NaN
  const uint32_t b = f == 0.0f ? 0u : float_bits(f);  // -0.0 -> +0.0
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);   // negatives reversed, below positives
}

// The float a key stands for (NaN and zero canonical), for messages.
float float_of_key(uint32_t k) {
  if (k == 0xFFFFFFFFu) return std::numeric_limits<float>::quiet_NaN();
  const uint32_t b = (k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k;
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

struct IntKeys {
  using T = int32_t;
  using K = int32_t;
  using Vec = int4;
  __host__ __device__ static K key(T v) { return v; }
};

struct FloatKeys {
  using T = float;
  using K = uint32_t;
  using Vec = float4;
  __host__ __device__ static K key(T v) { return float_rank_key(v); }
};

// --- block merges ---------------------------------------------------------------------

template <class K>
__device__ __forceinline__ Top2<K> shfl_xor(const Top2<K>& t, int lane_mask) {
  Top2<K> o;
  o.k1 = __shfl_xor_sync(kFullMask, t.k1, lane_mask);
  o.k2 = __shfl_xor_sync(kFullMask, t.k2, lane_mask);
  o.i1 = __shfl_xor_sync(kFullMask, static_cast<long long>(t.i1), lane_mask);
  o.i2 = __shfl_xor_sync(kFullMask, static_cast<long long>(t.i2), lane_mask);
  return o;
}

// Butterfly over the warp: every lane ends with the warp's top-2. Partners are
// always different lanes, so no element is merged with itself.
template <class K>
__device__ __forceinline__ Top2<K> warp_merge(Top2<K> t) {
#pragma unroll
  for (int m = kWarp / 2; m > 0; m >>= 1) t = merge(t, shfl_xor(t, m));
  return t;
}

// Warps merge with shuffles, then warp 0 merges the warps' results. Thread 0 has
// the block's top-2.
template <class K, int kThreads>
__device__ Top2<K> block_merge_shuffle(Top2<K> t) {
  static_assert(kThreads % kWarp == 0 && kThreads / kWarp <= kWarp, "one warp merges the warps");
  constexpr int kWarps = kThreads / kWarp;
  __shared__ Top2<K> warp_best[kWarps];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  t = warp_merge(t);
  if (lane == 0) warp_best[warp] = t;
  __syncthreads();
  if (warp == 0) t = warp_merge(lane < kWarps ? warp_best[lane] : empty_top2<K>());
  return t;
}

// The seed's tree in shared memory: halve the active threads each round.
template <class K, int kThreads>
__device__ Top2<K> block_merge_shared(Top2<K> t) {
  static_assert((kThreads & (kThreads - 1)) == 0, "the tree halves a power of two");
  __shared__ Top2<K> s[kThreads];
  s[threadIdx.x] = t;
  __syncthreads();
  for (int h = kThreads / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] = merge(s[threadIdx.x], s[threadIdx.x + h]);
    __syncthreads();  // outside the if: the seed synchronizes inside it, which is undefined
  }
  return s[0];
}

// --- the kernels ------------------------------------------------------------------------

enum class Merge { ThreadPairs, SharedTree, Shuffle };

template <class L>
__device__ __forceinline__ void insert4(Top2<typename L::K>& t, const typename L::Vec& q, int64_t i) {
  insert(t, L::key(q.x), i);
  insert(t, L::key(q.y), i + 1);
  insert(t, L::key(q.z), i + 2);
  insert(t, L::key(q.w), i + 3);
}

// First pass. Each thread walks a grid-stride range in increasing index order
// (the precondition of insert), then the block merges (or, for ThreadPairs, every
// thread writes its own pair). kV = kVec reads 16 bytes at a time; x must then be
// 16-byte aligned.
template <class L, Merge kMerge, int kV>
__global__ void __launch_bounds__(kBlock)
    top2_pass1(const typename L::T* __restrict__ x, int64_t n, Top2<typename L::K>* __restrict__ out) {
  using K = typename L::K;
  using Vec = typename L::Vec;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kBlock;
  Top2<K> t = empty_top2<K>();
  int64_t scalar_from = 0;
  if constexpr (kV == kVec) {
    const Vec* xv = reinterpret_cast<const Vec*>(x);
    const int64_t nv = n / kVec;
    int64_t v = tid;
    for (; v + (kUnroll - 1) * threads < nv; v += kUnroll * threads) {
      Vec q[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) q[u] = xv[v + u * threads];  // all loads first
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) insert4<L>(t, q[u], (v + u * threads) * kVec);
    }
    for (; v < nv; v += threads) insert4<L>(t, xv[v], v * kVec);
    scalar_from = nv * kVec;  // the last n % 4 elements
  }
  for (int64_t i = scalar_from + tid; i < n; i += threads) insert(t, L::key(x[i]), i);

  if constexpr (kMerge == Merge::ThreadPairs) {
    out[tid] = t;
  } else {
    if constexpr (kMerge == Merge::SharedTree)
      t = block_merge_shared<K, kBlock>(t);
    else
      t = block_merge_shuffle<K, kBlock>(t);
    if (threadIdx.x == 0) out[blockIdx.x] = t;
  }
}

// Second pass: one block merges `count` partial results in a fixed order.
template <class K>
__global__ void __launch_bounds__(kFinalBlock)
    top2_pass2(const Top2<K>* __restrict__ in, int64_t count, Top2<K>* __restrict__ out) {
  Top2<K> t = empty_top2<K>();
  for (int64_t i = threadIdx.x; i < count; i += kFinalBlock) t = merge(t, in[i]);
  t = block_merge_shuffle<K, kFinalBlock>(t);
  if (threadIdx.x == 0) *out = t;
}

// Kept only for the tests: the seed's INT_MIN "empty" sentinel (one block). An
// element equal to INT_MIN never beats the sentinel, so its index is never recorded.
__global__ void __launch_bounds__(kBlock)
    top2_int_min_sentinel(const int32_t* __restrict__ x, int64_t n, Top2<int32_t>* __restrict__ out) {
  __shared__ Top2<int32_t> s[kBlock];
  Top2<int32_t> t{INT_MIN, INT_MIN, kNoIndex, kNoIndex};
  auto add = [&t](int32_t v, int64_t i) {
    if (v > t.k2) {
      if (v > t.k1) {
        t.k2 = t.k1, t.i2 = t.i1;
        t.k1 = v, t.i1 = i;
      } else {
        t.k2 = v, t.i2 = i;
      }
    }
  };
  for (int64_t i = threadIdx.x; i < n; i += kBlock) add(x[i], i);
  s[threadIdx.x] = t;
  __syncthreads();
  if (threadIdx.x == 0) {
    t = s[0];
    for (int j = 1; j < kBlock; ++j) {
      add(s[j].k1, s[j].i1);
      add(s[j].k2, s[j].i2);
    }
    *out = t;
  }
}

// --- launch code ---------------------------------------------------------------------------

struct Variant {
  const char* name;
  Merge merge;
  int vec;
};
constexpr Variant kSteps[] = {
    {"thread-pairs", Merge::ThreadPairs, 1},
    {"shared-tree", Merge::SharedTree, 1},
    {"warp-shuffle", Merge::Shuffle, 1},
    {"shuffle-int4", Merge::Shuffle, kVec},
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int device_attribute(cudaDeviceAttr attr) {
  int device = 0, value = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

// Pair slots that the first pass may write: one per resident thread at most.
int64_t partial_capacity() {
  return static_cast<int64_t>(device_attribute(cudaDevAttrMultiProcessorCount)) *
         device_attribute(cudaDevAttrMaxThreadsPerMultiProcessor);
}

[[noreturn]] void too_few_elements(int64_t n) {
  std::fprintf(stderr, "error: top-2 needs at least 2 elements, got %lld\n", static_cast<long long>(n));
  std::exit(sw::kExitBadInput);
}

// Our two passes. The answer lands in *out (device memory).
template <class L>
class Top2Gpu {
 public:
  using T = typename L::T;
  using K = typename L::K;

  Top2Gpu() : partials_(partial_capacity()) {}

  // Returns the number of first-pass blocks.
  int run(const Variant& v, const T* x, int64_t n, Top2<K>* out) {
    if (n < 2) too_few_elements(n);
    const bool aligned = reinterpret_cast<uintptr_t>(x) % (kVec * sizeof(T)) == 0;
    switch (v.merge) {
      case Merge::ThreadPairs: return launch<Merge::ThreadPairs, 1>(x, n, out);
      case Merge::SharedTree: return launch<Merge::SharedTree, 1>(x, n, out);
      case Merge::Shuffle:
      default:
        // A misaligned start falls back to 4-byte loads.
        return v.vec == kVec && aligned ? launch<Merge::Shuffle, kVec>(x, n, out)
                                        : launch<Merge::Shuffle, 1>(x, n, out);
    }
  }

 private:
  template <Merge M, int V>
  int launch(const T* x, int64_t n, Top2<K>* out) {
    // As many blocks as fit on the GPU at once (asked once per kernel), fewer for small n.
    static const int resident = [] {
      int per_sm = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, top2_pass1<L, M, V>, kBlock, 0));
      return std::max(per_sm, 1) * device_attribute(cudaDevAttrMultiProcessorCount);
    }();
    const int grid = static_cast<int>(std::min<int64_t>(resident, ceil_div(n, int64_t{kBlock} * V)));
    const int64_t count = M == Merge::ThreadPairs ? int64_t{grid} * kBlock : grid;
    if (count > partials_.count()) {
      std::fprintf(stderr, "error: %lld partial results exceed the buffer of %lld\n",
                   static_cast<long long>(count), static_cast<long long>(partials_.count()));
      std::exit(sw::kExitFailed);
    }
    top2_pass1<L, M, V><<<grid, kBlock>>>(x, n, partials_.get());
    CHECK_LAUNCH();
    top2_pass2<K><<<1, kFinalBlock>>>(partials_.get(), count, out);
    CHECK_LAUNCH();
    return grid;
  }

  sw::DeviceBuffer<Top2<K>> partials_;
};

// The vendor: cub::DeviceReduce::Reduce over (value, index) pairs with our merge.
struct MergeOp {
  __host__ __device__ Top2<int32_t> operator()(const Top2<int32_t>& a, const Top2<int32_t>& b) const {
    return merge(a, b);
  }
};
struct LoadPair {  // element i as a top-2 with one full slot
  const int32_t* x;
  __host__ __device__ Top2<int32_t> operator()(int64_t i) const { return {x[i], 0, i, kNoIndex}; }
};

class CubTop2 {
 public:
  void run(const int32_t* x, int64_t n, Top2<int32_t>* out) {
    if (n < 2) too_few_elements(n);
    auto pairs = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LoadPair{x});
    size_t bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, pairs, out, n, MergeOp{}, empty_top2<int32_t>()));
    if (bytes > temp_.bytes()) temp_.allocate(static_cast<int64_t>(bytes));  // only on the first call of a size
    CUDA_CHECK(cub::DeviceReduce::Reduce(temp_.get(), bytes, pairs, out, n, MergeOp{}, empty_top2<int32_t>()));
    CHECK_LAUNCH();
  }

 private:
  sw::DeviceBuffer<uint8_t> temp_;
};

// --- CPU reference and checks --------------------------------------------------------------

// The serial loop that the CPU baseline times: the same insert as the GPU threads.
template <class L>
Top2<typename L::K> top2_serial(const typename L::T* x, int64_t n) {
  Top2<typename L::K> t = empty_top2<typename L::K>();
  for (int64_t i = 0; i < n; ++i) insert(t, L::key(x[i]), i);
  return t;
}

// The reference, written independently of insert/merge: the first position of the
// largest key, then the first position of the largest key among the others.
// Two passes, each split over chunks in parallel.
template <class L>
Top2<typename L::K> top2_reference(const typename L::T* x, int64_t n) {
  using K = typename L::K;
  auto best_except = [&](int64_t skip) {
    std::vector<K> key(kRefChunks);
    std::vector<int64_t> at(kRefChunks, kNoIndex);
    sw::parallel_for(kRefChunks, [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        for (int64_t i = n * c / kRefChunks; i < n * (c + 1) / kRefChunks; ++i) {
          if (i == skip) continue;
          const K k = L::key(x[i]);
          if (at[c] < 0 || k > key[c]) key[c] = k, at[c] = i;  // strict: the first of equals
        }
      }
    });
    K k{};
    int64_t i = kNoIndex;
    for (int c = 0; c < kRefChunks; ++c)  // chunks in index order: strict > keeps the first
      if (at[c] >= 0 && (i < 0 || key[c] > k)) k = key[c], i = at[c];
    return std::pair<K, int64_t>{k, i};
  };
  const auto first = best_except(kNoIndex);
  const auto second = best_except(first.second);
  return {first.first, second.first, first.second, second.second};
}

template <class K>
bool same(const Top2<K>& a, const Top2<K>& b) {
  return a.i1 == b.i1 && a.i2 == b.i2 && (a.i1 < 0 || a.k1 == b.k1) && (a.i2 < 0 || a.k2 == b.k2);
}

std::string key_text(int32_t k) { return std::to_string(k); }
std::string key_text(uint32_t k) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(float_of_key(k)));
  return buf;
}

template <class K>
std::string describe(const Top2<K>& t) {
  return "(" + key_text(t.k1) + " at " + std::to_string(t.i1) + ", " + key_text(t.k2) + " at " +
         std::to_string(t.i2) + ")";
}

template <class K>
Top2<K> fetch(const Top2<K>* d) {
  Top2<K> h;
  CUDA_CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

// --- test inputs --------------------------------------------------------------------------

const char* const kIntPatterns[] = {
    "random",        // any int32, INT_MIN and INT_MAX included
    "ties",          // values in {-1, 0, 1}: the maximum repeats
    "all-equal",     // 7 everywhere
    "all-int-min",   // INT_MIN everywhere: the answer is (INT_MIN at 0, INT_MIN at 1)
    "int-min-second",// INT_MIN everywhere but one 0 in the middle
    "descending",    // strictly decreasing
    "ascending",     // strictly increasing from INT_MIN
    "runs",          // ascending runs of 37, then descending runs of 29
    "max-first",     // small values, the maximum at index 0
    "max-last",      // small values, the maximum at index n-1
    "negative",      // INT_MIN + {0..3}: all negative, many ties, INT_MIN common
};

void make_ints(const std::string& p, int32_t* x, int64_t n, uint64_t seed) {
  sw::host_fill_ints(x, n, seed);  // random bits; most patterns reshape them
  auto reshape = [&](auto&& value) {  // value(i, random bits of element i)
    sw::parallel_for(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) x[i] = value(i, static_cast<uint32_t>(x[i]));
    });
  };
  constexpr int64_t k2to31 = int64_t{1} << 31;
  if (p == "ties") reshape([](int64_t, uint32_t r) { return static_cast<int32_t>(r % 3) - 1; });
  if (p == "all-equal") reshape([](int64_t, uint32_t) { return 7; });
  if (p == "all-int-min" || p == "int-min-second") reshape([](int64_t, uint32_t) { return INT_MIN; });
  if (p == "descending") reshape([](int64_t i, uint32_t) { return static_cast<int32_t>(INT_MAX - i % k2to31); });
  if (p == "ascending") reshape([](int64_t i, uint32_t) { return static_cast<int32_t>(INT_MIN + i % k2to31); });
  if (p == "runs")
    reshape([n](int64_t i, uint32_t) { return static_cast<int32_t>(i < n / 2 ? i % 37 : 28 - i % 29); });
  if (p == "max-first" || p == "max-last")
    reshape([](int64_t, uint32_t r) { return static_cast<int32_t>(r % 2001) - 1000; });
  if (p == "negative") reshape([](int64_t, uint32_t r) { return INT_MIN + static_cast<int32_t>(r % 4); });
  if (p == "int-min-second") x[n / 2] = 0;
  if (p == "max-first") x[0] = 5000;
  if (p == "max-last") x[n - 1] = 5000;
}

const char* const kFloatPatterns[] = {
    "random",        // mixed signs and magnitudes, no NaN
    "nan-middle",    // one NaN: it ranks first
    "nan-ends",      // NaN at 0 and n-1: (NaN at 0, NaN at n-1)
    "nan-and-inf",   // +inf at 1, NaN at n-1: (NaN, +inf)
    "all-nan",       // (NaN at 0, NaN at 1)
    "signed-zeros",  // +0, -0 alternating: equal, so indices 0 and 1
    "all-neg-inf",   // (-inf at 0, -inf at 1)
};

void make_floats(const std::string& p, float* x, int64_t n, uint64_t seed) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  sw::host_fill_floats(x, n, seed);
  if (p == "nan-middle") x[n / 2] = nan;
  if (p == "nan-ends") x[0] = x[n - 1] = nan;
  if (p == "nan-and-inf") x[1] = inf, x[n - 1] = nan;
  if (p == "all-nan") std::fill(x, x + n, nan);
  if (p == "signed-zeros")
    for (int64_t i = 0; i < n; ++i) x[i] = i % 2 ? -0.0f : 0.0f;
  if (p == "all-neg-inf") std::fill(x, x + n, -inf);
}

// --- verification ---------------------------------------------------------------------------

template <class L>
void check_case(sw::Report& report, Top2Gpu<L>& ours, CubTop2* cub, const typename L::T* d_x,
                int64_t n, const Top2<typename L::K>& want, Top2<typename L::K>* d_out,
                const std::string& label) {
  auto one = [&](const std::string& name, auto&& run) {
    sw::poison(d_out, sizeof *d_out);
    run();
    const auto got = fetch(d_out);
    const bool ok = same(got, want);
    report.check(ok, name + " " + label, ok ? "" : "got " + describe(got) + ", want " + describe(want));
  };
  for (const Variant& v : kSteps) one(v.name, [&] { ours.run(v, d_x, n, d_out); });
  if constexpr (std::is_same_v<L, IntKeys>)
    if (cub) one("cub-reduce-top2", [&] { cub->run(d_x, n, d_out); });
}

int verify(sw::Report& report, uint64_t seed) {
  // Sizes from the issue, plus sizes that exercise the unrolled grid-stride loop
  // (more than kUnroll 16-byte loads per thread) and its remainder.
  const int64_t sizes[] = {2, 3, 31, 32, 33, 1025, 4099, 1000003, (int64_t{1} << 24) + 3};
  const int64_t max_n = sizes[std::size(sizes) - 1];
  Top2Gpu<IntKeys> ours_int;
  Top2Gpu<FloatKeys> ours_float;
  CubTop2 cub;
  sw::DeviceBuffer<int32_t> d_int(max_n + 1);
  sw::DeviceBuffer<float> d_float(max_n + 1);
  sw::DeviceBuffer<Top2<int32_t>> out_int(1);
  sw::DeviceBuffer<Top2<uint32_t>> out_float(1);

  // The key order that defines the float semantics.
  {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const float chain[] = {nan, inf, std::numeric_limits<float>::max(), 1.0f, 1e-45f, 0.0f,
                           -1e-45f, -1.0f, -std::numeric_limits<float>::max(), -inf};
    bool ok = float_rank_key(-0.0f) == float_rank_key(0.0f) && float_rank_key(-nan) == float_rank_key(nan);
    for (size_t i = 0; i + 1 < std::size(chain); ++i) ok = ok && float_rank_key(chain[i]) > float_rank_key(chain[i + 1]);
    report.check(ok, "float keys: NaN > +inf > max > 1 > denormal > +-0 > ... > -inf");
  }

  std::vector<int32_t> xi(max_n + 1);
  std::vector<float> xf(max_n + 1);
  for (int64_t n : sizes) {
    const std::string at = " n=" + std::to_string(n);
    for (const char* p : kIntPatterns) {
      make_ints(p, xi.data(), n, seed);
      CUDA_CHECK(cudaMemcpy(d_int.get(), xi.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
      const auto want = top2_reference<IntKeys>(xi.data(), n);
      report.check(same(top2_serial<IntKeys>(xi.data(), n), want), std::string("cpu-serial ") + p + at);
      check_case<IntKeys>(report, ours_int, &cub, d_int.get(), n, want, out_int.get(), std::string(p) + at);
    }
    // A start that is not 16-byte aligned: the int4 step must fall back, not misread.
    make_ints("random", xi.data(), n + 1, seed + 1);
    CUDA_CHECK(cudaMemcpy(d_int.get(), xi.data(), (n + 1) * sizeof(int32_t), cudaMemcpyHostToDevice));
    check_case<IntKeys>(report, ours_int, nullptr, d_int.get() + 1, n,
                        top2_reference<IntKeys>(xi.data() + 1, n), out_int.get(), "misaligned" + at);
    for (const char* p : kFloatPatterns) {
      make_floats(p, xf.data(), n, seed);
      CUDA_CHECK(cudaMemcpy(d_float.get(), xf.data(), n * sizeof(float), cudaMemcpyHostToDevice));
      const auto want = top2_reference<FloatKeys>(xf.data(), n);
      check_case<FloatKeys>(report, ours_float, nullptr, d_float.get(), n, want, out_float.get(),
                            std::string("float ") + p + at);
    }
  }

  // The seed's INT_MIN sentinel must fail these checks: if it passed, the tests
  // could not catch the bug.
  for (auto [p, n] : {std::pair<const char*, int64_t>{"all-int-min", 33}, {"int-min-second", 2}, {"negative", 1000}}) {
    make_ints(p, xi.data(), n, seed);
    CUDA_CHECK(cudaMemcpy(d_int.get(), xi.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
    sw::poison(out_int.get(), sizeof(Top2<int32_t>));
    top2_int_min_sentinel<<<1, kBlock>>>(d_int.get(), n, out_int.get());
    CHECK_LAUNCH();
    const auto got = fetch(out_int.get());
    const auto want = top2_reference<IntKeys>(xi.data(), n);
    report.check(!same(got, want), std::string("the checks catch the INT_MIN sentinel: ") + p + " n=" + std::to_string(n),
                 "sentinel gives " + describe(got) + ", want " + describe(want));
  }
  return report.exit_code();
}

// More than 2^31 elements: indices beyond int32 must come out right.
__global__ void fill_ramp(int32_t* x, int64_t n) {  // x[i] = i - 2^31: INT_MIN first, increasing
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = static_cast<int32_t>(i - (int64_t{1} << 31));
}

int verify_large(sw::Report& report, const sw::Gpu& gpu, uint64_t seed) {
  const int64_t n = kLargeN;
  sw::require_fits(gpu, "--large", n, sizeof(int32_t), partial_capacity() * sizeof(Top2<int32_t>) * 2.0);
  Top2Gpu<IntKeys> ours;
  CubTop2 cub;
  sw::DeviceBuffer<int32_t> d_x(n);
  sw::DeviceBuffer<Top2<int32_t>> d_out(1);
  const std::string at = " n=" + std::to_string(n);

  // Random int32 with INT_MAX planted beyond 2^31 (earlier INT_MAX may occur by chance;
  // the reference decides).
  const int64_t planted[] = {(int64_t{1} << 31) + 7, n - 1};
  const int32_t big = INT_MAX;
  sw::fill_ints(d_x.get(), n, seed);
  for (int64_t i : planted)
    CUDA_CHECK(cudaMemcpy(d_x.get() + i, &big, sizeof big, cudaMemcpyHostToDevice));
  {
    std::unique_ptr<int32_t[]> h(new int32_t[n]);
    sw::host_fill_ints(h.get(), n, seed);
    for (int64_t i : planted) h[i] = big;
    const auto want = top2_reference<IntKeys>(h.get(), n);
    check_case<IntKeys>(report, ours, &cub, d_x.get(), n, want, d_out.get(), "random-planted" + at);
  }
  // A ramp: the answer is the last two elements, both beyond 2^31.
  fill_ramp<<<1024, kBlock>>>(d_x.get(), n);
  CHECK_LAUNCH();
  const int64_t off = int64_t{1} << 31;
  const Top2<int32_t> want{static_cast<int32_t>(n - 1 - off), static_cast<int32_t>(n - 2 - off), n - 1, n - 2};
  check_case<IntKeys>(report, ours, &cub, d_x.get(), n, want, d_out.get(), "ascending" + at);
  return report.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = kDefaultN;
  bool large = false;
  sw::Cli cli("13_top2", "Top-2: the two largest int32 values and their indices.");
  cli.add_int("--n", &n, 2, sw::kMaxElements, "number of int32 elements (top-2 needs at least 2)");
  cli.add_flag("--large", &large, "with --verify-only: check more than 2^31 elements");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "13", "top2");
  const uint64_t seed = static_cast<uint64_t>(opt.seed);

  if (large) return verify_large(report, gpu, seed);
  if (opt.verify_only) return verify(report, seed);

  // --- benchmark ---------------------------------------------------------------------
  sw::require_fits(gpu, "--n", n, sizeof(int32_t), partial_capacity() * sizeof(Top2<int32_t>) * 2.0);
  sw::DeviceBuffer<int32_t> d_x(n);
  sw::DeviceBuffer<Top2<int32_t>> d_out(1);
  sw::fill_ints(d_x.get(), n, seed);
  std::unique_ptr<int32_t[]> h(new int32_t[n]);
  sw::host_fill_ints(h.get(), n, seed);  // the same values, computed on the host
  const auto want = top2_reference<IntKeys>(h.get(), n);
  const double bytes = static_cast<double>(n) * sizeof(int32_t);  // every element read once
  report.note("answer: " + describe(want));

  CubTop2 cub;
  sw::poison(d_out.get(), sizeof(Top2<int32_t>));
  sw::Timing t = sw::time_gpu(opt, [&] { cub.run(d_x.get(), n, d_out.get()); });
  report.add({"cub-reduce-top2", n, bytes, t, same(fetch(d_out.get()), want), "vendor"});

  Top2Gpu<IntKeys> ours;
  for (const Variant& v : kSteps) {
    int blocks = 0;
    sw::poison(d_out.get(), sizeof(Top2<int32_t>));
    t = sw::time_gpu(opt, [&] { blocks = ours.run(v, d_x.get(), n, d_out.get()); });
    sw::Result r{v.name, n, bytes, t, same(fetch(d_out.get()), want)};
    r.extra = {{"blocks", static_cast<double>(blocks)}};
    report.add(r);
  }

  // The CPU baseline, once: one core, the same insert loop.
  Top2<int32_t> cpu{};
  t = sw::time_cpu(0, 1, [&] { cpu = top2_serial<IntKeys>(h.get(), n); });
  report.add({"cpu-serial", n, bytes, t, same(cpu, want), "cpu"});
  return report.exit_code();
}
