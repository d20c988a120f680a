// Chapter 06's last two steps, two-pass-pdl and single-pass-last-block-pdl: the
// kernels of reduce_finishes.cuh, launched with programmatic dependent launch
// (cudaLaunchKernelEx with a PdlConfig), so that each may start while the kernel
// before it still runs.
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
