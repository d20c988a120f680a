// Chapter 12's kernels, two-pass-float4's two passes. Their own header because the C ABI
// library (abi/dot_abi.cu) runs them too: a self-contained unit, included at the top of
// 12_dot_product.cu and of the library, once in each (it defines the kernels). Each
// launcher (the program's in 12_dot_product.cu, and the library's, which returns its
// errors where the program's exit on them) launches both passes itself.
//
// Chapter 06's reduce_overload sums one vector; a dot product reads two and multiplies,
// so the main loop is its own (two float4 loads, four fmaf chains per thread). The
// block sums are CUB's BlockReduce: chapters 05 and 06 built one; here the library's
// does that part, and chapter 12's lessons are about what lies around the kernel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cub/block/block_reduce.cuh>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/vec16.cuh"

namespace dot {

constexpr int kBlock = 256;            // threads per block, in both passes
constexpr int kVec = sw::kVec<float>;  // floats per float4
// CUB's default block reduction (warp shuffles, then the warps' sums in order): 5
// levels in a warp and kBlock / 32 - 1 more for the warps, 12 roundings at most.
using BlockSum = cub::BlockReduce<float, kBlock>;
constexpr int kBlockSumDepth = 5 + kBlock / 32 - 1;

// Each thread adds x[i] * y[i] over a grid-stride range of float4s (then the n % 4
// tail); block b writes its sum to partials[b]. x and y must be 16-byte aligned
// (cudaMalloc gives 256).
__global__ void __launch_bounds__(kBlock)
    dot_partials(const float* __restrict__ x, const float* __restrict__ y, int64_t n,
                 float* __restrict__ partials) {
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const float4* y4 = reinterpret_cast<const float4*>(y);
  const int64_t n4 = n / kVec;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kBlock;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // one accumulator per lane: 4 chains
  // lab dot-grid-stride: begin
  for (int64_t i = first; i < n4; i += threads) {
    const float4 a = x4[i], b = y4[i];
    acc.x = fmaf(a.x, b.x, acc.x);
    acc.y = fmaf(a.y, b.y, acc.y);
    acc.z = fmaf(a.z, b.z, acc.z);
    acc.w = fmaf(a.w, b.w, acc.w);
  }
  for (int64_t i = n4 * kVec + first; i < n; i += threads) acc.x = fmaf(x[i], y[i], acc.x);
  // lab dot-grid-stride: end
  __shared__ BlockSum::TempStorage temp;
  const float s = BlockSum(temp).Sum((acc.x + acc.y) + (acc.z + acc.w));
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

// The second pass: one block adds `count` block sums, each thread a strided share in
// order, then the block sum; the same order every run.
__global__ void __launch_bounds__(kBlock)
    dot_final(const float* __restrict__ partials, int64_t count, float* __restrict__ out) {
  float v = 0.0f;
  for (int64_t i = threadIdx.x; i < count; i += kBlock) v += partials[i];
  __shared__ BlockSum::TempStorage temp;
  const float s = BlockSum(temp).Sum(v);
  if (threadIdx.x == 0) *out = s;
}

// Blocks of the first pass: one per kBlock float4s, at most max_blocks (one full wave).
inline int64_t blocks_for(int64_t n, int64_t max_blocks) {
  return std::clamp<int64_t>(sw::ceil_div(n, int64_t{kBlock} * kVec), 1, max_blocks);
}

}  // namespace dot
