// Chapter 08: privatized histograms, from the seed's shared-memory kernel to DRAM speed.
//
// What changed:  chapter 07 sent every byte to one of 256 counters in global
//                memory. Here each block counts into private counters in shared
//                memory and adds them to the global totals once, at the end: the
//                seed's two phases. Then one measured step at a time:
//                  seed-2xsm         the seed: one shared histogram per block, 2 x SM blocks
//                  shared-full-grid  the same kernel with enough blocks to fill every SM
//                  per-warp          one sub-histogram per warp: warps stop sharing counters
//                  per-warp-vec16    each thread loads 16 bytes at a time
//                  spread16-vec16    16 copies per warp, so that the 32 lanes of one atomic
//                                    instruction fall into different shared-memory banks
//                  adaptive-vec16    the warp votes: when most lanes hold the same byte they
//                                    share one copy again, because the hardware merges
//                                    atomics to one address but not to 16 addresses
//                  adaptive-runs-vec16  on that plain path, 16 equal bytes in every lane
//                                    count as one run: one atomic instead of 16
//                  per-lane-vec16    32 copies per BLOCK, one per lane index, shared by all
//                                    its warps: every atomic instruction hits 32 different
//                                    banks whatever the bytes, in 32 KiB per block
// Why faster:    a shared-memory atomic is a short trip inside the SM, where a global one
//                crosses the chip to L2; private copies cut the contention; 16-byte loads
//                keep enough bytes in flight to cover DRAM latency; one copy per lane
//                makes every atomic one pass through the banks.
// Bottleneck:    byte loads are latency-bound (the seed); with 16-byte loads, the shared-
//                memory atomic unit: bank conflicts on uniform bytes, same-address traffic
//                on repeated bytes; with per-lane copies, DRAM on every input.
// Steps:         seed-2xsm, shared-full-grid, per-warp,
// lab shared-privatized: hide begin
//                per-warp-vec16, spread16-vec16, adaptive-vec16, adaptive-runs-vec16,
//                per-lane-vec16
// lab shared-privatized: hide end
// Run:           build/chapters/08_histogram_privatized [--bytes 2^30] [--offset K]
//                [--dist uniform|skewed | --dist equal --value V | --dist mix --value V --p P]
//                [--json]
//                build/chapters/08_histogram_privatized --file PATH [--offset K] [--verify-only]
//                build/chapters/08_histogram_privatized --verify-only [--bytes N] [--offset K]
//                build/chapters/08_histogram_privatized --verify-only --large
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/bench/program.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/histogram.h"
#include "histogram_vec16.h"  // grid_for; the 16-byte steps' launchers (histogram_vec16.cu)

namespace hg = sw::histogram;

namespace ch08 {

// A block's shared counters are 32 bits: no block may see 2^32 bytes. The grid gives
// each block at most this many, plus one vector per thread and 30 edge bytes.
constexpr int64_t kMaxBytesPerBlock = int64_t{1} << 31;

// At least enough blocks that none counts more than kMaxBytesPerBlock bytes.
int64_t grid_for(int64_t n, int64_t blocks) {
  return std::max(blocks, sw::ceil_div(n, kMaxBytesPerBlock));
}

}  // namespace ch08

namespace {

using ch08::grid_for;
using hg::kBins;
using sw::HistCount;
using sw::kWarp;

constexpr int kSeedThreads = 256;    // the seed's block: one thread per bin
constexpr int kSeedBlocksPerSm = 2;  // the seed's grid: 2 x SM count
constexpr int kSeedWarps = kSeedThreads / kWarp;

static_assert(kSeedThreads == kBins, "the seed's kernel has one thread per bin");

// --- 1-byte loads: the seed and per-warp ------------------------------------------------

// The seed's two phases with kCopies sub-histograms per block; the calling thread
// counts into sub[copy]. Phase 1: a grid-stride loop over bytes, one shared-memory
// atomic per byte. Phase 2: thread `bin` adds up its bin over the copies and sends
// the block's total to global memory, one atomic per bin per block.
template <int kCopies>
__device__ void count_bytes(const uint8_t* __restrict__ in, int64_t n, HistCount* __restrict__ hist,
                            uint32_t (*sub)[kBins], int copy) {
  // lab shared-privatized: begin
  const int bin = threadIdx.x;
  for (int c = 0; c < kCopies; ++c) sub[c][bin] = 0;
  __syncthreads();
  const int64_t stride = int64_t{gridDim.x} * kSeedThreads;
  for (int64_t i = int64_t{blockIdx.x} * kSeedThreads + threadIdx.x; i < n; i += stride)
    atomicAdd(&sub[copy][in[i]], 1u);
  __syncthreads();
  uint32_t total = 0;
  for (int c = 0; c < kCopies; ++c) total += sub[c][bin];
  if (total) atomicAdd(&hist[bin], HistCount{total});
  // lab shared-privatized: end
}

// seed-2xsm and shared-full-grid: one histogram per block.
__global__ void __launch_bounds__(kSeedThreads)
    histogram_shared(const uint8_t* __restrict__ in, int64_t n, HistCount* __restrict__ hist) {
  __shared__ uint32_t sub[1][kBins];
  count_bytes<1>(in, n, hist, sub, 0);
}

void launch_seed_2xsm(const hg::Job& j) {
  const int64_t blocks = grid_for(j.n, kSeedBlocksPerSm * sw::sm_count());
  CUDA_CHECK(cudaMemsetAsync(j.hist, 0, hg::kHistBytes));  // zeroing is part of the job
  histogram_shared<<<blocks, kSeedThreads>>>(j.in, j.n, j.hist);
  CHECK_LAUNCH();
}

void launch_shared_full_grid(const hg::Job& j) {
  static const int64_t resident = sw::resident_grid(histogram_shared, kSeedThreads);
  CUDA_CHECK(cudaMemsetAsync(j.hist, 0, hg::kHistBytes));
  histogram_shared<<<grid_for(j.n, resident), kSeedThreads>>>(j.in, j.n, j.hist);
  CHECK_LAUNCH();
}

// per-warp: one histogram per warp.
__global__ void __launch_bounds__(kSeedThreads)
    histogram_per_warp(const uint8_t* __restrict__ in, int64_t n, HistCount* __restrict__ hist) {
  __shared__ uint32_t sub[kSeedWarps][kBins];
  count_bytes<kSeedWarps>(in, n, hist, sub, threadIdx.x / kWarp);
}

void launch_per_warp(const hg::Job& j) {
  static const int64_t resident = sw::resident_grid(histogram_per_warp, kSeedThreads);
  CUDA_CHECK(cudaMemsetAsync(j.hist, 0, hg::kHistBytes));
  histogram_per_warp<<<grid_for(j.n, resident), kSeedThreads>>>(j.in, j.n, j.hist);
  CHECK_LAUNCH();
}

// The step table. The problem runs CUB first, then these steps, on each input. The
// later steps hold the lab task's answer (zero, count, merge): they are in
// histogram_vec16.cu, whose code a student copy of the histogram track leaves out.
const std::vector<hg::Step> kSteps = {
    {"seed-2xsm", launch_seed_2xsm},
    {"shared-full-grid", launch_shared_full_grid},
    {"per-warp", launch_per_warp},
    // lab shared-privatized: hide begin
    {"per-warp-vec16", ch08::launch_per_warp_vec16},
    {"spread16-vec16", ch08::launch_spread16_vec16},
    {"adaptive-vec16", ch08::launch_adaptive_vec16},
    {"adaptive-runs-vec16", ch08::launch_adaptive_runs_vec16},
    {"per-lane-vec16", ch08::launch_per_lane_vec16},
    // lab shared-privatized: hide end
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<hg::Step> program{
      "08_histogram_privatized", "256-bin byte histogram with privatized shared-memory counters.",
      "08", kSteps};
  return sw::bench::run(argc, argv, program, hg::Problem{});
}
