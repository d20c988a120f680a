// Chapter 19's shared pieces: how every step writes C, and the launchers of the steps
// that live in the chapter's other files (the step table in 19_sgemm.cu lists them all).
#pragma once

#include <vector>

#include "common/problems/gemm.h"

namespace ch19 {

namespace gm = sw::gemm;

// --- reading A and B: the float4 steps ------------------------------------------------------

// Four floats of a row, columns c to c + 3 of `cols`, from row_start (the row's column 0
// of this tile); 0 outside the matrix (row_in false, or a column past cols). kVec (c and
// cols multiples of 4, the row 16-byte aligned): one float4 load, the four all in or all
// out. Else each float alone.
template <bool kVec>
__device__ __forceinline__ float4 load4(const float* row_start, bool row_in, int c, int cols) {
  if constexpr (kVec) {
    return row_in && c < cols ? *reinterpret_cast<const float4*>(row_start + c)
                              : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  } else {
    float f[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) f[j] = row_in && c + j < cols ? row_start[c + j] : 0.0f;
    return make_float4(f[0], f[1], f[2], f[3]);
  }
}

// --- writing C: the epilogue of every step -------------------------------------------------

// One entry of C: alpha * acc + beta * c. With beta = 0, c is not read: BLAS says C need
// not hold a number then (it is poisoned, NaN, and 0 * NaN would be NaN).
__device__ __forceinline__ void store_c(float* c, float acc, float alpha, float beta) {
  *c = beta == 0.0f ? alpha * acc : fmaf(beta, *c, alpha * acc);
}

// Four entries of one row, columns col to col + 3 of n, at c (the entry of column col).
// kVec (n and col multiples of 4): the four are all in the row or all out, and c is 16-byte
// aligned: one float4 store (and load, for beta). Else each entry alone, guarded.
template <bool kVec>
__device__ __forceinline__ void store_row4(float* c, int col, int n, float4 acc, float alpha,
                                           float beta) {
  if constexpr (kVec) {
    if (col >= n) return;
    float4 out = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    if (beta != 0.0f) {
      const float4 old = *reinterpret_cast<const float4*>(c);
      out = make_float4(fmaf(beta, old.x, out.x), fmaf(beta, old.y, out.y),
                        fmaf(beta, old.z, out.z), fmaf(beta, old.w, out.w));
    }
    *reinterpret_cast<float4*>(c) = out;
  } else {
    const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (col + j < n) store_c(c + j, v[j], alpha, beta);
  }
}

// The grid of a step whose block computes a tile_m x tile_n tile of C: x across the
// columns, y down the rows (at most 2^16 / 32 = 2048 tiles: within grid.y's 65535).
inline dim3 tile_grid(const gm::Args& a, int tile_m, int tile_n) {
  return dim3(static_cast<unsigned>(sw::ceil_div(a.n, tile_n)),
              static_cast<unsigned>(sw::ceil_div(a.m, tile_m)));
}

// --- the launchers of steps 4 to 8 -----------------------------------------------------------
void launch_register_1d(const gm::Args& a);        // register_blocking.cu
void launch_register_2d(const gm::Args& a);        // register_blocking.cu
void launch_vector_transposed(const gm::Args& a);  // vector_tiles.cu
void launch_warp_tiled(const gm::Args& a);         // warp_tiles.cu
void launch_cp_async(const gm::Args& a);           // cp_async_tiles.cu
// warp-tiled's tile configurations, the default (sm80) first: --config.
extern const std::vector<gm::TileConfig> kWarpTileConfigs;

}  // namespace ch19
