// Reading an array in 16-byte vectors (uint4): the split of [in, in + n) into an
// unaligned head, whole vectors and a tail, and the grid-wide loop over them that
// chapters 08 and 15 count their histograms with.
//
//   sw::kVec<float>                      4: values of a type per 16-byte vector
//   sw::split16(in, n)                   {head, nvec, tail} (also on the host)
//   sw::for_each_vec16<kThreads, kUnroll>(in, n, edge, step, rest)
//
// CUDA only: include it from .cu and .cuh files.
#pragma once

#include <cstdint>

#include "common/cuda_utils.cuh"

namespace sw {

// Values of type T in one 16-byte vector.
template <class T>
constexpr int kVec = 16 / static_cast<int>(sizeof(T));

// [in, in + n) = a head up to the first 16-byte boundary, whole vectors, and a
// tail: fewer than one vector on each side.
struct Split16 {
  int64_t head;  // values before the first vector
  int64_t nvec;  // whole vectors
  int64_t tail;  // index of the first value after the vectors
};
template <class T>
__host__ __device__ inline Split16 split16(const T* in, int64_t n) {
  const int64_t misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(in) & 15) / sizeof(T);
  const int64_t to_boundary = misaligned ? kVec<T> - misaligned : 0;
  const int64_t head = n < to_boundary ? n : to_boundary;
  const int64_t nvec = (n - head) / kVec<T>;
  return {head, nvec, head + nvec * kVec<T>};
}

// This thread's share of [in, in + n) when gridDim.x * kThreads threads read it:
// edge(value) for the head and tail values it owns (one each at most, in the first
// threads of the grid); then step(v) with kUnroll vectors per lane, loaded before
// any is used, with the whole warp present (the loop bounds are the same for all
// its lanes: a step may vote or shuffle); then rest(v) for each vector left over.
template <int kThreads, int kUnroll, class T, class Edge, class Step, class Rest>
__device__ __forceinline__ void for_each_vec16(const T* __restrict__ in, int64_t n, Edge&& edge,
                                               Step&& step, Rest&& rest) {
  const Split16 s = split16(in, n);
  const int64_t threads = int64_t{gridDim.x} * kThreads;
  const int64_t tid = int64_t{blockIdx.x} * kThreads + threadIdx.x;
  const int lane = threadIdx.x % kWarp;
  if (tid < s.head) edge(in[tid]);
  if (tid < n - s.tail) edge(in[s.tail + tid]);
  const uint4* vec = reinterpret_cast<const uint4*>(in + s.head);
  int64_t first = tid - lane;  // the warp's first vector
  for (; first + (kWarp - 1) + (kUnroll - 1) * threads < s.nvec; first += kUnroll * threads) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(&vec[first + lane + u * threads]);
    step(v);
  }
  for (int64_t i = first + lane; i < s.nvec; i += threads) rest(__ldg(&vec[i]));
}

}  // namespace sw
