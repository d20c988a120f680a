// Chapter 18's histogram passes, included by sort_onesweep.cuh: every digit of every key
// counted once before the onesweep passes, and where each digit's keys start in each pass's
// output.
//   histogram_all      step 2's pass (steps 2, 3, 4, 6, 7, 8): one 4-byte load a thread in
//                      flight, one copy of the 4 x 256 counters a block
//   histogram_vec      step 5's pass (steps 5 and 9): 16-byte loads, 16 keys in flight a
//                      thread, a copy of the counters per lane
//   digit_bases        the counts scanned into each digit's base, per pass
//   histogram_and_bases, histogram_vec_and_bases  what the launchers call
#pragma once

#include <algorithm>
#include <cstdint>

#include "chapters/16_scan/scan_launch.cuh"    // allow_shared
#include "chapters/16_scan/scan_lookback.cuh"  // block_exclusive_scan
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "sort_problem.h"
#include "sort_tile.cuh"

namespace {

using ch18::Count;
using ch18::kDigitBits;
using ch18::kDigits;
using ch18::kPasses;

// --- step 2's histogram pass ---------------------------------------------------------------

constexpr int kHistogramBlock = 256, kHistogramBlocksPerSm = 4;

// Every digit of every key, counted in shared memory, added to counts[pass][digit].
__global__ void __launch_bounds__(kHistogramBlock)
    histogram_all(const uint32_t* __restrict__ keys, int64_t n, Count* counts) {
  __shared__ unsigned h[kPasses][kDigits];
  for (int d = threadIdx.x; d < kPasses * kDigits; d += kHistogramBlock)
    h[d / kDigits][d % kDigits] = 0;
  __syncthreads();
  const int64_t stride = int64_t{gridDim.x} * kHistogramBlock;
  for (int64_t i = int64_t{blockIdx.x} * kHistogramBlock + threadIdx.x; i < n; i += stride) {
    const uint32_t key = keys[i];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) atomicAdd(&h[p][digit_of(key, p * kDigitBits)], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < kPasses * kDigits; d += kHistogramBlock)
    if (h[d / kDigits][d % kDigits]) atomicAdd(&counts[d], Count{h[d / kDigits][d % kDigits]});
}
inline int64_t histogram_all_grid(int64_t n) {
  return std::min<int64_t>(sw::ceil_div(n, kHistogramBlock),
                           sw::sm_count() * kHistogramBlocksPerSm);
}

// --- step 5's histogram pass (steps 5 and 8) ------------------------------------------------

constexpr int kVecHistogramBlock = 1024;  // one block an SM: its counters take 128 KB
constexpr int kVecLoads = 4;              // 16-byte loads in flight a thread: 16 keys
constexpr int kKeysPerLoad = 4;

// Every digit of every key, added to counts[pass][digit] as histogram_all does. Lane l of
// every warp counts into copy l of the block's 4 x 256 counters, laid out so that all of
// copy l lies in bank l: a warp's 32 atomics never share a bank. Each thread loads its
// next 16 keys (4 x 16 bytes) before it counts any; block 0 counts the last n % 4 keys.
// keys must be 16-byte aligned (SortData's buffers are cudaMalloc's).
__global__ void __launch_bounds__(kVecHistogramBlock)
    histogram_vec(const uint32_t* __restrict__ keys, int64_t n, Count* counts) {
  extern __shared__ unsigned copies[];  // counter b of copy l: copies[b * 32 + l]
  constexpr int kBins = kPasses * kDigits;
  for (int i = threadIdx.x; i < kBins * sw::kWarp; i += kVecHistogramBlock) copies[i] = 0;
  __syncthreads();
  unsigned* mine = copies + threadIdx.x % sw::kWarp;
  const auto count = [&](uint32_t key) {
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
      atomicAdd(&mine[(p * kDigits + digit_of(key, p * kDigitBits)) * sw::kWarp], 1u);
  };
  const uint4* vec = reinterpret_cast<const uint4*>(keys);
  const int64_t vecs = n / kKeysPerLoad;
  const int64_t step = int64_t{gridDim.x} * kVecHistogramBlock * kVecLoads;
  for (int64_t i = int64_t{blockIdx.x} * kVecHistogramBlock * kVecLoads + threadIdx.x; i < vecs;
       i += step) {
    uint4 x[kVecLoads];
#pragma unroll
    for (int k = 0; k < kVecLoads; ++k)
      if (i + k * kVecHistogramBlock < vecs) x[k] = vec[i + k * kVecHistogramBlock];
#pragma unroll
    for (int k = 0; k < kVecLoads; ++k)
      if (i + k * kVecHistogramBlock < vecs) {
        count(x[k].x);
        count(x[k].y);
        count(x[k].z);
        count(x[k].w);
      }
  }
  if (blockIdx.x == 0 && threadIdx.x < n % kKeysPerLoad)
    count(keys[vecs * kKeysPerLoad + threadIdx.x]);
  __syncthreads();
  for (int b = threadIdx.x; b < kBins; b += kVecHistogramBlock) {  // lane t starts at copy t:
    unsigned sum = 0;                                              // a warp's loads, 32 banks
    for (int j = 0; j < sw::kWarp; ++j) sum += copies[b * sw::kWarp + (j + b) % sw::kWarp];
    if (sum) atomicAdd(&counts[b], Count{sum});
  }
}
constexpr size_t kVecHistogramBytes = sizeof(unsigned) * kPasses * kDigits * sw::kWarp;

// Block p: where each digit's keys start in pass p's output (an exclusive scan).
__global__ void __launch_bounds__(kDigits) digit_bases(const Count* counts, Count* bases) {
  Count total;
  bases[blockIdx.x * kDigits + threadIdx.x] =
      ch16::block_exclusive_scan(counts[blockIdx.x * kDigits + threadIdx.x], &total);
}

// digit_bases over the counts in c.digits (zeroed, then filled by a histogram pass): each
// digit's base in every pass. Returns them: pass p's at bases + p * kDigits.
inline Count* bases_from_counts(const ch18::SortCall& c) {
  Count* bases = c.digits + kPasses * kDigits;
  digit_bases<<<kPasses, kDigits, 0, c.stream>>>(c.digits, bases);
  CHECK_LAUNCH();
  return bases;
}

// What the onesweep launchers do before their passes: the counts of every digit of every
// pass from one pass over the keys (histogram_all), then bases_from_counts.
inline Count* histogram_and_bases(const ch18::SortCall& c) {
  CUDA_CHECK(cudaMemsetAsync(c.digits, 0, sizeof(Count) * kPasses * kDigits, c.stream));
  histogram_all<<<histogram_all_grid(c.n), kHistogramBlock, 0, c.stream>>>(c.keys_in, c.n,
                                                                           c.digits);
  CHECK_LAUNCH();
  return bases_from_counts(c);
}

// What steps 5 and 8 do before their passes: histogram_vec over the keys, as many blocks
// as the GPU holds at once (one an SM), fewer for fewer keys, then bases_from_counts.
inline Count* histogram_vec_and_bases(const ch18::SortCall& c) {
  ch16::allow_shared(histogram_vec, kVecHistogramBytes);
  CUDA_CHECK(cudaMemsetAsync(c.digits, 0, sizeof(Count) * kPasses * kDigits, c.stream));
  const int64_t grid = std::min(
      sw::resident_grid(histogram_vec, kVecHistogramBlock, kVecHistogramBytes),
      std::max<int64_t>(1, sw::ceil_div(c.n, kVecHistogramBlock * kVecLoads * kKeysPerLoad)));
  histogram_vec<<<grid, kVecHistogramBlock, kVecHistogramBytes, c.stream>>>(c.keys_in, c.n,
                                                                            c.digits);
  CHECK_LAUNCH();
  return bases_from_counts(c);
}

}  // namespace
