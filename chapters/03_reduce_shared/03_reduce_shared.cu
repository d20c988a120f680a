// Chapter 03: the block's tree moves into shared memory; three ways to address it.
//
// What changed:  each block copies its elements into a static __shared__ array
//                once (zeros pad the last block), sums them there, and writes one
//                value; the input is no longer overwritten. The block sums are
//                summed by launching the same kernel again until one value is
//                left (each launcher's loop over ch03::Pass, in multi_pass.cuh),
//                so the whole sum stays on the GPU. Three addressing schemes of
//                the tree, one run:
//   interleaved-modulo   thread t works when t % (2*stride) == 0: the working
//                        threads are scattered over every warp, so warps diverge,
//                        and % costs a dozen integer instructions.
//   interleaved-strided  thread t works on index 2*stride*t: the working threads
//                        are packed into the first warps (no divergence), but
//                        their addresses are 2*stride floats apart, so they fall
//                        into the same shared-memory banks (bank conflicts).
//   sequential           thread t < stride adds t + stride: packed threads and
//                        consecutive addresses, conflict-free.
// Why faster:    shared memory is on-chip: the tree's log2(256) levels no longer
//                go through L1/L2, and global memory is read exactly once.
// Bottleneck:    the tree itself: half of the threads idle after the load, one
//                __syncthreads per level, and the loop overhead.
// Steps:         interleaved-modulo, interleaved-strided, sequential
// Run:           build/chapters/03_reduce_shared [--n 2^28]
//                [--variant sequential] [--verify-only] [--json]
#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/problems/reduce.h"
#include "common/verify.h"
#include "multi_pass.cuh"  // Pass: this chapter's finish, reused by 04 and 05

namespace {

namespace rd = sw::reduce;

// Static shared memory needs its size at compile time, so the block size is
// fixed here; chapter 04 makes it a run-time option.
constexpr int kBlock = 256;

// --- the kernels: one load, three trees ---------------------------------------------------
// The loops are kept as loops (unroll 1), as in the classic code: unrolling is
// chapter 05's step.

// Block b copies x[b * kBlock ...] into s, padded with zeros past n (adding
// them is exact).
__device__ __forceinline__ void load_block(float* s, const float* x, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
}

__global__ void reduce_interleaved_modulo(const float* x, float* out, int64_t n) {
  __shared__ float s[kBlock];
  load_block(s, x, n);
  const int tid = threadIdx.x;
#pragma unroll 1
  for (int stride = 1; stride < kBlock; stride *= 2) {
    if (tid % (2 * stride) == 0) {  // the threads whose index is a multiple of 2 * stride
      s[tid] += s[tid + stride];
    }
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce_interleaved_strided(const float* x, float* out, int64_t n) {
  __shared__ float s[kBlock];
  load_block(s, x, n);
  const int tid = threadIdx.x;
#pragma unroll 1
  for (int stride = 1; stride < kBlock; stride *= 2) {
    const int index = 2 * stride * tid;
    if (index < kBlock) s[index] += s[index + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce_sequential(const float* x, float* out, int64_t n) {
  __shared__ float s[kBlock];
  load_block(s, x, n);
  const int tid = threadIdx.x;
  // lab shared-tree: begin
#pragma unroll 1
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  // lab shared-tree: end
  if (tid == 0) out[blockIdx.x] = s[0];
}

// --- the whole sum: the kernel over x, then over its block sums, until one is left ---------
// kBlock threads per block, one float each.

void launch_interleaved_modulo(const rd::Sum& s) {
  for (ch03::Pass p(s, kBlock); !p.done(); p.next()) {
    reduce_interleaved_modulo<<<rd::grid_size(p.blocks), kBlock>>>(p.in, p.out, p.count);
    CHECK_LAUNCH();
  }
}
void launch_interleaved_strided(const rd::Sum& s) {
  for (ch03::Pass p(s, kBlock); !p.done(); p.next()) {
    reduce_interleaved_strided<<<rd::grid_size(p.blocks), kBlock>>>(p.in, p.out, p.count);
    CHECK_LAUNCH();
  }
}
void launch_sequential(const rd::Sum& s) {
  for (ch03::Pass p(s, kBlock); !p.done(); p.next()) {
    reduce_sequential<<<rd::grid_size(p.blocks), kBlock>>>(p.in, p.out, p.count);
    CHECK_LAUNCH();
  }
}

// Every pass is a tree of log2(kBlock) levels.
int64_t depth_shared(const rd::Sum& s) { return ch03::passes(s.n, kBlock) * sw::ceil_log2(kBlock); }

// The step table; the lesson runs on the last step.
const std::vector<rd::Step> kSteps = {
    {"interleaved-modulo", launch_interleaved_modulo, depth_shared},
    {"interleaved-strided", launch_interleaved_strided, depth_shared},
    {"sequential", launch_sequential, depth_shared},
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<rd::Step> program{
      "03_reduce_shared", "Sum of floats: a shared-memory tree, three addressing schemes.", "03",
      kSteps};
  return sw::bench::run(argc, argv, program, rd::SumProblem{kBlock});  // compiled in: no --block
}
