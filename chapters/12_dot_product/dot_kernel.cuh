// The dot product kernels, shared by 12_dot_product.cu and the C ABI library
// (dot_abi.cu). Nothing here exits: every host function returns a cudaError_t, so
// that a library can hand the error to its caller.
//
// Two passes, deterministic for a given grid:
//   1. dot_partials: each thread accumulates x[i] * y[i] over a grid-stride range
//      (16-byte loads, one float accumulator per vector lane), the block sums its
//      threads with warp shuffles, and each block writes one partial sum.
//   2. sum_partials: one block adds the partial sums in a fixed order.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace dot {

constexpr int kBlock = 256;        // threads per block of the first pass
constexpr int kFinalBlock = 1024;  // threads of the single block of the second pass
constexpr int kWarp = 32;
constexpr int kVec = 4;            // floats per 16-byte load
constexpr unsigned kFullMask = 0xffffffffu;

// log2 of a power of two, at compile time.
constexpr int log2_exact(int v) { return v <= 1 ? 0 : 1 + log2_exact(v / 2); }

// Sum over the block; thread 0 gets it. The order is fixed, so the result is too.
template <int kThreads>
__device__ float block_sum(float v) {
  static_assert(kThreads % kWarp == 0 && kThreads / kWarp <= kWarp, "one warp adds the warps");
  constexpr int kWarps = kThreads / kWarp;
  __shared__ float warp_sums[kWarps];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
#pragma unroll
  for (int o = kWarp / 2; o > 0; o >>= 1) v += __shfl_down_sync(kFullMask, v, o);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warp_sums[lane] : 0.0f;
#pragma unroll
    for (int o = kWarp / 2; o > 0; o >>= 1) v += __shfl_down_sync(kFullMask, v, o);
  }
  return v;
}

// First pass. kAligned: x and y are 16-byte aligned, so float4 loads are legal.
template <bool kAligned>
__global__ void __launch_bounds__(kBlock)
    dot_partials(const float* __restrict__ x, const float* __restrict__ y, int64_t n,
                 float* __restrict__ partials) {
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kBlock;
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // one accumulator per lane: 4 chains
  int64_t scalar_from = 0;
  if constexpr (kAligned) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const float4* y4 = reinterpret_cast<const float4*>(y);
    const int64_t n4 = n / kVec;
    for (int64_t i = tid; i < n4; i += threads) {
      const float4 a = x4[i], b = y4[i];
      acc.x = fmaf(a.x, b.x, acc.x);
      acc.y = fmaf(a.y, b.y, acc.y);
      acc.z = fmaf(a.z, b.z, acc.z);
      acc.w = fmaf(a.w, b.w, acc.w);
    }
    scalar_from = n4 * kVec;  // the last n % 4 elements
  }
  for (int64_t i = scalar_from + tid; i < n; i += threads) acc.x = fmaf(x[i], y[i], acc.x);
  const float s = block_sum<kBlock>((acc.x + acc.y) + (acc.z + acc.w));
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

// Second pass: one block adds `count` partial sums.
__global__ void __launch_bounds__(kFinalBlock)
    sum_partials(const float* __restrict__ partials, int64_t count, float* __restrict__ out) {
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < count; i += kFinalBlock) s += partials[i];
  s = block_sum<kFinalBlock>(s);
  if (threadIdx.x == 0) *out = s;
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// How many first-pass blocks fit on the device at once: the most a launch uses,
// and so the size of the partials buffer.
inline cudaError_t resident_blocks(int* blocks) {
  int device = 0, sms = 0, per_sm = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess)
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dot_partials<true>, kBlock, 0);
  *blocks = sms * (per_sm > 0 ? per_sm : 1);
  return err;
}

// Blocks for n elements: all resident blocks, fewer when n is small.
inline int blocks_for(int64_t n, int max_blocks) {
  const int64_t per_block = int64_t{kBlock} * kVec;
  const int64_t want = (n + per_block - 1) / per_block;
  return static_cast<int>(want < 1 ? 1 : (want < max_blocks ? want : max_blocks));
}

// First pass only: writes blocks_for(n, max_blocks) partial sums.
inline cudaError_t launch_partials(const float* x, const float* y, int64_t n, float* partials,
                                   int max_blocks, cudaStream_t stream) {
  const int grid = blocks_for(n, max_blocks);
  if (aligned16(x) && aligned16(y))
    dot_partials<true><<<grid, kBlock, 0, stream>>>(x, y, n, partials);
  else
    dot_partials<false><<<grid, kBlock, 0, stream>>>(x, y, n, partials);
  return cudaGetLastError();
}

inline cudaError_t launch_final(const float* partials, int64_t count, float* out, cudaStream_t stream) {
  sum_partials<<<1, kFinalBlock, 0, stream>>>(partials, count, out);
  return cudaGetLastError();
}

// Both passes; the dot product lands in *out (device memory).
inline cudaError_t launch_dot(const float* x, const float* y, int64_t n, float* partials,
                              int max_blocks, float* out, cudaStream_t stream) {
  cudaError_t err = launch_partials(x, y, n, partials, max_blocks, stream);
  if (err == cudaSuccess) err = launch_final(partials, blocks_for(n, max_blocks), out, stream);
  return err;
}

// The longest chain of float roundings that any product goes through, for the
// error bound gamma_depth * sum |x_i y_i| (see common/verify.h). `n` elements in
// one first-pass launch of `blocks` blocks; `partials` summed by the second pass.
inline int64_t summation_depth(int64_t n, int blocks, bool aligned, int64_t partials) {
  const int64_t threads = int64_t{blocks} * kBlock;
  const int64_t per_chain = aligned ? (n / kVec + threads - 1) / threads + 1  // +1: the tail
                                    : (n + threads - 1) / threads;
  const int64_t per_final_thread = (partials + kFinalBlock - 1) / kFinalBlock;
  return per_chain            // fmaf steps of one accumulator
         + 2                  // the four lanes added
         + log2_exact(kBlock) // the block's shuffle tree
         + per_final_thread   // the second pass, per thread
         + log2_exact(kFinalBlock);
}

}  // namespace dot
