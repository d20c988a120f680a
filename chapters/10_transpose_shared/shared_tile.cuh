// Chapter 10's tile body, which chapter 11's padded step reuses: the two kernels
// differ only in how they declare the tile (chapter 11 pads each row by kPad).
#pragma once

#include <cstdint>

namespace ch10 {

constexpr int kTile = 32;  // 32 x 32 threads move one 32 x 32 tile, one element each

// The block's tile (tile row blockIdx.y, tile column blockIdx.x) of the rows x cols
// input, through `tile` in shared memory (kRow floats a row: kTile, or more to pad),
// to its transposed place in the output.
template <int kRow>
__device__ __forceinline__ void transpose_via_tile(float (&tile)[kTile][kRow],
                                                   const float* __restrict__ in,
                                                   float* __restrict__ out, int64_t rows,
                                                   int64_t cols) {
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile;  // the tile's first input row
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;  // and first input column

  // lab shared-tile: begin
  // Read: a warp (fixed threadIdx.y) reads 32 consecutive floats of one input row.
  const int64_t r = row0 + threadIdx.y, c = col0 + threadIdx.x;
  if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
  __syncthreads();  // the whole tile is in shared memory before anyone reads it

  // Write: a warp writes 32 consecutive floats of one output row, i.e. one input
  // column of the tile: output row col0 + y, output columns row0 + x.
  const int64_t out_r = col0 + threadIdx.y, out_c = row0 + threadIdx.x;
  if (out_r < cols && out_c < rows) out[out_r * rows + out_c] = tile[threadIdx.x][threadIdx.y];
  // lab shared-tile: end
}

}  // namespace ch10
