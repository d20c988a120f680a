// Chapter 03's finish, reused by chapters 04 and 05: launch the kernel again over
// the block sums until one value is left, so the whole sum stays on the GPU (the
// paper's recursive launches).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/reduce_harness.h"

namespace ch03 {

// A pass: blocks turn the `count` values of `in` into one sum per block in `out`.
using PassKernel = void (*)(const float* in, float* out, int64_t count);

// Launches `kernel` over the input, then over the block sums it wrote, and so on,
// until a single block writes the sum to s.out. Each block has `threads` threads,
// sums `per_block` values and gets `shared_bytes` of dynamic shared memory. A pass
// never reads the buffer it writes: the block sums alternate between two buffers.
inline void launch_passes(const sw::reduce::Sum& s, PassKernel kernel, int threads,
                          int64_t per_block, size_t shared_bytes = 0) {
  const float* in = s.x;
  int64_t count = s.n;
  for (int pass = 0;; ++pass) {
    const int64_t blocks = sw::ceil_div(count, per_block);
    float* out = blocks == 1 ? s.out : pass % 2 == 0 ? s.partials : s.partials2;
    kernel<<<sw::reduce::grid_size(blocks), threads, shared_bytes>>>(in, out, count);
    CHECK_LAUNCH();
    if (blocks == 1) return;
    in = out;
    count = blocks;
  }
}

// How many passes launch_passes makes over n values: the error bound counts the
// tree of every pass.
inline int64_t passes(int64_t n, int64_t per_block) {
  int64_t p = 1;
  for (int64_t count = n; count > per_block; count = sw::ceil_div(count, per_block)) ++p;
  return p;
}

}  // namespace ch03
