// Chapter 06's kernel, in a header of its own so that later chapters reuse it
// instead of copying it: chapter 12 (the dot product) and chapter 14 (the sum
// sharded across GPUs) include this file.
//
// reduce_overload<kBlock, kFinish, kUnroll, kPdl> sums x[0, n) with gridDim.x * kBlock
// threads: a grid-stride loop of kUnroll independent float4 loads per thread, a
// scalar tail for the last n % 4 floats (thread_sum), then a warp-shuffle tree per
// block (block_sum).
//   Finish::kPartials  block b writes its sum to out[b]   (a second launch adds them)
//   Finish::kAtomic    every block atomicAdd()s into out[0] (zero it first)
//   kPdl               launched with programmatic dependent launch (see pdl_wait)
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/cuda_utils.cuh"
#include "common/vec16.cuh"

namespace ch06 {

constexpr int kUnroll = 4;  // float4 loads in flight per thread per iteration (the default)
constexpr int kVec = sw::kVec<float>;  // floats per float4

enum class Finish { kPartials, kAtomic };

__device__ __forceinline__ float warp_sum(float v) {
  // lab warp-shuffle: begin
#pragma unroll
  for (int offset = sw::kWarp / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(sw::kFullMask, v, offset);
  return v;
  // lab warp-shuffle: end
}

// The sum of v over the block, valid in thread 0: shuffles within each warp, the
// warp sums through shared memory, shuffles again in warp 0.
template <int kBlock>
__device__ __forceinline__ float block_sum(float v) {
  constexpr int kWarps = kBlock / sw::kWarp;
  v = warp_sum(v);
  if constexpr (kWarps > 1) {
    __shared__ float warp_sums[kWarps];
    const int lane = threadIdx.x % sw::kWarp, warp = threadIdx.x / sw::kWarp;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) v = warp_sum(lane < kWarps ? warp_sums[lane] : 0.0f);
  }
  return v;
}

// This thread's share of the sum of x[0, n) when gridDim.x * kBlock threads
// split it: a grid-stride loop of kUnroll independent float4 loads, then the
// scalar tail. x must be 16-byte aligned (cudaMalloc gives 256).
template <int kBlock, int kUnroll = ch06::kUnroll>
__device__ __forceinline__ float thread_sum(const float* __restrict__ x, int64_t n) {
  // lab grid-stride: begin
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const int64_t n4 = n / kVec;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kBlock;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;

  float sum = 0.0f;
  int64_t i = first;
  // kUnroll loads issued before any is used; each one is a warp-contiguous 512 bytes.
  for (; i + (kUnroll - 1) * threads < n4; i += kUnroll * threads) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x4 + i + u * threads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; i < n4; i += threads) {  // fewer than kUnroll float4s left for this thread
    const float4 v = __ldg(x4 + i);
    sum += (v.x + v.y) + (v.z + v.w);
  }
  if (first < n - kVec * n4) sum += x[kVec * n4 + first];  // the scalar tail: n % 4 floats
  return sum;
  // lab grid-stride: end
}

// Programmatic dependent launch (compute capability 9.0; below it these do nothing).
// A kernel launched with the attribute (PdlConfig in chapter 06) may start while the
// kernel before it in the stream still runs. It must not touch memory before
// pdl_wait(), which returns once that kernel has finished and its writes are visible;
// pdl_release() lets the kernel after it start launching now.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}
__device__ __forceinline__ void pdl_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

template <int kBlock, Finish kFinish, int kUnroll = ch06::kUnroll, bool kPdl = false>
__global__ void __launch_bounds__(kBlock)
    reduce_overload(const float* __restrict__ x, int64_t n, float* __restrict__ out) {
  if constexpr (kPdl) {
    pdl_wait();
    pdl_release();
  }
  const float sum = block_sum<kBlock>(thread_sum<kBlock, kUnroll>(x, n));
  if (threadIdx.x == 0) {
    if constexpr (kFinish == Finish::kAtomic)
      atomicAdd(out, sum);
    else
      out[blockIdx.x] = sum;
  }
}

// The error bound's depth: additions an element passes through in one launch of
// reduce_overload over `count` floats with `threads` threads: 2 inside its float4,
// one per float4 of its thread, 1 for the tail, and 10 for the two shuffle trees of
// block_sum. Chapters 06, 12 and 14 add up their launches' depths from it.
inline int64_t launch_depth(int64_t count, int64_t threads) {
  return sw::ceil_div(sw::ceil_div(count, kVec), threads) + 3 + 10;
}

// blocks_per_sm x SMs blocks, but no more than the data can keep busy: each thread
// should get at least one full iteration of `unroll` float4s (this matters at 2^20).
inline int64_t grid_for(int64_t n, int block, int blocks_per_sm, int sm_count,
                        int unroll = kUnroll) {
  const int64_t useful = sw::ceil_div(n, int64_t{block} * kVec * unroll);
  return std::clamp<int64_t>(useful, 1, int64_t{blocks_per_sm} * sm_count);
}

}  // namespace ch06
