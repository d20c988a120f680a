// Chapter 08's 16-byte steps, each kernel with its launcher under it: per-warp-vec16,
// spread16-vec16, adaptive-vec16, adaptive-runs-vec16, per-lane-vec16, and their pieces.
// Part of the program 08_histogram_privatized, whose step table names the launchers
// (histogram_vec16.h). They repeat the lab task's answer: a student copy of the
// histogram track leaves them out.

// lab shared-privatized: hide begin
#include <algorithm>
#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/histogram.h"
#include "common/vec16.cuh"
#include "histogram_vec16.h"

namespace hg = sw::histogram;

namespace ch08 {

using hg::kBins;
using sw::HistCount;
using sw::kFullMask;
using sw::kWarp;

constexpr int kVecThreads = 64;  // 2 warps: with 16 copies, 33 to 37 KiB of shared memory per
                                 // block, under the 48 KiB every GPU gives without opting in
constexpr int kVecWarps = kVecThreads / kWarp;
constexpr int kUnroll = 8;          // 16-byte loads per thread per step of the main loop
constexpr int kSpreadCopies = 16;   // copies per warp in the spread and adaptive kernels
constexpr int kHotLanes = 16;       // adaptive: this many lanes agreeing with lane 0 share one copy
constexpr int kLaneThreads = 1024;  // per-lane: one block per SM, its 32 warps share 32 copies
static_assert(kLaneThreads >= kBins, "per-lane: one thread per bin in the merge");

// --- 16-byte loads: the pieces ------------------------------------------------------------

// Counts the 16 bytes of v into one copy of a [kBins][kStride] sub-histogram:
// bin b of this copy is column[b * kStride].
template <int kStride>
__device__ __forceinline__ void count16(uint32_t* column, uint4 v) {
  const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int k = 0; k < 4; ++k)
#pragma unroll
    for (int j = 0; j < 4; ++j) atomicAdd(&column[((words[k] >> (8 * j)) & 0xFFu) * kStride], 1u);
}

// Phase 1 of a 16-byte kernel with kThreads per block: this thread's bytes into
// `column`, kUnroll loads per step, then their atomics (in the SASS, 3 or 4 loads stay
// in flight at 32 registers per thread, 5 to 8 at 56); head and tail bytes one at a
// time (sw::for_each_vec16).
template <int kThreads, int kStride>
__device__ void count_vec16(const uint8_t* __restrict__ in, int64_t n, uint32_t* column) {
  sw::for_each_vec16<kThreads, kUnroll>(
      in, n, [&](uint8_t byte) { atomicAdd(&column[byte * kStride], 1u); },
      [&](const uint4(&v)[kUnroll]) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) count16<kStride>(column, v[u]);
      },
      [&](uint4 v) { count16<kStride>(column, v); });
}

// Bin `bin` of a [kBins][kCopies] sub-histogram, summed over its copies, read
// from copy `rot` on so that the lanes of a warp (different rot) hit different banks.
template <int kCopies>
__device__ uint32_t sum_copies(const uint32_t* sub, int bin, int rot) {
  uint32_t sum = 0;
  for (int c = 0; c < kCopies; ++c) sum += sub[bin * kCopies + (c + rot) % kCopies];
  return sum;
}

// Phase 2 of the per-warp kernels: the block's totals to global memory.
__device__ void add_block_totals(const uint32_t* block_total, HistCount* hist) {
  __syncthreads();
  for (int bin = threadIdx.x; bin < kBins; bin += kVecThreads)
    if (block_total[bin]) atomicAdd(&hist[bin], HistCount{block_total[bin]});
}

// A 16-byte kernel's grid: one full wave (`resident` blocks), but no more blocks
// than there are vectors to give one to each thread.
int64_t vec16_grid(int64_t n, int threads, int64_t resident) {
  return grid_for(n, std::clamp<int64_t>(sw::ceil_div(n / 16, threads), 1, resident));
}

// --- 16-byte loads, copies per warp: per-warp-vec16 and spread16-vec16 --------------------

// Each warp owns a [kBins][kCopies] sub-histogram; lane l counts in copy l % kCopies.
// With one copy the bank of a lane's atomic is set by its byte alone, so 32 random
// bytes collide in a few banks; with 16 copies, only lanes l and l + 16 can share a bank.
template <int kCopies>
__device__ void per_warp_copies(const uint8_t* __restrict__ in, int64_t n,
                                HistCount* __restrict__ hist) {
  extern __shared__ uint32_t smem[];  // [kBins] block totals, then the warps' sub-histograms
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  uint32_t* block_total = smem;
  uint32_t* sub = smem + kBins + warp * kBins * kCopies;
  for (int i = threadIdx.x; i < kBins * (1 + kVecWarps * kCopies); i += kVecThreads) smem[i] = 0;
  __syncthreads();
  count_vec16<kVecThreads, kCopies>(in, n, sub + lane % kCopies);
  __syncwarp();
  for (int bin = lane; bin < kBins; bin += kWarp) {
    const uint32_t sum = sum_copies<kCopies>(sub, bin, lane);
    if (sum) atomicAdd(&block_total[bin], sum);
  }
  add_block_totals(block_total, hist);
}

__global__ void __launch_bounds__(kVecThreads)
    histogram_per_warp_vec16(const uint8_t* __restrict__ in, int64_t n,
                             HistCount* __restrict__ hist) {
  per_warp_copies<1>(in, n, hist);
}

void launch_per_warp_vec16(const hg::Job& j) {
  constexpr size_t smem = sizeof(uint32_t) * kBins * (1 + kVecWarps);  // totals + a copy per warp
  static const int64_t resident = sw::resident_grid(histogram_per_warp_vec16, kVecThreads, smem);
  CUDA_CHECK(cudaMemsetAsync(j.hist, 0, hg::kHistBytes));
  histogram_per_warp_vec16<<<vec16_grid(j.n, kVecThreads, resident), kVecThreads, smem>>>(j.in, j.n,
                                                                                          j.hist);
  CHECK_LAUNCH();
}

__global__ void __launch_bounds__(kVecThreads)
    histogram_spread16_vec16(const uint8_t* __restrict__ in, int64_t n,
                             HistCount* __restrict__ hist) {
  per_warp_copies<kSpreadCopies>(in, n, hist);
}

void launch_spread16_vec16(const hg::Job& j) {
  constexpr size_t smem = sizeof(uint32_t) * kBins * (1 + kVecWarps * kSpreadCopies);
  static const int64_t resident = sw::resident_grid(histogram_spread16_vec16, kVecThreads, smem);
  CUDA_CHECK(cudaMemsetAsync(j.hist, 0, hg::kHistBytes));
  histogram_spread16_vec16<<<vec16_grid(j.n, kVecThreads, resident), kVecThreads, smem>>>(j.in, j.n,
                                                                                          j.hist);
  CHECK_LAUNCH();
}

// --- the vote: adaptive-vec16 and adaptive-runs-vec16 -------------------------------------

// adaptive-vec16's hot path: the vector into the warp's plain [kBins] histogram,
// where atomics from many lanes to one address merge.
struct HotPlain {
  static constexpr int kWords = kBins;  // the plain histogram
  uint32_t* plain;
  __device__ void count(uint4 x) const { count16<1>(plain, x); }
  __device__ uint32_t total(int bin) const { return plain[bin]; }
};

// adaptive-runs-vec16's: 16 equal bytes (x.x is its byte 0 repeated, and so are
// y, z, w) count as one run, in a second [kBins] array. Only when every lane has a
// run, so that the warp never executes both paths.
struct HotRuns {
  static constexpr int kWords = 2 * kBins;  // the plain histogram, then runs per byte value
  uint32_t* plain;
  __device__ void count(uint4 x) const {
    const bool run = x.x == x.y && x.x == x.z && x.x == x.w && x.x == __byte_perm(x.x, 0, 0);
    if (__all_sync(kFullMask, run))
      atomicAdd(&plain[kBins + (x.x & 0xFFu)], 1u);
    else
      count16<1>(plain, x);
  }
  __device__ uint32_t total(int bin) const { return plain[bin] + 16 * plain[kBins + bin]; }
};

// spread16-vec16's copies plus Hot's arrays per warp. A warp whose lanes mostly
// start their first vector with lane 0's byte counts its next kUnroll vectors on Hot's path.
template <class Hot>
__device__ void adaptive(const uint8_t* __restrict__ in, int64_t n, HistCount* __restrict__ hist) {
  constexpr int kWarpWords = kBins * kSpreadCopies + Hot::kWords;
  extern __shared__ uint32_t smem[];  // [kBins] block totals, then kWarpWords per warp
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  uint32_t* block_total = smem;
  uint32_t* sub = smem + kBins + warp * kWarpWords;
  const Hot hot{sub + kBins * kSpreadCopies};
  for (int i = threadIdx.x; i < kBins + kVecWarps * kWarpWords; i += kVecThreads) smem[i] = 0;
  __syncthreads();

  uint32_t* column = sub + lane % kSpreadCopies;
  sw::for_each_vec16<kVecThreads, kUnroll>(
      in, n, [&](uint8_t byte) { atomicAdd(&column[byte * kSpreadCopies], 1u); },
      [&](const uint4(&v)[kUnroll]) {  // the whole warp is here
        const uint32_t mine = v[0].x & 0xFFu;
        const uint32_t lead = __shfl_sync(kFullMask, mine, 0);
        // The vote's outcome is the same for all lanes.
        if (__popc(__ballot_sync(kFullMask, mine == lead)) >= kHotLanes) {
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) hot.count(v[u]);
        } else {
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) count16<kSpreadCopies>(column, v[u]);
        }
      },
      [&](uint4 v) { count16<kSpreadCopies>(column, v); });

  __syncwarp();
  for (int bin = lane; bin < kBins; bin += kWarp) {
    const uint32_t sum = hot.total(bin) + sum_copies<kSpreadCopies>(sub, bin, lane);
    if (sum) atomicAdd(&block_total[bin], sum);
  }
  add_block_totals(block_total, hist);
}

__global__ void __launch_bounds__(kVecThreads)
    histogram_adaptive_vec16(const uint8_t* __restrict__ in, int64_t n,
                             HistCount* __restrict__ hist) {
  adaptive<HotPlain>(in, n, hist);
}

void launch_adaptive_vec16(const hg::Job& j) {
  constexpr size_t smem =
      sizeof(uint32_t) * (kBins + kVecWarps * (kBins * kSpreadCopies + HotPlain::kWords));
  static const int64_t resident = sw::resident_grid(histogram_adaptive_vec16, kVecThreads, smem);
  CUDA_CHECK(cudaMemsetAsync(j.hist, 0, hg::kHistBytes));
  histogram_adaptive_vec16<<<vec16_grid(j.n, kVecThreads, resident), kVecThreads, smem>>>(j.in, j.n,
                                                                                          j.hist);
  CHECK_LAUNCH();
}

__global__ void __launch_bounds__(kVecThreads)
    histogram_adaptive_runs_vec16(const uint8_t* __restrict__ in, int64_t n,
                                  HistCount* __restrict__ hist) {
  adaptive<HotRuns>(in, n, hist);
}

void launch_adaptive_runs_vec16(const hg::Job& j) {
  constexpr size_t smem =
      sizeof(uint32_t) * (kBins + kVecWarps * (kBins * kSpreadCopies + HotRuns::kWords));
  static const int64_t resident =
      sw::resident_grid(histogram_adaptive_runs_vec16, kVecThreads, smem);
  CUDA_CHECK(cudaMemsetAsync(j.hist, 0, hg::kHistBytes));
  histogram_adaptive_runs_vec16<<<vec16_grid(j.n, kVecThreads, resident), kVecThreads, smem>>>(
      j.in, j.n, j.hist);
  CHECK_LAUNCH();
}

// --- per-lane-vec16: one copy per lane index, shared by the block's warps --------------------

// The block's [kBins][32] sub-histogram: bin b of copy c is word b * 32 + c, in
// bank c, and lane l of every warp counts in copy l. The 32 lanes of one atomic
// instruction therefore always hit 32 different banks: one pass, whatever the
// bytes. Warps share the copies safely, since the adds are atomic: 32 KiB per block
// however many warps, where spread16's 16 copies cost 16 KiB per warp. One block
// of 1024 threads per SM: 56 registers each, room for 5 to 8 loads in flight.
__global__ void __launch_bounds__(kLaneThreads, 1)
    histogram_per_lane_vec16(const uint8_t* __restrict__ in, int64_t n,
                             HistCount* __restrict__ hist) {
  extern __shared__ uint32_t sub[];  // [kBins][kWarp]
  for (int i = threadIdx.x; i < kBins * kWarp; i += kLaneThreads) sub[i] = 0;
  __syncthreads();
  count_vec16<kLaneThreads, kWarp>(in, n, sub + threadIdx.x % kWarp);
  __syncthreads();
  // Thread `bin` adds the bin's 32 copies, starting at copy `bin`: distinct banks
  // again. Every copy, and their sum, counts bytes of this block only: below 2^32
  // (see kMaxBytesPerBlock), so the 32-bit words cannot wrap.
  for (int bin = threadIdx.x; bin < kBins; bin += kLaneThreads) {
    const uint32_t total = sum_copies<kWarp>(sub, bin, bin);
    if (total) atomicAdd(&hist[bin], HistCount{total});
  }
}

void launch_per_lane_vec16(const hg::Job& j) {
  constexpr size_t smem = sizeof(uint32_t) * kBins * kWarp;  // 32 copies: 32 KiB
  static const int64_t resident = sw::resident_grid(histogram_per_lane_vec16, kLaneThreads, smem);
  CUDA_CHECK(cudaMemsetAsync(j.hist, 0, hg::kHistBytes));
  histogram_per_lane_vec16<<<vec16_grid(j.n, kLaneThreads, resident), kLaneThreads, smem>>>(
      j.in, j.n, j.hist);
  CHECK_LAUNCH();
}

}  // namespace ch08
// lab shared-privatized: hide end
