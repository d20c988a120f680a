// Chapter 12's end-to-end versions (host x, y in, a host float out): e2e-pageable,
// e2e-pinned and e2e-alloc-per-call (launch_e2e, one template), e2e-overlap (chunks on
// several streams), each launching both passes itself and recording the events of d.split.
// Included once, by 12_dot_product.cu.
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

constexpr int64_t kMinChunk = int64_t{1} << 16;  // floats; smaller chunks cost more in API calls
constexpr int64_t kChunkAlign = 1024;            // floats: chunk starts stay 16-byte aligned

enum class Alloc { kOnce, kPerCall };  // device buffers: the context's, or new ones every call

// --- the versions: end to end (host x, y in, a host float out) ------------------------------

// The seed's dot(): copy x and y in from host memory (kFrom: pageable or pinned), both passes,
// the result copied back. Alloc::kPerCall is the seed's first version: the call allocates its
// own four device buffers first and frees them last, instead of using the context's.
template <From kFrom, Alloc kAlloc>
void launch_e2e(Dot& d) {
  static_assert(kFrom != From::Device, "end to end: x and y start in host memory");
  constexpr bool kOwn = kAlloc == Alloc::kPerCall;
  const float* hx = kFrom == From::Pinned ? d.px.get() : d.hx.data();
  const float* hy = kFrom == From::Pinned ? d.py.get() : d.hy.data();
  Split& s = d.split;
  CUDA_CHECK(cudaEventRecord(s.start));
  {
    // kOwn: the call's own device buffers, cudaMalloc x 4 here and cudaFree x 4 at the brace.
    sw::DeviceBuffer<float> own_x, own_y, own_partials, own_result;
    if (kOwn) {
      own_x.allocate(d.n), own_y.allocate(d.n), own_partials.allocate(d.max_blocks);
      own_result.allocate(1);
      if (d.poison_fresh) sw::poison(own_result.get(), sizeof(float));
    }
    float* x = kOwn ? own_x.get() : d.x.get();
    float* y = kOwn ? own_y.get() : d.y.get();
    float* partials = kOwn ? own_partials.get() : d.partials.get();
    float* result = kOwn ? own_result.get() : d.result.get();
    CUDA_CHECK(cudaEventRecord(s.copy_begin));
    CUDA_CHECK(cudaMemcpy(x, hx, d.n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(y, hy, d.n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaEventRecord(s.copied));
    const int64_t blocks = dot::blocks_for(d.n, d.max_blocks);
    dot::dot_partials<<<blocks, kBlock>>>(x, y, d.n, partials);
    CHECK_LAUNCH();
    dot::dot_final<<<1, kBlock>>>(partials, blocks, result);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(s.computed));
    CUDA_CHECK(cudaMemcpy(&d.answer, result, sizeof(float), cudaMemcpyDeviceToHost));
    s.chunks = 0;
  }
  CUDA_CHECK(cudaEventRecord(s.finished));
}

// Floats per chunk: n / kChunks, at least kMinChunk, a multiple of kChunkAlign.
inline int64_t chunk_length(int64_t n) {
  return sw::ceil_div(std::max(sw::ceil_div(n, kChunks), kMinChunk), kChunkAlign) * kChunkAlign;
}

// Chunk k is copied and reduced on stream k % kStreams: while the copy engine moves
// chunk k+1, the SMs reduce chunk k. The host memory must be pinned, or the copies
// are not asynchronous. Each chunk writes its own range of block sums and one final
// pass adds them all, so the result does not depend on timing.
inline void launch_e2e_overlap(Dot& d) {
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
    const int64_t blocks = dot::blocks_for(len, d.max_blocks);
    dot::dot_partials<<<blocks, kBlock, 0, st>>>(d.x.get() + off, d.y.get() + off, len,
                                                 d.partials.get() + partials);
    CHECK_LAUNCH();
    partials += blocks;
  }
  for (int k = 0; k < kStreams; ++k) {  // join: the default stream waits for every stream
    CUDA_CHECK(cudaEventRecord(d.joined[k], d.stream[k]));
    CUDA_CHECK(cudaStreamWaitEvent(0, d.joined[k]));
  }
  dot::dot_final<<<1, kBlock>>>(d.partials.get(), partials, d.result.get());
  CHECK_LAUNCH();
  CUDA_CHECK(cudaEventRecord(s.computed));
  CUDA_CHECK(cudaMemcpy(&d.answer, d.result.get(), sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventRecord(s.finished));
  s.chunks = chunks;
}

}  // namespace ch12
