// Chapter 06's last two steps, two-pass-pdl and single-pass-last-block-pdl: the
// kernels of reduce_finishes.cuh, launched with programmatic dependent launch
// (launch_pdl), so that each may start while the kernel before it still runs.
// Included once, by 06_reduce_thread_overload.cu.
#pragma once

#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/reduce_harness.h"
#include "reduce_finishes.cuh"
#include "reduce_overload.cuh"

namespace ch06 {

namespace rd = sw::reduce;

// Launches kernel<<<grid, block, 0, stream>>>(args...) with programmatic dependent
// launch allowed (compute capability 9.0 and up; below it, a plain launch): it may
// start while the kernel before it in the stream still runs (see ch06::pdl_wait).
template <class... Params, class... Args>
void launch_pdl(void (*kernel)(Params...), int64_t grid, int block, cudaStream_t stream,
                Args... args) {
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(rd::grid_size(grid));
  config.blockDim = dim3(static_cast<unsigned>(block));
  config.stream = stream;
  config.attrs = &attr;
  config.numAttrs = sw::cc_major() >= 9 ? 1 : 0;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...));
  CHECK_LAUNCH();
}

// two-pass-pdl: two-pass, both kernels launched with programmatic dependent launch.
inline void launch_two_pass_pdl(const rd::Sum& s) {
  const int64_t blocks = grid(s);
  rd::dispatch_block(s.block, [&](auto b) {
    constexpr int kB = decltype(b)::value;
    constexpr auto kernel = reduce_overload<kB, Finish::kPartials, ch06::kUnroll, true>;
    launch_pdl(kernel, blocks, kB, s.stream, s.x, s.n, s.partials);
    launch_pdl(kernel, 1, kB, s.stream, s.partials, blocks, s.out);
  });
}

// single-pass-last-block-pdl: the acquire-release ticket, launched the same way.
inline void launch_single_pass_last_block_pdl(const rd::Sum& s) {
  const int64_t blocks = grid(s);
  rd::dispatch_block(s.block, [&](auto b) {
    constexpr int kB = decltype(b)::value;
    launch_pdl(reduce_last_block<kB, Ticket::kAcqRel, true>, blocks, kB, s.stream, s.x, s.n,
               s.partials, s.ticket, s.out);
  });
}

}  // namespace ch06
