// Chapter 13: top-2, the two largest elements of an array and where they are.
//
// What changed:  chapters 02-06 combined partial results with +. Here two partial
//                results are combined by merging two top-2 lists: four values (two
//                keys, two indices) instead of one, so the merge costs more registers
//                and more shuffles, but the shape of the reduction is the same.
// Semantics:     int32 elements ranked by value, equal values by the smaller index first;
//                the answer is the first two of that ranking, so a repeated maximum gives
//                (max at its first index, max at its second). An empty slot is index -1,
//                never a sentinel value: the seed's INT_MIN sentinel cannot report an
//                INT_MIN element (the checks show it). --n starts at 2.
// Versions:      thread-pairs  each thread keeps a top-2 in registers during a
//                              grid-stride pass and writes it to memory
//                shared-tree   + the block merges its threads' pairs in a shared-memory
//                              tree (the seed's version, with the indices added)
//                warp-shuffle  + the block merges with __shfl_xor_sync instead
//                shuffle-int4  + 16-byte loads, two in flight per thread
//                Every step ends with a second pass: one block merges the results of
//                the first pass in a fixed order, so the answer is deterministic.
// Steps:         thread-pairs, shared-tree, warp-shuffle, shuffle-int4
// Bottleneck:    DRAM read bandwidth once the merge is cheap. Goal: at least
//                cub::DeviceReduce::Reduce with the same merge as its operator.
// Exercise:      float input: rank by an unsigned key of the float's bits (NaN above
//                +inf, -0 equal to +0) and make these kernels a template on the key.
// Files:         this file (each thread's grid-stride pass, the block merges, the second
//                pass, the steps, the step table, main); top2_merge.cuh (ranking, merge,
//                insert); top2_cub.cu (the vendor); top2_problem.h (the data, what the
//                protocol checks, Top2Problem: the problem sw::bench::run runs) with
//                top2_problem.cu (the rows, the CPU reference and baseline).
// Protocol:      every GPU row is measured by sw::bench::measure (common/bench/protocol.h),
//                which calls the launcher itself: main -> sw::bench::run ->
//                Top2Problem::bench -> measure -> launch_<step> -> <<<>>>.
// Checks:        top2_checks.cu (--verify-only, --large).
// Run:           build/chapters/13_top2 [--n 2^28 | --large] [--variant shuffle-int4]
//                [--verify-only] [--json]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/bench/program.h"
#include "common/bench/step.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "top2_merge.cuh"
#include "top2_problem.h"

namespace {

using namespace ch13;  // Top2 and what top2_merge.cuh defines

constexpr int kBlock = 256;        // threads per block of the first pass
constexpr int kVec = 4;            // int32 per 16-byte load
constexpr int kUnroll = 2;         // 16-byte loads in flight per thread
constexpr int kFinalBlock = 1024;  // threads of the single block of the second pass

// --- each thread's top-2: a grid-stride pass in increasing index order (insert's precondition)

__device__ __forceinline__ Top2 thread_top2(const int32_t* __restrict__ x, int64_t n) {
  Top2 t = empty_top2();
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kBlock;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < n; i += threads)
    insert(t, x[i], i);
  return t;
}

__device__ __forceinline__ void insert4(Top2& t, const int4& q, int64_t i) {
  insert(t, q.x, i), insert(t, q.y, i + 1), insert(t, q.z, i + 2), insert(t, q.w, i + 3);
}

// The same with 16-byte loads, kUnroll in flight, then the n % 4 tail. x 16-byte aligned.
__device__ __forceinline__ Top2 thread_top2_int4(const int32_t* __restrict__ x, int64_t n) {
  Top2 t = empty_top2();
  const int4* x4 = reinterpret_cast<const int4*>(x);
  const int64_t n4 = n / kVec;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kBlock;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  int64_t v = first;
  for (; v + (kUnroll - 1) * threads < n4; v += kUnroll * threads) {
    int4 q[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) q[u] = x4[v + u * threads];  // all loads first
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) insert4(t, q[u], (v + u * threads) * kVec);
  }
  for (; v < n4; v += threads) insert4(t, x4[v], v * kVec);
  for (int64_t e = kVec * n4 + first; e < n; e += threads) insert(t, x[e], e);  // the n % 4 tail
  return t;
}

// --- block merges: thread 0 ends with the block's top-2 --------------------------------------

__device__ __forceinline__ Top2 shfl_xor(const Top2& t, int lane_mask) {
  Top2 o;
  o.k1 = __shfl_xor_sync(sw::kFullMask, t.k1, lane_mask);
  o.k2 = __shfl_xor_sync(sw::kFullMask, t.k2, lane_mask);
  o.i1 = __shfl_xor_sync(sw::kFullMask, static_cast<long long>(t.i1), lane_mask);
  o.i2 = __shfl_xor_sync(sw::kFullMask, static_cast<long long>(t.i2), lane_mask);
  return o;
}

// Butterfly over the warp: every lane ends with the warp's top-2. Partners are
// always different lanes, so no element is merged with itself.
__device__ __forceinline__ Top2 warp_merge(Top2 t) {
// lab top2-merge: begin
#pragma unroll
  for (int m = sw::kWarp / 2; m > 0; m >>= 1) t = merge(t, shfl_xor(t, m));
  return t;
  // lab top2-merge: end
}

// Warps merge with shuffles, then warp 0 merges the warps' results.
template <int kThreads>
__device__ Top2 block_merge_shuffle(Top2 t) {
  static_assert(kThreads % sw::kWarp == 0 && kThreads / sw::kWarp <= sw::kWarp,
                "one warp merges the warps");
  constexpr int kWarps = kThreads / sw::kWarp;
  __shared__ Top2 warp_best[kWarps];
  const int lane = threadIdx.x % sw::kWarp, warp = threadIdx.x / sw::kWarp;
  t = warp_merge(t);
  if (lane == 0) warp_best[warp] = t;
  __syncthreads();
  if (warp == 0) t = warp_merge(lane < kWarps ? warp_best[lane] : empty_top2());
  return t;
}

// The seed's tree in shared memory: halve the active threads each round.
template <int kThreads>
__device__ Top2 block_merge_shared(Top2 t) {
  static_assert((kThreads & (kThreads - 1)) == 0, "the tree halves a power of two");
  __shared__ Top2 s[kThreads];
  s[threadIdx.x] = t;
  __syncthreads();
  // lab top2-merge: begin
  for (int h = kThreads / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] = merge(s[threadIdx.x], s[threadIdx.x + h]);
    __syncthreads();  // outside the if: the seed synchronizes inside it, which is undefined
  }
  // lab top2-merge: end
  return s[0];
}

// --- second pass: one block merges `count` first-pass results in a fixed order ---------------

__global__ void __launch_bounds__(kFinalBlock)
    top2_final(const Top2* __restrict__ in, int64_t count, Top2* __restrict__ out) {
  Top2 t = empty_top2();
  for (int64_t i = threadIdx.x; i < count; i += kFinalBlock) t = merge(t, in[i]);
  t = block_merge_shuffle<kFinalBlock>(t);
  if (threadIdx.x == 0) *out = t;
}

// --- the steps: one first-pass kernel each, then the second pass ------------------------------

// thread-pairs: every thread writes its own top-2; the second pass merges them all.
__global__ void __launch_bounds__(kBlock)
    top2_thread_pairs(const int32_t* __restrict__ x, int64_t n, Top2* out) {
  out[static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x] = thread_top2(x, n);
}
int64_t launch_thread_pairs(const int32_t* x, int64_t n, Buffers& b) {
  static const int64_t resident = sw::resident_grid(top2_thread_pairs, kBlock);
  const int64_t grid =
      std::min(resident, sw::ceil_div(n, kBlock));  // all resident blocks, fewer for small n
  top2_thread_pairs<<<grid, kBlock>>>(x, n, b.partials.get());
  CHECK_LAUNCH();
  top2_final<<<1, kFinalBlock>>>(b.partials.get(), grid * kBlock, b.out.get());
  CHECK_LAUNCH();
  return grid;
}

// shared-tree: the block merges its threads' top-2s in a shared-memory tree.
__global__ void __launch_bounds__(kBlock)
    top2_shared_tree(const int32_t* __restrict__ x, int64_t n, Top2* out) {
  const Top2 t = block_merge_shared<kBlock>(thread_top2(x, n));
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}
int64_t launch_shared_tree(const int32_t* x, int64_t n, Buffers& b) {
  static const int64_t resident = sw::resident_grid(top2_shared_tree, kBlock);
  const int64_t grid = std::min(resident, sw::ceil_div(n, kBlock));
  top2_shared_tree<<<grid, kBlock>>>(x, n, b.partials.get());
  CHECK_LAUNCH();
  top2_final<<<1, kFinalBlock>>>(b.partials.get(), grid, b.out.get());
  CHECK_LAUNCH();
  return grid;
}

// warp-shuffle: the block merges with shuffles within each warp, then across warps.
__global__ void __launch_bounds__(kBlock)
    top2_warp_shuffle(const int32_t* __restrict__ x, int64_t n, Top2* out) {
  const Top2 t = block_merge_shuffle<kBlock>(thread_top2(x, n));
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}
int64_t launch_warp_shuffle(const int32_t* x, int64_t n, Buffers& b) {
  static const int64_t resident = sw::resident_grid(top2_warp_shuffle, kBlock);
  const int64_t grid = std::min(resident, sw::ceil_div(n, kBlock));
  top2_warp_shuffle<<<grid, kBlock>>>(x, n, b.partials.get());
  CHECK_LAUNCH();
  top2_final<<<1, kFinalBlock>>>(b.partials.get(), grid, b.out.get());
  CHECK_LAUNCH();
  return grid;
}

// shuffle-int4: the same merge, 16-byte loads. A start that is not 16-byte aligned
// falls back to warp-shuffle.
__global__ void __launch_bounds__(kBlock)
    top2_shuffle_int4(const int32_t* __restrict__ x, int64_t n, Top2* out) {
  const Top2 t = block_merge_shuffle<kBlock>(thread_top2_int4(x, n));
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}
int64_t launch_shuffle_int4(const int32_t* x, int64_t n, Buffers& b) {
  static const int64_t resident = sw::resident_grid(top2_shuffle_int4, kBlock);
  static const int64_t resident_warp = sw::resident_grid(top2_warp_shuffle, kBlock);
  int64_t grid = 0;
  if (reinterpret_cast<uintptr_t>(x) % sizeof(int4) == 0) {
    grid = std::min(resident, sw::ceil_div(n, kBlock * kVec));
    top2_shuffle_int4<<<grid, kBlock>>>(x, n, b.partials.get());
  } else {  // warp-shuffle's first pass
    grid = std::min(resident_warp, sw::ceil_div(n, kBlock));
    top2_warp_shuffle<<<grid, kBlock>>>(x, n, b.partials.get());
  }
  CHECK_LAUNCH();
  top2_final<<<1, kFinalBlock>>>(b.partials.get(), grid, b.out.get());
  CHECK_LAUNCH();
  return grid;
}

// --- the step table ---------------------------------------------------------------------------

const Step kCub{"cub-reduce-top2", launch_cub, {}, "vendor"};
const std::vector<Step> kSteps = {
    {"thread-pairs", launch_thread_pairs},
    {"shared-tree", launch_shared_tree},
    {"warp-shuffle", launch_warp_shuffle},
    {"shuffle-int4", launch_shuffle_int4},
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<ch13::Step> program{
      "13_top2", "Top-2: the two largest int32 values and their indices.", "13", kSteps};
  return sw::bench::run(argc, argv, program, ch13::Top2Problem{kCub});
}
