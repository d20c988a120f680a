// Chapter 13: the first pass's part that every step shares: each thread's top-2 over its
// grid-stride range, with 4-byte loads (thread_top2) or 16-byte loads (thread_top2_int4);
// and the device memory the versions write (Buffers). Included once, by 13_top2.cu.
#pragma once

#include <cstdint>

#include "common/cuda_utils.cuh"
#include "common/device.h"
#include "top2_merge.cuh"

namespace ch13 {

constexpr int kBlock = 256;  // threads per block of the first pass
constexpr int kVec = 4;      // int32 per 16-byte load
constexpr int kUnroll = 2;   // 16-byte loads in flight per thread

// --- each thread's top-2: a grid-stride pass in increasing index order (insert's precondition)

__device__ __forceinline__ Top2 thread_top2(const int32_t* __restrict__ x, int64_t n) {
  Top2 t = empty_top2();
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kBlock;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < n; i += threads)
    insert(t, x[i], i);
  return t;
}

__device__ __forceinline__ void insert4(Top2& t, const int4& q, int64_t i) {
  insert(t, q.x, i), insert(t, q.y, i + 1), insert(t, q.z, i + 2), insert(t, q.w, i + 3);
}

// The same with 16-byte loads, kUnroll in flight, then the n % 4 tail. x 16-byte aligned.
__device__ __forceinline__ Top2 thread_top2_int4(const int32_t* __restrict__ x, int64_t n) {
  Top2 t = empty_top2();
  const int4* x4 = reinterpret_cast<const int4*>(x);
  const int64_t n4 = n / kVec;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kBlock;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  int64_t v = first;
  for (; v + (kUnroll - 1) * threads < n4; v += kUnroll * threads) {
    int4 q[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) q[u] = x4[v + u * threads];  // all loads first
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) insert4(t, q[u], (v + u * threads) * kVec);
  }
  for (; v < n4; v += threads) insert4(t, x4[v], v * kVec);
  for (int64_t e = kVec * n4 + first; e < n; e += threads) insert(t, x[e], e);  // the n % 4 tail
  return t;
}

// First-pass results the buffer holds: one per resident thread, what thread-pairs writes.
int64_t partial_capacity() {
  return int64_t{sw::device_attribute<cudaDevAttrMaxThreadsPerMultiProcessor>()} * sw::sm_count();
}

struct Buffers {
  sw::DeviceBuffer<Top2> partials{partial_capacity()}, out{1};
  sw::DeviceBuffer<uint8_t> cub_temp;  // CUB's temporary storage, grown on first use
};

}  // namespace ch13
