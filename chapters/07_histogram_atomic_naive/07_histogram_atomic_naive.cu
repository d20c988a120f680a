// Chapter 07: a byte histogram with one global atomicAdd per byte.
//
// What changed:  the problem changes from sums to counting. A 256-bin histogram
//                of bytes cannot be split into independent partial results as
//                easily as a sum can: each byte increments one of only 256
//                counters, and many threads want the same counter at once. This
//                chapter does the obvious thing, the seed's first GPU version:
//                a grid-stride loop where every byte is one atomicAdd on a 64-bit
//                counter in global memory.
//                  global-atomic-2xsm   the seed's launch: 2 x SM blocks of 256 threads
//                  global-atomic-full   enough blocks to fill every SM
// Why it is slow: every atomic travels to L2, and atomics on one address are
//                done one after another there. 256 addresses for the whole GPU
//                means long queues; with all bytes equal, one queue, slow
//                enough that one CPU core (chapter 01) counting into its L1
//                cache keeps up with the whole GPU.
// Bottleneck:    the L2 atomic units' throughput on a few hot addresses, not DRAM.
// Steps:         global-atomic-2xsm, global-atomic-full
// Run:           build/chapters/07_histogram_atomic_naive [--bytes 2^30] [--offset K]
//                [--dist uniform|skewed | --dist equal --value V | --dist mix --value V --p P]
//                [--json]
//                build/chapters/07_histogram_atomic_naive --file PATH [--offset K] [--verify-only]
//                build/chapters/07_histogram_atomic_naive --verify-only [--bytes N] [--offset K]
//                build/chapters/07_histogram_atomic_naive --verify-only --large
#include <cstdint>
#include <vector>

#include "common/bench/program.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/histogram.h"

namespace {

namespace hg = sw::histogram;

using sw::HistCount;

constexpr int kThreads = 256;        // the seed's block size
constexpr int kSeedBlocksPerSm = 2;  // the seed's grid: 2 x SM count

// --- kernel -------------------------------------------------------------------------

// One atomicAdd per byte on the global 64-bit counters. 64 bits, so that a bin
// passes 2^32 without wrapping (--verify-only --large proves it).
__global__ void __launch_bounds__(kThreads)
    histogram_global_atomic(const uint8_t* __restrict__ in, int64_t n,
                            HistCount* __restrict__ hist) {
  // lab global-atomic: begin
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(&hist[in[i]], HistCount{1});
  // lab global-atomic: end
}

// --- the two steps: the same kernel, two grids ---------------------------------------

// Which grid: the seed's (global-atomic-2xsm: kSeedBlocksPerSm blocks per SM) or a full
// one (global-atomic-full: as many blocks as fit on every SM at once).
enum class Grid { kSeed, kFull };

template <Grid kGrid>
void launch_global_atomic(const hg::Job& j) {
  static const int64_t full = sw::resident_grid(histogram_global_atomic, kThreads);
  const int64_t blocks = kGrid == Grid::kSeed ? kSeedBlocksPerSm * sw::sm_count() : full;
  CUDA_CHECK(cudaMemsetAsync(j.hist, 0, hg::kHistBytes));  // zeroing is part of the job
  histogram_global_atomic<<<blocks, kThreads>>>(j.in, j.n, j.hist);
  CHECK_LAUNCH();
}

// The step table. The problem runs CUB first, then these steps; both are slow: few
// reps, and the all-equal input is cut to 2^28 bytes.
const std::vector<hg::Step> kSteps = {
    {"global-atomic-2xsm", launch_global_atomic<Grid::kSeed>, {}, "step", hg::kSlow},
    {"global-atomic-full", launch_global_atomic<Grid::kFull>, {}, "step", hg::kSlow},
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<hg::Step> program{
      "07_histogram_atomic_naive", "256-bin byte histogram with one global atomicAdd per byte.",
      "07", kSteps};
  return sw::bench::run(argc, argv, program, hg::Problem{});
}
