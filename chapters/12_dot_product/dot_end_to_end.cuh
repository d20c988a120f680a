// Chapter 12's end-to-end versions (host x, y in, a host float out): e2e-pageable,
// e2e-pinned, e2e-overlap (chunks on several streams) and e2e-alloc-per-call, each
// recording the events of d.split. Included once, by 12_dot_product.cu.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "dot_kernel.cuh"
#include "dot_problem.cuh"

namespace ch12 {

using dot::launch_final;
using dot::launch_partials;
using dot::launch_two_pass;

constexpr int64_t kMinChunk = int64_t{1} << 16;  // floats; smaller chunks cost more in API calls
constexpr int64_t kChunkAlign = 1024;            // floats: chunk starts stay 16-byte aligned

// --- the versions: end to end (host x, y in, a host float out) ------------------------------

// The seed's dot(): copy both vectors in, run both passes, copy the result back.
inline void copy_compute_copy_back(Dot& d, const float* hx, const float* hy, float* x, float* y,
                                   float* partials, float* result) {
  Split& s = d.split;
  CUDA_CHECK(cudaEventRecord(s.copy_begin));
  CUDA_CHECK(cudaMemcpy(x, hx, d.n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(y, hy, d.n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaEventRecord(s.copied));
  launch_two_pass(x, y, d.n, partials, d.max_blocks, result, 0);
  CUDA_CHECK(cudaEventRecord(s.computed));
  CUDA_CHECK(cudaMemcpy(&d.answer, result, sizeof(float), cudaMemcpyDeviceToHost));
  s.chunks = 0;
}

// Pageable or pinned: only the host pointers differ.
inline void copy_then_compute(Dot& d, const float* hx, const float* hy) {
  CUDA_CHECK(cudaEventRecord(d.split.start));
  copy_compute_copy_back(d, hx, hy, d.x.get(), d.y.get(), d.partials.get(), d.result.get());
  CUDA_CHECK(cudaEventRecord(d.split.finished));
}
inline void e2e_pageable(Dot& d) { copy_then_compute(d, d.hx.data(), d.hy.data()); }
inline void e2e_pinned(Dot& d) { copy_then_compute(d, d.px.get(), d.py.get()); }

// Floats per chunk: n / kChunks, at least kMinChunk, a multiple of kChunkAlign.
inline int64_t chunk_length(int64_t n) {
  return sw::ceil_div(std::max(sw::ceil_div(n, kChunks), kMinChunk), kChunkAlign) * kChunkAlign;
}

// Chunk k is copied and reduced on stream k % kStreams: while the copy engine moves
// chunk k+1, the SMs reduce chunk k. The host memory must be pinned, or the copies
// are not asynchronous. Each chunk writes its own range of block sums and one final
// pass adds them all, so the result does not depend on timing.
inline void e2e_overlap(Dot& d) {
  Split& s = d.split;
  const int64_t chunk = chunk_length(d.n);
  const int chunks = static_cast<int>(sw::ceil_div(d.n, chunk));
  CUDA_CHECK(cudaEventRecord(s.start));
  CUDA_CHECK(cudaEventRecord(s.copy_begin));
  for (cudaStream_t st : d.stream) CUDA_CHECK(cudaStreamWaitEvent(st, s.copy_begin));  // fork
  int64_t partials = 0;
  for (int k = 0; k < chunks; ++k) {
    const cudaStream_t st = d.stream[k % kStreams];
    const int64_t off = k * chunk, len = std::min(chunk, d.n - off);
    CUDA_CHECK(cudaMemcpyAsync(d.x.get() + off, d.px.get() + off, len * sizeof(float),
                               cudaMemcpyHostToDevice, st));
    CUDA_CHECK(cudaMemcpyAsync(d.y.get() + off, d.py.get() + off, len * sizeof(float),
                               cudaMemcpyHostToDevice, st));
    CUDA_CHECK(cudaEventRecord(s.chunk[k], st));
    launch_partials(d.x.get() + off, d.y.get() + off, len, d.partials.get() + partials,
                    d.max_blocks, st);
    partials += dot::blocks_for(len, d.max_blocks);
  }
  for (int k = 0; k < kStreams; ++k) {  // join: the default stream waits for every stream
    CUDA_CHECK(cudaEventRecord(d.joined[k], d.stream[k]));
    CUDA_CHECK(cudaStreamWaitEvent(0, d.joined[k]));
  }
  launch_final(d.partials.get(), partials, d.result.get(), 0);
  CUDA_CHECK(cudaEventRecord(s.computed));
  CUDA_CHECK(cudaMemcpy(&d.answer, d.result.get(), sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventRecord(s.finished));
  s.chunks = chunks;
}

// The seed's first version: new device buffers on every call, from pageable memory.
inline void e2e_alloc_per_call(Dot& d) {
  CUDA_CHECK(cudaEventRecord(d.split.start));
  {
    sw::DeviceBuffer<float> x(d.n), y(d.n), partials(d.max_blocks), result(1);  // cudaMalloc x 4
    if (d.poison_fresh) sw::poison(result.get(), sizeof(float));
    copy_compute_copy_back(d, d.hx.data(), d.hy.data(), x.get(), y.get(), partials.get(),
                           result.get());
  }  // cudaFree x 4
  CUDA_CHECK(cudaEventRecord(d.split.finished));
}

}  // namespace ch12
