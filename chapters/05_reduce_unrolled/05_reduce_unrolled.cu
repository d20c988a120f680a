// Chapter 05: the tree unrolled at compile time, the first add done while loading,
// and three ways to finish the last warp.
//
// What changed:  (1) the block size is a template parameter, so every level of
//                the tree is a constant: the loop, its counter and its branch
//                disappear, and levels that the block size rules out are not
//                compiled at all. (2) Each thread loads two elements, kBlock
//                apart, and adds them before the tree: a block covers 2 * kBlock
//                elements, so no thread idles in the first level and half as many
//                blocks are launched. (3) Once 64 values are left, one warp
//                finishes them without __syncthreads, in three ways:
//   volatile-warp  ANTI-EXAMPLE. The classic "warp-synchronous" code: volatile
//                  shared memory and no synchronization, trusting the 32 threads
//                  of a warp to run in lockstep. Since Volta, threads of a warp
//                  are scheduled independently and nothing promises that; it is
//                  a data race (compute-sanitizer --tool racecheck reports it; a
//                  test checks that). Measured only as role "anti-example".
//   syncwarp       the same shared-memory steps, each write and read separated by
//                  __syncwarp(): correct, and racecheck is clean.
//   shuffle        __shfl_down_sync: the values move between the warp's registers,
//                  no shared memory, no volatile, no barrier but the shuffle's own.
// The finish:    unchanged: chapter 03's passes (ch03::Pass), again over the block
//                sums.
// Why faster:    fewer instructions per element (no loop overhead, half the
//                blocks, no idle first level) and 5 fewer __syncthreads per block.
// Bottleneck:    approaching DRAM bandwidth; what is left is one pass per block
//                over the data plus the launch of each pass (see chapter 06).
// Steps:         volatile-warp, syncwarp, shuffle
// Run:           build/chapters/05_reduce_unrolled [--n 2^28] [--block 256]
//                [--variant shuffle] [--verify-only] [--json]
#include <cstdint>
#include <vector>

#include "chapters/03_reduce_shared/multi_pass.cuh"  // chapter 03's finish: launch again over the block sums
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/reduce.h"
#include "common/verify.h"

namespace {

namespace rd = sw::reduce;

using sw::kFullMask;
using sw::kWarp;

// --- the kernels: one unrolled tree, three last warps --------------------------------------

// Loads this block's 2 * kBlock elements (the first add during the load) and
// runs the tree, unrolled, down to 64 values; returns the shared array that holds
// them in s[0..63]. Every level is a constant; absent levels vanish.
template <int kBlock>
__device__ __forceinline__ float* load_and_tree(const float* x, int64_t n) {
  static_assert(kBlock >= kWarp && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0,
                "a power of two from 32 to 1024");
  // The last warp reads s[tid + 32], so a 32-thread block gets 32 zeros of padding.
  constexpr int kShared = kBlock < 2 * kWarp ? 2 * kWarp : kBlock;
  __shared__ float s[kShared];
  const int tid = threadIdx.x;

  const int64_t i = static_cast<int64_t>(blockIdx.x) * (2 * kBlock) + tid;
  float v = i < n ? x[i] : 0.0f;
  if (i + kBlock < n) v += x[i + kBlock];
  s[tid] = v;
  if constexpr (kBlock < 2 * kWarp) s[tid + kWarp] = 0.0f;
  __syncthreads();

  // one line per level of the unrolled tree
  // clang-format off
  if constexpr (kBlock >= 1024) { if (tid < 512) s[tid] += s[tid + 512]; __syncthreads(); }
  if constexpr (kBlock >= 512) { if (tid < 256) s[tid] += s[tid + 256]; __syncthreads(); }
  if constexpr (kBlock >= 256) { if (tid < 128) s[tid] += s[tid + 128]; __syncthreads(); }
  if constexpr (kBlock >= 128) { if (tid < 64) s[tid] += s[tid + 64]; __syncthreads(); }
  // clang-format on
  return s;
}

// ANTI-EXAMPLE: lane t reads what lane t + offset writes in the same step, with
// nothing ordering the two. volatile only stops the compiler from keeping values
// in registers; it does not synchronize the lanes.
template <int kBlock>
__global__ void reduce_volatile_warp(const float* x, float* out, int64_t n) {
  volatile float* vs = load_and_tree<kBlock>(x, n);
  const int tid = threadIdx.x;
  if (tid >= kWarp) return;  // warp 0 finishes
  vs[tid] += vs[tid + 32];
  vs[tid] += vs[tid + 16];
  vs[tid] += vs[tid + 8];
  vs[tid] += vs[tid + 4];
  vs[tid] += vs[tid + 2];
  vs[tid] += vs[tid + 1];
  if (tid == 0) out[blockIdx.x] = vs[0];
}

template <int kBlock>
__global__ void reduce_syncwarp(const float* x, float* out, int64_t n) {
  float* s = load_and_tree<kBlock>(x, n);
  const int tid = threadIdx.x;
  if (tid >= kWarp) return;
  float w = s[tid] + s[tid + 32];
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    s[tid] = w;    // publish this lane's value
    __syncwarp();  // ... before any lane reads it
    w += s[tid + offset];
    __syncwarp();  // every read done before the next write
  }
  if (tid == 0) out[blockIdx.x] = w;
}

template <int kBlock>
__global__ void reduce_shuffle(const float* x, float* out, int64_t n) {
  const float* s = load_and_tree<kBlock>(x, n);
  const int tid = threadIdx.x;
  if (tid >= kWarp) return;
  float w = s[tid] + s[tid + 32];
  // lab warp-shuffle: begin
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) w += __shfl_down_sync(kFullMask, w, offset);
  // lab warp-shuffle: end
  if (tid == 0) out[blockIdx.x] = w;
}

// --- the whole sum: kernel b of --block threads, each block summing 2 * b floats ----------
// rd::kernel_for_block picks the template instance for the run-time block size.

void launch_volatile_warp(const rd::Sum& s) {
  const auto kernel = rd::kernel_for_block(s.block, [](auto b) { return reduce_volatile_warp<b>; });
  for (ch03::Pass p(s, 2 * s.block); !p.done(); p.next()) {
    kernel<<<rd::grid_size(p.blocks), s.block>>>(p.in, p.out, p.count);
    CHECK_LAUNCH();
  }
}

void launch_syncwarp(const rd::Sum& s) {
  const auto kernel = rd::kernel_for_block(s.block, [](auto b) { return reduce_syncwarp<b>; });
  for (ch03::Pass p(s, 2 * s.block); !p.done(); p.next()) {
    kernel<<<rd::grid_size(p.blocks), s.block>>>(p.in, p.out, p.count);
    CHECK_LAUNCH();
  }
}

void launch_shuffle(const rd::Sum& s) {
  const auto kernel = rd::kernel_for_block(s.block, [](auto b) { return reduce_shuffle<b>; });
  for (ch03::Pass p(s, 2 * s.block); !p.done(); p.next()) {
    kernel<<<rd::grid_size(p.blocks), s.block>>>(p.in, p.out, p.count);
    CHECK_LAUNCH();
  }
}

// Per pass: the add at load, log2(block) levels, one more for the padded 32-block.
int64_t depth_unrolled(const rd::Sum& s) {
  const int64_t per_block = 2 * int64_t{s.block};
  return ch03::passes(s.n, per_block) * (sw::ceil_log2(per_block) + 1);
}

// The step table; the lesson runs on the last step.
const std::vector<rd::Step> kSteps = {
    {"volatile-warp", launch_volatile_warp, depth_unrolled, "anti-example"},
    {"syncwarp", launch_syncwarp, depth_unrolled},
    {"shuffle", launch_shuffle, depth_unrolled},
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<rd::Step> program{
      "05_reduce_unrolled",
      "Sum of floats: an unrolled tree, first add at load, three last-warp finishes.", "05",
      kSteps};
  rd::SumProblem sum;
  sum.block_help = "threads per block (a template parameter)";
  return sw::bench::run(argc, argv, program, sum);
}
