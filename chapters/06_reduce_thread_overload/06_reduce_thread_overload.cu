// Chapter 06: fewer threads than elements (Brent's theorem), and the finish.
//
// What changed:  chapters 02-05 start one thread per element (or two), so most of
//                each block's life is the tree. Here the grid is sized from the
//                GPU, blocks_per_sm x SMs blocks, and each thread walks the array
//                with a grid-stride loop, adding in a register; the tree then runs
//                once per block instead of once per 512 elements. Each iteration
//                issues kUnroll independent 16-byte (float4) loads, so enough bytes
//                are in flight to cover DRAM latency; the last n % 4 floats are a
//                scalar tail. The block finishes with warp shuffles (chapter 05),
//                and every index is 64-bit. Three ways to combine the block sums:
//   two-pass            block sums to a buffer, then a second launch of the same
//                       kernel with one block adds them in a fixed order: the
//                       result is bitwise the same on every run (a test checks).
//   single-pass-atomic  each block atomicAdd()s its sum into the result (zeroed
//                       first): one launch, but the order of the float additions
//                       depends on which block finishes first, so the last bits
//                       can change from run to run. Not deterministic.
//   single-pass-last-block  one launch, and deterministic: each block writes its
//                       sum, and the last block to finish (a ticket counter) adds
//                       them all in a fixed order. Made for small sums. Its
//                       ticket is one acquire-release atomic; the classic two
//                       __threadfence()s are measured beside it in the small sums.
//                The small sums are launches more than bytes. Two more steps launch
//                with programmatic dependent launch (compute capability 9.0): the
//                next kernel in the stream starts while this one runs, and waits
//                on the GPU, not in a queue, for its results (pdl_wait):
//   two-pass-pdl                two-pass, both kernels launched that way
//   single-pass-last-block-pdl  single-pass-last-block, launched that way
// Why faster:    per element, a load and an add; the tree, its __syncthreads and
//                the block sums are paid once per block of ~n / grid elements.
// Bottleneck:    DRAM bandwidth: the goal is cub::DeviceReduce::Sum, measured in
//                the same run. The blocks-per-SM sweeps (four loads in flight per
//                thread, and one) show how many bytes in flight it takes. Below
//                2^20 floats the launches dominate: the small-sum rows time each
//                sum alone, back to back and in a CUDA graph, against an empty
//                kernel and CUB (problem "sum-latency").
// Steps:         two-pass, single-pass-atomic, single-pass-last-block, two-pass-pdl,
//                single-pass-last-block-pdl
// Files:         reduce_overload.cuh (the kernel, shared with 12 and 14); here the
//                finishes' kernel, every step's launcher and error depth, the step
//                table; overload_problem.cuh (the host code: sweeps, census, small sums).
// Run:           build/chapters/06_reduce_thread_overload [--n 2^28] [--block 256]
//                [--blocks-per-sm N] [--variant two-pass] [--verify-only [--large]] [--json]
#include <cstdint>
#include <cuda/atomic>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/reduce.h"
#include "overload_problem.cuh"
#include "reduce_overload.cuh"  // the kernel of this chapter, shared with 12 and 14

namespace ch06 {

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

// --- programmatic dependent launch: the last two steps ---------------------------------------

// The configuration of a launch through cudaLaunchKernelEx: kernel<<<grid, block, 0,
// stream>>> with programmatic dependent launch allowed (compute capability 9.0 and
// up; below it, a plain launch), so that the kernel may start while the kernel before
// it in the stream still runs (see ch06::pdl_wait).
struct PdlConfig {
  PdlConfig(int64_t grid, int block, cudaStream_t stream) {
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    config.gridDim = dim3(rd::grid_size(grid));
    config.blockDim = dim3(static_cast<unsigned>(block));
    config.stream = stream;
    config.attrs = &attr;
    config.numAttrs = sw::cc_major() >= 9 ? 1 : 0;
  }
  PdlConfig(const PdlConfig&) = delete;  // config points at attr
  PdlConfig& operator=(const PdlConfig&) = delete;

  cudaLaunchAttribute attr = {};
  cudaLaunchConfig_t config = {};
};

// two-pass-pdl: two-pass, both kernels launched with programmatic dependent launch.
inline void launch_two_pass_pdl(const rd::Sum& s) {
  const int64_t blocks = grid(s);
  const auto kernel = rd::kernel_for_block(
      s.block, [](auto b) { return reduce_overload<b, Finish::kPartials, ch06::kUnroll, true>; });
  const PdlConfig first(blocks, s.block, s.stream), second(1, s.block, s.stream);
  CUDA_CHECK(cudaLaunchKernelEx(&first.config, kernel, s.x, s.n, s.partials));
  CHECK_LAUNCH();
  CUDA_CHECK(cudaLaunchKernelEx(&second.config, kernel, s.partials, blocks, s.out));
  CHECK_LAUNCH();
}

// single-pass-last-block-pdl: the acquire-release ticket, launched the same way.
inline void launch_single_pass_last_block_pdl(const rd::Sum& s) {
  const int64_t blocks = grid(s);
  const auto kernel = rd::kernel_for_block(
      s.block, [](auto b) { return reduce_last_block<b, Ticket::kAcqRel, true>; });
  const PdlConfig config(blocks, s.block, s.stream);
  CUDA_CHECK(cudaLaunchKernelEx(&config.config, kernel, s.x, s.n, s.partials, s.ticket, s.out));
  CHECK_LAUNCH();
}

}  // namespace ch06

namespace {

namespace rd = sw::reduce;
using namespace ch06;

// The step table; the lesson runs on the step fastest at --n.
const std::vector<rd::Step> kSteps = {
    {"two-pass", launch_two_pass<>, depth_two_pass<>, "step", rd::kSameBits},
    {"single-pass-atomic", launch_single_pass_atomic, depth_single_pass_atomic},
    {"single-pass-last-block", launch_single_pass_last_block<Ticket::kAcqRel>,
     depth_single_pass_last_block, "step", rd::kSameBits},
    {"two-pass-pdl", launch_two_pass_pdl, depth_two_pass<>, "step", rd::kSameBits | rd::kNeedsPdl},
    {"single-pass-last-block-pdl", launch_single_pass_last_block_pdl, depth_single_pass_last_block,
     "step", rd::kSameBits | rd::kNeedsPdl},
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<rd::Step> program{
      "06_reduce_thread_overload",
      "Sum of floats: grid-stride float4 loads, shuffle finish, two-pass, atomic or last block.",
      "06", kSteps};
  OverloadProblem sum;
  sum.two_pass_unroll1 = {"two-pass-unroll1", launch_two_pass<1>, depth_two_pass<1>, "step",
                          rd::kSameBits};
  sum.last_block_fences = {"single-pass-last-block-fences",
                           launch_single_pass_last_block<Ticket::kFences>,
                           depth_single_pass_last_block, "step", rd::kSameBits};
  sum.offers_large = true;  // --verify-only --large: past 2^31 and 2^32 elements
  sum.block_help = "threads per block (a template parameter)";
  return sw::bench::run(argc, argv, program, sum);
}
