// Chapter 11: a padded tile, then more work per thread, wider rows, a better order.
//
// What changed:  1. padded: chapter 10's kernel with tile[32][33] instead of
//                   tile[32][32]. Row i of the tile now starts i banks further on,
//                   so a column's 32 elements lie in 32 different banks: the 32-way
//                   conflict of chapter 10 is gone.
//                2. padded-32x8: 32 x 8 threads move the same tile, four elements
//                   each: four independent loads in flight per thread before the
//                   barrier, and 256-thread blocks instead of 1024.
//                3. tile64 (anti-example): a 64 x 64 tile, sixteen scalar elements
//                   per thread. 80 registers a thread cut the blocks per SM to 3.
//                4. tile64-float4: the same tile with 16-byte loads and stores.
//                5. tile64-rows: each warp instruction moves one whole 256-byte row
//                   segment (a float2 per lane) instead of four 128-byte pieces.
//                6. tile64-rows-grouped: blocks walk the tiles in bands of
//                   kGroup tile-columns, so the tiles in flight at one time form a
//                   compact patch and their writes land in long runs of each
//                   output row.
//                Then the same kernel for doubles, against cublasDgeam.
// Why faster:    with both global sides coalesced and shared memory conflict-free,
//                a transpose is a copy whose speed is set by the bytes in flight per
//                SM and by how DRAM-friendly the scattered side is.
// Ceilings:      the 32 x 32 copy of chapters 09-10, and a copy with the launch
//                shape of tile64-float4; cublasSgeam / cublasDgeam are the vendor.
// Run:           build/chapters/11_transpose_padded [--rows 16384 --cols 16384]
//                [--verify-only [--large]] [--json]
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/cli.h"
#include "common/cublas_check.h"
#include "common/device.h"
#include "common/report.h"
#include "common/transpose_harness.h"

namespace {

constexpr int kTile = 32;       // the padded kernel: 32 x 32 threads, one element each
constexpr int kPad = 1;         // one extra element per tile row shifts each row by one bank
constexpr int kWarps = 8;       // the tiled kernels: blockDim = (32, kWarps), 256 threads
constexpr int kWideTile = 64;   // the tile of steps 3-6
constexpr int kGroup = 16;      // tile-columns per band in the grouped order
constexpr int kNarrowRow = 32;  // elements of a row piece: 128 bytes of floats
constexpr int kWideRow = 64;    // elements of a row piece: 256 bytes of floats

// --- 1. the padded tile ------------------------------------------------------------

template <class T>
__global__ void transpose_padded_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t rows,
                                        int64_t cols) {
  __shared__ T tile[kTile][kTile + kPad];  // the only change from chapter 10
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t r = row0 + threadIdx.y, c = col0 + threadIdx.x;
  if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
  __syncthreads();
  const int64_t out_r = col0 + threadIdx.y, out_c = row0 + threadIdx.x;
  if (out_r < cols && out_c < rows) out[out_r * rows + out_c] = tile[threadIdx.x][threadIdx.y];
}

// --- 2-6. the general tiled kernel ---------------------------------------------------
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
  __device__ static float get(float4 v, int j) { return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w; }
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
  static_assert(ROW % V == 0 && 32 % (ROW / V) == 0, "a warp covers whole row pieces");
  static constexpr int kLanesPerRow = ROW / V;                  // lanes covering one row piece
  static constexpr int kRowsPerPiece = 32 / kLanesPerRow;       // rows a warp covers at once
  static constexpr int kPiecesPerRow = TILE / ROW;
  static constexpr int kPieces = (TILE / kRowsPerPiece) * kPiecesPerRow;  // warp-sized pieces
  static_assert(kPieces % kWarps == 0, "every warp moves the same number of pieces");
  static constexpr int kPerWarp = kPieces / kWarps;
  // Row and first column, within the tile, of lane `lane`'s vector in piece `p`.
  __device__ static int row(int p, int lane) { return (p / kPiecesPerRow) * kRowsPerPiece + lane / kLanesPerRow; }
  __device__ static int col(int p, int lane) { return (p % kPiecesPerRow) * ROW + (lane % kLanesPerRow) * V; }
};

// The tile (tile row, tile column) a block moves. GROUP == 0: a 2-D grid, blockIdx.x
// along the input's columns. GROUP > 0: a 1-D grid that walks bands of GROUP
// tile-columns, tile row by tile row within a band, so that the blocks running at
// one time cover a compact patch of tiles instead of a few whole tile rows.
template <int TILE, int GROUP>
__device__ void block_tile(int64_t rows, int64_t cols, int64_t* tile_r, int64_t* tile_c) {
  if constexpr (GROUP == 0) {
    *tile_r = blockIdx.y;
    *tile_c = blockIdx.x;
  } else {
    const int64_t tiles_r = (rows + TILE - 1) / TILE, tiles_c = (cols + TILE - 1) / TILE;
    const int64_t per_band = GROUP * tiles_r, b = blockIdx.x;
    const int64_t band = b / per_band, first = band * GROUP;
    const int64_t width = tiles_c - first < GROUP ? tiles_c - first : GROUP;  // the last band may be narrower
    const int64_t k = b - band * per_band;
    *tile_r = k / width;
    *tile_c = first + k % width;
  }
}

template <class T, int TILE, int V, int ROW, int GROUP>
__global__ void __launch_bounds__(32 * kWarps)
    transpose_tiled_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int64_t cols) {
  using Map = TileMap<TILE, V, ROW>;
  using Vec = Vector<T, V>;
  using VecT = typename Vec::type;
  __shared__ T tile[TILE][TILE + kPad];
  int64_t tile_r, tile_c;
  block_tile<TILE, GROUP>(rows, cols, &tile_r, &tile_c);
  const int64_t row0 = tile_r * TILE, col0 = tile_c * TILE;
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
      for (int j = 0; j < V; ++j) tile[tr][tc + j] = Vec::get(v, j);  // j is a constant after unrolling
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

// The copy ceiling of tile64-float4's launch shape and vector width: out = in.
template <class T, int TILE, int V>
__global__ void __launch_bounds__(32 * kWarps)
    copy_tiled_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t rows, int64_t cols) {
  using Map = TileMap<TILE, V, kNarrowRow>;
  using VecT = typename Vector<T, V>::type;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * TILE;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * TILE;
  const bool vector = cols % V == 0;
#pragma unroll
  for (int k = 0; k < Map::kPerWarp; ++k) {
    const int p = threadIdx.y + k * kWarps;
    const int64_t r = row0 + Map::row(p, threadIdx.x), c = col0 + Map::col(p, threadIdx.x);
    if (r >= rows || c >= cols) continue;
    const int64_t i = r * cols + c;
    if (vector) {
      *reinterpret_cast<VecT*>(out + i) = *reinterpret_cast<const VecT*>(in + i);
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j)
        if (c + j < cols) out[i + j] = in[i + j];
    }
  }
}

// --- launches ------------------------------------------------------------------------

template <class T>
void launch_padded(const T* in, T* out, int64_t rows, int64_t cols) {
  transpose_padded_kernel<<<sw::transpose::tile_grid(cols, rows, kTile), dim3(kTile, kTile)>>>(in, out, rows,
                                                                                               cols);
  CHECK_LAUNCH();
}

template <class T, int TILE, int V, int ROW = kNarrowRow, int GROUP = 0>
void launch_tiled(const T* in, T* out, int64_t rows, int64_t cols) {
  dim3 grid = sw::transpose::tile_grid(cols, rows, TILE);
  if (GROUP > 0) grid = dim3(grid.x * grid.y);  // at most 2^30 tiles: within grid.x's limit
  transpose_tiled_kernel<T, TILE, V, ROW, GROUP><<<grid, dim3(32, kWarps)>>>(in, out, rows, cols);
  CHECK_LAUNCH();
}

template <class T, int TILE, int V>
void launch_copy_tiled(const T* in, T* out, int64_t rows, int64_t cols) {
  copy_tiled_kernel<T, TILE, V><<<sw::transpose::tile_grid(cols, rows, TILE), dim3(32, kWarps)>>>(in, out, rows,
                                                                                                 cols);
  CHECK_LAUNCH();
}

}  // namespace

int main(int argc, char** argv) {
  sw::transpose::Options t;
  sw::Cli cli("11_transpose_padded", "Matrix transpose: padded tile, more work per thread, wide rows, grouped order.");
  sw::transpose::add_options(cli, &t, /*with_large=*/true);
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  sw::transpose::check_sides(t);
  const sw::Gpu gpu = sw::start_gpu(opt);
  if (!opt.verify_only) sw::transpose::require_fits(gpu, t, sizeof(double));  // floats, then doubles
  sw::Report report(opt, gpu.copy_gbps, "11", "transpose");
  const sw::transpose::Blas blas;

  using FloatVariant = sw::transpose::Variant<float>;
  const FloatVariant copy = sw::transpose::copy_variant<float>();
  const FloatVariant copy_wide{"copy-tile64-float4", "ceiling", launch_copy_tiled<float, kWideTile, 4>, true};
  const FloatVariant sgeam = sw::transpose::vendor_variant<float>(blas);
  const FloatVariant padded{"padded", "step", launch_padded<float>};
  const FloatVariant best{"tile64-rows-grouped", "step", launch_tiled<float, kWideTile, 2, kWideRow, kGroup>};
  const std::vector<FloatVariant> floats = {
      copy,
      copy_wide,
      sgeam,
      padded,
      {"padded-32x8", "step", launch_tiled<float, kTile, 1>},
      {"tile64", "anti-example", launch_tiled<float, kWideTile, 1>},
      {"tile64-float4", "step", launch_tiled<float, kWideTile, 4>},
      {"tile64-rows", "step", launch_tiled<float, kWideTile, 2, kWideRow>},
      best,
  };
  // Doubles: 8-byte elements already make 256-byte rows of 32; V = 1 keeps the
  // banks conflict-free (a 64-bit access is served as two half-warps).
  const std::string f64 = "transpose-f64";
  const std::vector<sw::transpose::Variant<double>> doubles = {
      sw::transpose::vendor_variant<double>(blas),
      {"double-tile32", "step", launch_tiled<double, kTile, 1>},
      {"double-tile32-grouped", "step", launch_tiled<double, kTile, 1, kNarrowRow, kGroup>},
  };

  if (opt.verify_only && t.large) {
    // More than 2^31 elements: proves the 64-bit indexing of our kernels. The double
    // variants are the same templates (only T differs), so floats keep this test
    // to ~2 x 8.6 GB of device and pinned host memory and well under a minute.
    int64_t most = 0;
    for (const auto& s : sw::transpose::large_shapes()) most = std::max(most, s.count());
    sw::require_fits(gpu, "--large (elements)", most, 2.0 * sizeof(float));
    std::vector<FloatVariant> ours;
    for (const auto& v : floats)
      if (v.large && v.name != "copy" && v.role != "anti-example") ours.push_back(v);
    sw::transpose::verify(report, ours, sw::transpose::large_shapes(), opt.seed, /*only_large=*/true);
    return report.exit_code();
  }
  if (opt.verify_only) {
    sw::transpose::verify(report, floats, sw::transpose::sweep_shapes(), opt.seed);
    sw::transpose::verify(report, doubles, sw::transpose::sweep_shapes(), opt.seed);
    return report.exit_code();
  }
  sw::transpose::benchmark(report, opt, floats, {t.rows, t.cols}, opt.seed);
  sw::transpose::benchmark(report, opt, doubles, {t.rows, t.cols}, opt.seed, "", "", f64);
  sw::transpose::benchmark_cache_resident(report, opt, std::vector<FloatVariant>{copy_wide, sgeam, padded, best}, opt.seed);
  return report.exit_code();
}
