// Chapter 09: the naive transpose, both ways round.
//
// What changed:  a new problem. out (cols x rows) = transpose of in (rows x cols),
//                both row-major: out[c * rows + r] = in[r * cols + c]. Each thread
//                moves one element; a 32 x 32 block covers a 32 x 32 tile.
// The lesson:    one side of a naive transpose is always strided. Either a warp
//                reads one input row (coalesced: 32 floats, 128 bytes) and writes
//                one output column (32 floats, each in its own 32-byte sector), or
//                the reverse. Which side should pay? On a modern GPU the strided
//                READS are the cheaper side: loads are cached in L1, and a 32-byte
//                sector holds 8 neighbouring columns, so one fetch serves the 8
//                warps of the block whose columns share it. Each strided STORE goes
//                to L2 as its own partial-sector write.
// Ceiling:       a copy kernel with the same launch shape moves the same bytes with
//                both sides coalesced; cublasSgeam is the vendor's transpose.
// Bottleneck:    L2 and L1 transactions of the strided side, not DRAM bandwidth.
// Steps:         naive-read-coalesced, naive-write-coalesced
// Run:           build/chapters/09_transpose_naive [--rows 16384 --cols 16384]
//                [--verify-only] [--json]
#include <cstdint>
#include <vector>

#include "common/bench/program.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/transpose.h"

namespace {

constexpr int kTile = 32;  // a 32 x 32 block moves a 32 x 32 tile, one element per thread

// Both kernels: a grid of tiles, blockIdx.x along grid.x, blockIdx.y along y.
// grid.y holds at most 65535 tiles, so past 2,097,120 elements along y the
// launchers start one grid per band of 65535 tiles, the pointers offset to the
// band's first row (or column): sw::transpose::Bands. Each launcher computes its
// grid and block beside its <<<>>>, and the timed call (bench::measure) runs it directly.

// naive-read-coalesced: threadIdx.x walks along an INPUT row: reads coalesced,
// writes strided by `rows`.
__global__ void transpose_naive_read_coalesced(const float* __restrict__ in,
                                               float* __restrict__ out, int64_t rows,
                                               int64_t cols) {
  // lab naive: begin
  const int64_t r = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
  // lab naive: end
}

void launch_naive_read_coalesced(const sw::transpose::Args<float>& a) {
  const sw::transpose::Bands bands(a.rows, kTile);  // x: input columns, y: input rows
  const dim3 grid(sw::transpose::grid_x(sw::ceil_div(a.cols, kTile)), bands.tiles);
  const dim3 block(kTile, kTile);
  for (const int64_t r0 : bands) {  // one band unless more than 65535 tile rows
    transpose_naive_read_coalesced<<<grid, block>>>(a.in + r0 * a.cols, a.out + r0, a.rows, a.cols);
    CHECK_LAUNCH();
  }
}

// naive-write-coalesced: threadIdx.x walks along an OUTPUT row: writes coalesced,
// reads strided by `cols`. The grid is laid over the output: x over its columns
// (our rows), y over its rows (our columns).
__global__ void transpose_naive_write_coalesced(const float* __restrict__ in,
                                                float* __restrict__ out, int64_t rows,
                                                int64_t cols) {
  // lab naive: begin
  const int64_t c = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
  // lab naive: end
}

void launch_naive_write_coalesced(const sw::transpose::Args<float>& a) {
  const sw::transpose::Bands bands(a.cols, kTile);  // x: input rows, y: input columns
  const dim3 grid(sw::transpose::grid_x(sw::ceil_div(a.rows, kTile)), bands.tiles);
  const dim3 block(kTile, kTile);
  for (const int64_t c0 : bands) {  // one band unless more than 65535 tile columns
    transpose_naive_write_coalesced<<<grid, block>>>(a.in + c0, a.out + c0 * a.rows, a.rows,
                                                     a.cols);
    CHECK_LAUNCH();
  }
}

// The step table, in the lesson's order.
const std::vector<sw::transpose::Step> kSteps = {
    {"naive-read-coalesced", launch_naive_read_coalesced},
    {"naive-write-coalesced", launch_naive_write_coalesced},
};

}  // namespace

// The problem runs the copy ceiling and cublasSgeam beside the steps.
int main(int argc, char** argv) {
  const sw::bench::Program<sw::transpose::Step> program{
      "09_transpose_naive", "Naive matrix transpose: coalesced reads or coalesced writes.", "09",
      kSteps};
  return sw::bench::run(argc, argv, program, sw::transpose::Problem{});
}
