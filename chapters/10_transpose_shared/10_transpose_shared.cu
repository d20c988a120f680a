// Chapter 10: the transpose staged through a shared-memory tile.
//
// What changed:  chapter 09's kernels had one strided side whichever way round.
//                Here a 32 x 32 block first reads a 32 x 32 tile of the input
//                along its rows (coalesced) into shared memory, waits at a barrier,
//                then writes the tile's columns as rows of the output (coalesced).
//                The transpose happens inside shared memory, where a "strided"
//                access costs no DRAM or L2 transactions.
// Prediction:    faster than chapter 09: every global access of a warp is now one
//                128-byte row segment, so DRAM and L2 see the same transactions as
//                a copy.
// Measured:      slower. On an H200 at 16384^2 it reached 0.74x chapter 09's best
//                (naive-write-coalesced): the prediction ignored the cost below.
// Bottleneck:    shared memory. tile[32][32] puts column k of every row in bank k,
//                so the column read tile[threadIdx.x][threadIdx.y] sends all 32
//                lanes of a warp to one bank: a 32-way bank conflict, replayed as
//                32 wavefronts, on every warp's read. That costs more than the
//                strided L1 sectors chapter 09 paid. Chapter 11 pads each tile row
//                to 33 floats, which puts a column in 32 different banks.
// Steps:         shared-tile
// Run:           build/chapters/10_transpose_shared [--rows 16384 --cols 16384]
//                [--verify-only] [--json]
#include <cstdint>
#include <vector>

#include "common/bench/program.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/transpose.h"
#include "shared_tile.cuh"

namespace {

using ch10::kTile;

// A grid of tiles: blockIdx.x is the tile column, blockIdx.y the tile row. grid.y
// holds at most 65535, so past 2,097,120 rows the launcher starts one grid per band
// of 65535 tile rows, the pointers offset to the band (sw::transpose::Bands). The
// body, read a tile along rows, wait, write its columns, is in shared_tile.cuh.
__global__ void transpose_shared_tile(const float* __restrict__ in, float* __restrict__ out,
                                      int64_t rows, int64_t cols) {
  __shared__ float tile[kTile][kTile];  // unpadded: a column of the tile lies in one bank
  ch10::transpose_via_tile(tile, in, out, rows, cols);
}

// Its launcher: the grid over the input's tiles, in bands; the timed call runs it.
void launch_shared_tile(const sw::transpose::Args<float>& a) {
  const sw::transpose::Bands bands(a.rows, kTile);  // x: input columns, y: input rows
  const dim3 grid(sw::transpose::grid_x(sw::ceil_div(a.cols, kTile)), bands.tiles);
  const dim3 block(kTile, kTile);
  for (const int64_t r0 : bands) {  // one band unless more than 65535 tile rows
    transpose_shared_tile<<<grid, block>>>(a.in + r0 * a.cols, a.out + r0, a.rows, a.cols);
    CHECK_LAUNCH();
  }
}

const std::vector<sw::transpose::Step> kSteps = {{"shared-tile", launch_shared_tile}};

}  // namespace

// The problem runs the copy ceiling and cublasSgeam beside the step.
int main(int argc, char** argv) {
  const sw::bench::Program<sw::transpose::Step> program{
      "10_transpose_shared", "Matrix transpose through a 32x32 shared-memory tile.", "10", kSteps};
  return sw::bench::run(argc, argv, program, sw::transpose::Problem{});
}
