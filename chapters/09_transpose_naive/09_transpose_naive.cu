// Chapter 09: the naive transpose, both ways round.
//
// What changed:  a new problem. out (cols x rows) = transpose of in (rows x cols),
//                both row-major: out[c * rows + r] = in[r * cols + c]. Each thread
//                moves one element; a 32 x 32 block covers a 32 x 32 tile.
// The lesson:    one side of a naive transpose is always strided. Either a warp
//                reads one input row (coalesced: 32 floats, 128 bytes) and writes
//                one output column (32 floats, each in its own 32-byte sector), or
//                the reverse. Which side should pay? On a modern GPU the strided
//                READS are the cheaper side: loads are cached in L1, so the other
//                warps of the block find the rest of each sector there, while each
//                strided STORE goes to L2 as its own partial-sector write.
// Ceiling:       a copy kernel with the same launch shape moves the same bytes with
//                both sides coalesced; cublasSgeam is the vendor's transpose.
// Bottleneck:    L2 and L1 transactions of the strided side, not DRAM bandwidth.
// Run:           build/chapters/09_transpose_naive [--rows 16384 --cols 16384]
//                [--verify-only] [--json]
#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/cli.h"
#include "common/cublas_check.h"
#include "common/device.h"
#include "common/report.h"
#include "common/transpose_harness.h"

namespace {

constexpr int kTile = 32;  // a 32 x 32 block moves a 32 x 32 tile, one element per thread

// threadIdx.x walks along an INPUT row: reads coalesced, writes strided by `rows`.
template <class T>
__global__ void naive_read_coalesced(const T* __restrict__ in, T* __restrict__ out, int64_t rows,
                                     int64_t cols) {
  const int64_t r = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}

// threadIdx.x walks along an OUTPUT row: writes coalesced, reads strided by `cols`.
// The grid is laid over the output: x over its columns (our rows), y over its rows.
template <class T>
__global__ void naive_write_coalesced(const T* __restrict__ in, T* __restrict__ out, int64_t rows,
                                      int64_t cols) {
  const int64_t c = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}

template <class T>
void launch_read_coalesced(const T* in, T* out, int64_t rows, int64_t cols) {
  naive_read_coalesced<<<sw::transpose::tile_grid(cols, rows, kTile), dim3(kTile, kTile)>>>(in, out, rows, cols);
  CHECK_LAUNCH();
}

template <class T>
void launch_write_coalesced(const T* in, T* out, int64_t rows, int64_t cols) {
  naive_write_coalesced<<<sw::transpose::tile_grid(rows, cols, kTile), dim3(kTile, kTile)>>>(in, out, rows, cols);
  CHECK_LAUNCH();
}

}  // namespace

// The harness adds the copy ceiling and cublasSgeam, then verifies or times all.
int main(int argc, char** argv) {
  const std::vector<sw::transpose::Variant<float>> steps = {
      {"naive-read-coalesced", "step", launch_read_coalesced<float>},
      {"naive-write-coalesced", "step", launch_write_coalesced<float>},
  };
  return sw::transpose::run_float_chapter(
      argc, argv, "09_transpose_naive", "Naive matrix transpose: coalesced reads or coalesced writes.", "09", steps);
}
