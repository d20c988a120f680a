// Chapter 15, steps 1 and 2: every value counted in global memory, one 64-bit atomic
// per value (global-atomic) or per distinct bin of a warp instruction (global-match).
// Kernels and launchers as one unit, included at the top of 15_many_bins_histogram.cu.
#pragma once

#include <cstdint>

#include "counting.cuh"

namespace ch15 {

// =========================================================================================
// Step 1: global-atomic. Every value adds 1 to its bin in global memory.
// =========================================================================================

template <class T>
struct GlobalCounter {
  HistCount* hist;
  uint32_t bins;
  __device__ void add(uint32_t key) { atomicAdd(&hist[bin_of_key(key, bins)], HistCount{1}); }
  __device__ void step(const uint4 (&v)[kUnroll]) { add_all<T>(*this, v); }
};

// =========================================================================================
// Step 2: global-match. The lanes of a warp that hold the same bin find each other
// (__match_any_sync) and the first of them adds their number: one atomic per distinct
// bin per warp instruction. Edges and the last vectors add plainly.
// =========================================================================================

template <class T>
struct MatchCounter {
  HistCount* hist;
  uint32_t bins;
  __device__ void add(uint32_t key) { atomicAdd(&hist[bin_of_key(key, bins)], HistCount{1}); }
  __device__ void step(const uint4 (&v)[kUnroll]) {  // the whole warp is here
    const int lane = threadIdx.x % kWarp;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int k = 0; k < kVec<T>; ++k) {
        const uint32_t bin = bin_of_key(key_at<T>(v[u], k), bins);
        const unsigned peers = __match_any_sync(kFullMask, bin);
        if (lane == __ffs(peers) - 1)
          atomicAdd(&hist[bin], HistCount{static_cast<unsigned>(__popc(peers))});
      }
  }
};

// --- both steps' kernel and launcher: a full wave, each thread counting its share -------

template <class T, template <class> class Counter>
__global__ void __launch_bounds__(kGlobalThreads)
    count_global(const T* __restrict__ in, int64_t n, uint32_t bins, HistCount* __restrict__ hist) {
  Counter<T> counter{hist, bins};
  count_input<T, kGlobalThreads>(in, n, counter);
}

template <class T, template <class> class Counter>
void launch_global(const Job& j) {
  const int64_t grid = wave(count_global<T, Counter>, kGlobalThreads, 0);
  zero_hist(j);
  count_global<T, Counter><<<grid, kGlobalThreads>>>(j.values<T>(), j.n, j.bins, j.hist);
  CHECK_LAUNCH();
}

}  // namespace ch15
