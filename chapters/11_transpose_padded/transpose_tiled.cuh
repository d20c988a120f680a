// Chapter 11's tiled steps, a self-contained unit that 11_transpose_padded.cu includes at
// its top: the tile constants (kTile, kPad); the tile body the steps share (move_tile)
// with its two orders and their launchers (launch_2d, which the padded step's launcher
// instantiates too, and launch_grouped); then the steps padded-32x8, tile64,
// tile64-float4, tile64-rows, tile64-rows-grouped, the copy ceiling of tile64-float4 and
// the double kernels, each with its launcher under it.
#pragma once

#include <cstdint>

#include "chapters/10_transpose_shared/shared_tile.cuh"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/transpose.h"

namespace {

constexpr int kTile = ch10::kTile;  // the padded tile: 32 x 32 (chapter 10's)
constexpr int kPad = 1;             // one extra element per tile row shifts each row by one bank
constexpr int kWarps = 8;           // the tiled kernels: blockDim = (32, kWarps)
constexpr int kThreads = sw::kWarp * kWarps;  // 256
constexpr int kWideTile = 64;                 // the tile of steps 3-6
constexpr int kGroup = 16;                    // tile-columns per band in the grouped order
constexpr int kNarrowRow = 32;                // elements of a row piece: 128 bytes of floats
constexpr int kWideRow = 64;                  // elements of a row piece: 256 bytes of floats

// --- 2-6 and the doubles: one tile body, moved by 256 threads ----------------------------
//
// A TILE x TILE tile is cut into warp-sized pieces of ROW consecutive elements of
// 32 * V / ROW rows: lane l moves the V elements starting at column
// (l % (ROW / V)) * V of row l / (ROW / V) of its piece. With ROW = 32 a warp
// access is V row segments of 128 bytes (floats), and with rows padded to TILE + 1
// every shared access of a warp hits 32 different banks, in both phases. With
// ROW = 64 and V = 2 a warp access is one 256-byte row segment, at the price of
// 2-way bank conflicts (lanes l and l + 16 share a bank).
// V = 1, ROW = 32, TILE = 32 is the classic 32 x 8 kernel.

// V elements moved by one load or store, as CUDA's vector types. The store goes
// through __stwb (st.global.wb: the default cache policy, made explicit) because
// the compiler otherwise splits a vector assembled from V shared loads back into V
// scalar stores.
template <class T, int V>
struct Vector;
template <>
struct Vector<float, 1> {
  using type = float;
  __device__ static float get(float v, int) { return v; }
  __device__ static float make(const float* e) { return e[0]; }
};
template <>
struct Vector<float, 2> {
  using type = float2;
  __device__ static float get(float2 v, int j) { return j == 0 ? v.x : v.y; }
  __device__ static float2 make(const float* e) { return make_float2(e[0], e[1]); }
};
template <>
struct Vector<float, 4> {
  using type = float4;
  __device__ static float get(float4 v, int j) {
    return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
  }
  __device__ static float4 make(const float* e) { return make_float4(e[0], e[1], e[2], e[3]); }
};
template <>
struct Vector<double, 1> {
  using type = double;
  __device__ static double get(double v, int) { return v; }
  __device__ static double make(const double* e) { return e[0]; }
};

template <int TILE, int V, int ROW>
struct TileMap {
  static_assert(TILE % ROW == 0, "a tile row is whole pieces");
  static_assert(V == 1 || V == 2 || V == 4, "vectors of 1, 2 or 4 elements");
  static_assert(ROW % V == 0 && sw::kWarp % (ROW / V) == 0, "a warp covers whole row pieces");
  static constexpr int kLanesPerRow = ROW / V;                    // lanes covering one row piece
  static constexpr int kRowsPerPiece = sw::kWarp / kLanesPerRow;  // rows a warp covers at once
  static constexpr int kPiecesPerRow = TILE / ROW;
  static constexpr int kPieces = (TILE / kRowsPerPiece) * kPiecesPerRow;  // warp-sized pieces
  static_assert(kPieces % kWarps == 0, "every warp moves the same number of pieces");
  static constexpr int kPerWarp = kPieces / kWarps;
  // Row and first column, within the tile, of lane `lane`'s vector in piece `p`.
  __device__ static int row(int p, int lane) {
    return (p / kPiecesPerRow) * kRowsPerPiece + lane / kLanesPerRow;
  }
  __device__ static int col(int p, int lane) {
    return (p % kPiecesPerRow) * ROW + (lane % kLanesPerRow) * V;
  }
};

// Moves the tile whose first input element is (row0, col0): every load, one
// barrier, every store.
template <class T, int TILE, int V, int ROW>
__device__ void move_tile(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int64_t cols,
                          int64_t row0, int64_t col0) {
  using Map = TileMap<TILE, V, ROW>;
  using Vec = Vector<T, V>;
  using VecT = typename Vec::type;
  __shared__ T tile[TILE][TILE + kPad];
  // Whole aligned vectors need a row length divisible by V (block-uniform tests).
  const bool vector_in = cols % V == 0, vector_out = rows % V == 0;

  // Read: piece by piece, all loads of a thread independent of each other.
#pragma unroll
  for (int k = 0; k < Map::kPerWarp; ++k) {
    const int p = threadIdx.y + k * kWarps;
    const int tr = Map::row(p, threadIdx.x), tc = Map::col(p, threadIdx.x);
    const int64_t r = row0 + tr, c = col0 + tc;
    if (r >= rows || c >= cols) continue;
    const int64_t i = r * cols + c;
    if (vector_in) {
      const VecT v = *reinterpret_cast<const VecT*>(in + i);
#pragma unroll
      for (int j = 0; j < V; ++j)
        tile[tr][tc + j] = Vec::get(v, j);  // j is a constant after unrolling
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j)
        if (c + j < cols) tile[tr][tc + j] = in[i + j];
    }
  }
  __syncthreads();

  // Write: the same pieces over the output tile, whose row tr is input column
  // col0 + tr and whose columns tc.. are input rows row0 + tc..
#pragma unroll
  for (int k = 0; k < Map::kPerWarp; ++k) {
    const int p = threadIdx.y + k * kWarps;
    const int tr = Map::row(p, threadIdx.x), tc = Map::col(p, threadIdx.x);
    const int64_t out_r = col0 + tr, out_c = row0 + tc;
    if (out_r >= cols || out_c >= rows) continue;
    const int64_t o = out_r * rows + out_c;
    if (vector_out) {
      T e[V];
#pragma unroll
      for (int j = 0; j < V; ++j) e[j] = tile[tc + j][tr];
      __stwb(reinterpret_cast<VecT*>(out + o), Vec::make(e));
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j)
        if (out_c + j < rows) out[o + j] = tile[tc + j][tr];
    }
  }
}

// The 2-D order: a 2-D grid, blockIdx.x along the input's columns, blockIdx.y
// along its rows.
template <class T, int TILE, int V, int ROW>
__device__ void transpose_2d_order(const T* __restrict__ in, T* __restrict__ out, int64_t rows,
                                   int64_t cols) {
  move_tile<T, TILE, V, ROW>(in, out, rows, cols, static_cast<int64_t>(blockIdx.y) * TILE,
                             static_cast<int64_t>(blockIdx.x) * TILE);
}

// The launcher of a kernel of the 2-D order: a 2-D grid over the input's TILE x TILE
// tiles, x along its columns, y along its rows in bands (sw::transpose::Bands), blocks
// of 32 x BY threads (256 for the tiled steps; 32 x 32 for the padded step). Each
// step's launcher, right under its kernel, is this instantiated for that kernel.
template <class T, void (*Kernel)(const T*, T*, int64_t, int64_t), int TILE, int BY = kWarps>
void launch_2d(const sw::transpose::Args<T>& a) {
  const sw::transpose::Bands bands(a.rows, TILE);  // x: input columns, y: input rows
  const dim3 grid(sw::transpose::grid_x(sw::ceil_div(a.cols, TILE)), bands.tiles);
  const dim3 block(sw::kWarp, BY);
  for (const int64_t r0 : bands) {  // one band unless more than 65535 tile rows
    Kernel<<<grid, block>>>(a.in + r0 * a.cols, a.out + r0, a.rows, a.cols);
    CHECK_LAUNCH();
  }
}

// The grouped order: a 1-D grid, one block per tile, that walks bands of kGroup
// tile-columns, tile row by tile row within a band, so that the blocks running at
// one time cover a compact patch of tiles instead of a few whole tile rows.
template <class T, int TILE, int V, int ROW>
__device__ void transpose_grouped_order(const T* __restrict__ in, T* __restrict__ out, int64_t rows,
                                        int64_t cols) {
  const int64_t tiles_r = sw::ceil_div(rows, TILE), tiles_c = sw::ceil_div(cols, TILE);
  const int64_t per_band = kGroup * tiles_r, b = blockIdx.x;
  const int64_t band = b / per_band, first = band * kGroup;
  const int64_t width =
      tiles_c - first < kGroup ? tiles_c - first : kGroup;  // the last band may be narrower
  const int64_t k = b - band * per_band;
  move_tile<T, TILE, V, ROW>(in, out, rows, cols, (k / width) * TILE, (first + k % width) * TILE);
}

// The launcher of a kernel of the grouped order: a 1-D grid, one block of 256 threads per
// TILE x TILE tile. Each grouped step's launcher, under its kernel, is this instantiated.
template <class T, void (*Kernel)(const T*, T*, int64_t, int64_t), int TILE>
void launch_grouped(const sw::transpose::Args<T>& a) {
  const int64_t tiles = sw::ceil_div(a.rows, TILE) * sw::ceil_div(a.cols, TILE);
  const dim3 grid(sw::transpose::grid_x(tiles)), block(sw::kWarp, kWarps);  // a block per tile
  Kernel<<<grid, block>>>(a.in, a.out, a.rows, a.cols);
  CHECK_LAUNCH();
}

// --- 2. padded-32x8: the 32 x 32 padded tile, four elements per thread ---------------------

__global__ void __launch_bounds__(kThreads)
    transpose_padded_32x8(const float* __restrict__ in, float* __restrict__ out, int64_t rows,
                          int64_t cols) {
  transpose_2d_order<float, kTile, 1, kNarrowRow>(in, out, rows, cols);
}

constexpr sw::transpose::Launch<float> launch_padded_32x8 =
    launch_2d<float, transpose_padded_32x8, kTile>;

// --- 3. tile64 (anti-example): a 64 x 64 tile, sixteen scalar elements per thread ------------

__global__ void __launch_bounds__(kThreads)
    transpose_tile64(const float* __restrict__ in, float* __restrict__ out, int64_t rows,
                     int64_t cols) {
  transpose_2d_order<float, kWideTile, 1, kNarrowRow>(in, out, rows, cols);
}

constexpr sw::transpose::Launch<float> launch_tile64 =
    launch_2d<float, transpose_tile64, kWideTile>;

// --- 4. tile64-float4: the same tile, 16-byte loads and stores ---------------------------------

__global__ void __launch_bounds__(kThreads)
    transpose_tile64_float4(const float* __restrict__ in, float* __restrict__ out, int64_t rows,
                            int64_t cols) {
  transpose_2d_order<float, kWideTile, 4, kNarrowRow>(in, out, rows, cols);
}

constexpr sw::transpose::Launch<float> launch_tile64_float4 =
    launch_2d<float, transpose_tile64_float4, kWideTile>;

// The copy ceiling of tile64-float4's launch shape, vector width and pieces: out = in.
__global__ void __launch_bounds__(kThreads)
    copy_tile64_float4(const float* __restrict__ in, float* __restrict__ out, int64_t rows,
                       int64_t cols) {
  using Map = TileMap<kWideTile, 4, kNarrowRow>;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kWideTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kWideTile;
  const bool vector = cols % 4 == 0;
#pragma unroll
  for (int k = 0; k < Map::kPerWarp; ++k) {
    const int p = threadIdx.y + k * kWarps;
    const int64_t r = row0 + Map::row(p, threadIdx.x), c = col0 + Map::col(p, threadIdx.x);
    if (r >= rows || c >= cols) continue;
    const int64_t i = r * cols + c;
    if (vector) {
      *reinterpret_cast<float4*>(out + i) = *reinterpret_cast<const float4*>(in + i);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (c + j < cols) out[i + j] = in[i + j];
    }
  }
}

void launch_copy_tile64_float4(const sw::transpose::Args<float>& a) {
  const sw::transpose::Bands bands(a.rows, kWideTile);  // x: columns, y: rows
  const dim3 grid(sw::transpose::grid_x(sw::ceil_div(a.cols, kWideTile)), bands.tiles);
  const dim3 block(sw::kWarp, kWarps);
  for (const int64_t r0 : bands) {  // one band unless more than 65535 tile rows
    copy_tile64_float4<<<grid, block>>>(a.in + r0 * a.cols, a.out + r0 * a.cols, a.rows, a.cols);
    CHECK_LAUNCH();
  }
}

// --- 5. tile64-rows: a float2 per lane, one 256-byte row segment per warp instruction ----------

__global__ void __launch_bounds__(kThreads)
    transpose_tile64_rows(const float* __restrict__ in, float* __restrict__ out, int64_t rows,
                          int64_t cols) {
  transpose_2d_order<float, kWideTile, 2, kWideRow>(in, out, rows, cols);
}

constexpr sw::transpose::Launch<float> launch_tile64_rows =
    launch_2d<float, transpose_tile64_rows, kWideTile>;

// --- 6. tile64-rows-grouped: the same tiles in the grouped order -------------------------------

__global__ void __launch_bounds__(kThreads)
    transpose_tile64_rows_grouped(const float* __restrict__ in, float* __restrict__ out,
                                  int64_t rows, int64_t cols) {
  transpose_grouped_order<float, kWideTile, 2, kWideRow>(in, out, rows, cols);
}

constexpr sw::transpose::Launch<float> launch_tile64_rows_grouped =
    launch_grouped<float, transpose_tile64_rows_grouped, kWideTile>;

// --- doubles: 8-byte elements already make 256-byte rows of 32; V = 1 keeps the banks
// conflict-free (a 64-bit access is served as two half-warps) ------------------------------------

__global__ void __launch_bounds__(kThreads)
    transpose_double_tile32(const double* __restrict__ in, double* __restrict__ out, int64_t rows,
                            int64_t cols) {
  transpose_2d_order<double, kTile, 1, kNarrowRow>(in, out, rows, cols);
}

constexpr sw::transpose::Launch<double> launch_double_tile32 =
    launch_2d<double, transpose_double_tile32, kTile>;

__global__ void __launch_bounds__(kThreads)
    transpose_double_tile32_grouped(const double* __restrict__ in, double* __restrict__ out,
                                    int64_t rows, int64_t cols) {
  transpose_grouped_order<double, kTile, 1, kNarrowRow>(in, out, rows, cols);
}

constexpr sw::transpose::Launch<double> launch_double_tile32_grouped =
    launch_grouped<double, transpose_double_tile32_grouped, kTile>;

}  // namespace
