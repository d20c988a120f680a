// Chapter 06's three finishes, two-pass, single-pass-atomic and single-pass-last-block:
// the grid, each step's launcher (the first two launch reduce_overload, from
// reduce_overload.cuh; the last its own kernel, reduce_last_block, above its launcher)
// and each step's error depth. Included once, by 06_reduce_thread_overload.cu.
#pragma once

#include <cstdint>
#include <cuda/atomic>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/reduce_harness.h"
#include "reduce_overload.cuh"

namespace ch06 {

namespace rd = sw::reduce;

// --- the launchers: the grid from the GPU, every launch on s.stream ----------------------
// rd::kernel_for_block picks the kernel's template instance for the run-time block size.

// blocks_per_sm x SMs blocks, no more than the data keeps busy (grid_for).
template <int kUnroll = ch06::kUnroll>
int64_t grid(const rd::Sum& s) {
  return grid_for(s.n, s.block, s.blocks_per_sm, sw::sm_count(), kUnroll);
}

template <int kUnroll = ch06::kUnroll>
void launch_two_pass(const rd::Sum& s) {
  const int64_t blocks = grid<kUnroll>(s);
  const auto kernel = rd::kernel_for_block(
      s.block, [](auto b) { return reduce_overload<b, Finish::kPartials, kUnroll>; });
  kernel<<<rd::grid_size(blocks), s.block, 0, s.stream>>>(s.x, s.n, s.partials);
  CHECK_LAUNCH();
  // One block adds the block sums, in a fixed order.
  kernel<<<1, s.block, 0, s.stream>>>(s.partials, blocks, s.out);
  CHECK_LAUNCH();
}

inline void launch_single_pass_atomic(const rd::Sum& s) {
  const int64_t blocks = grid(s);
  const auto kernel =
      rd::kernel_for_block(s.block, [](auto b) { return reduce_overload<b, Finish::kAtomic>; });
  CUDA_CHECK(cudaMemsetAsync(s.out, 0, sizeof(float), s.stream));
  kernel<<<rd::grid_size(blocks), s.block, 0, s.stream>>>(s.x, s.n, s.out);
  CHECK_LAUNCH();
}

// --- the kernel beside reduce_overload, and its launcher ---------------------------------

// single-pass-last-block: each block writes its sum to partials[b]; the last block
// to take a ticket adds them all, in the same order whichever block it is. The
// ticket orders the memory: kFences, the classic form, puts a full fence
// (__threadfence) before taking it and another after; kAcqRel takes it with one
// atomic that releases this block's sum and acquires every earlier block's, which
// is all the pattern needs.
enum class Ticket { kFences, kAcqRel };

template <int kBlock, Ticket kTicket, bool kPdl = false>
__global__ void __launch_bounds__(kBlock)
    reduce_last_block(const float* __restrict__ x, int64_t n, float* partials, unsigned* ticket,
                      float* out) {
  if constexpr (kPdl) {
    ch06::pdl_wait();
    ch06::pdl_release();
  }
  const float sum = block_sum<kBlock>(thread_sum<kBlock>(x, n));
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
    if constexpr (kTicket == Ticket::kFences) {
      __threadfence();  // the sum reaches every block before the ticket does
      last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    } else {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
      last = t.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    }
  }
  __syncthreads();  // the block sees what its thread 0 acquired
  if (!last) return;
  if constexpr (kTicket == Ticket::kFences)
    __threadfence();  // every other block's sum is visible now
  float v = 0.0f;     // read from L2 (__ldcg), where the other blocks' sums are, not from L1
  for (int64_t b = threadIdx.x; b < gridDim.x; b += kBlock) v += __ldcg(partials + b);
  v = block_sum<kBlock>(v);
  if (threadIdx.x == 0) {
    out[0] = v;
    *ticket = 0;  // ready for the next launch
  }
}

template <Ticket kTicket>
void launch_single_pass_last_block(const rd::Sum& s) {
  const int64_t blocks = grid(s);
  const auto kernel =
      rd::kernel_for_block(s.block, [](auto b) { return reduce_last_block<b, kTicket>; });
  kernel<<<rd::grid_size(blocks), s.block, 0, s.stream>>>(s.x, s.n, s.partials, s.ticket, s.out);
  CHECK_LAUNCH();
}

// --- error bounds -------------------------------------------------------------------------

// Each launch's depth is ch06::launch_depth (reduce_overload.cuh).
template <int kUnroll = ch06::kUnroll>
int64_t depth_two_pass(const rd::Sum& s) {
  const int64_t blocks = grid<kUnroll>(s);
  return launch_depth(s.n, blocks * s.block) + launch_depth(blocks, s.block);
}

inline int64_t depth_single_pass_atomic(const rd::Sum& s) {
  const int64_t blocks = grid(s);
  return launch_depth(s.n, blocks * s.block) +
         blocks;  // the atomics add the block sums in some order
}

// The last block: one thread adds ceil(blocks / block) sums, then block_sum's 10 levels.
inline int64_t depth_single_pass_last_block(const rd::Sum& s) {
  const int64_t blocks = grid(s);
  return launch_depth(s.n, blocks * s.block) + sw::ceil_div(blocks, s.block) + 10;
}

}  // namespace ch06
