// Chapter 19, step 7: warp tiles and two shared-memory stages, tiles chosen per GPU.
#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "sgemm.cuh"

namespace ch19 {
namespace {

// A block's tile of C (kTileM x kTileN) is cut into warp tiles (kWarpM x kWarpN), and a
// warp's tile into kIterM x kIterN sub-tiles in which each lane owns a 4 x 4 block: a lane's
// entries are kIterM x kIterN such blocks, one sub-tile apart. The lanes of a warp form a
// kLanesM x kLanesN grid, so a warp reads from shared memory only the rows and columns of
// its own compact tile: per k, kIterM float4s of A and kIterN of B per lane, each shared by
// the lanes of its row or column (broadcasts, no conflicts). Step 6's threads, 2 rows of 16
// per warp, read 16 different columns of B per warp, and the warps' sets overlap less well.
//
// Two shared-memory stages: while the warps multiply the tile in one stage, each thread's
// loads of the next tile from global memory are in flight into registers, and are stored
// into the other stage after the arithmetic. One barrier per tile (step 6: two), and the
// global loads' latency hides behind a tile of FMAs.
//
// The loads: the A tile (kTileM x kTileK) in float4s along k, a warp on 32 neighbouring rows
// at one k quad, stored transposed (as in step 6); the B tile (kTileK x kTileN) in float4s
// along its rows, stored as they are. kVec = false loads the same floats one at a time.
template <int kTileM_, int kTileN_, int kTileK_, int kWarpM_, int kWarpN_, int kIterM_, int kIterN_,
          int kMinBlocks_>
struct Tiles {
  static constexpr int kTileM = kTileM_, kTileN = kTileN_, kTileK = kTileK_;
  static constexpr int kWarpM = kWarpM_, kWarpN = kWarpN_, kIterM = kIterM_, kIterN = kIterN_;
  static constexpr int kMinBlocks = kMinBlocks_;  // __launch_bounds__: blocks per SM to fit
  static constexpr int kWarpsAcross = kTileN / kWarpN;
  static constexpr int kThreads = (kTileM / kWarpM) * kWarpsAcross * sw::kWarp;
  static constexpr int kSubM = kWarpM / kIterM, kSubN = kWarpN / kIterN;  // a sub-tile
  static constexpr int kLanesM = kSubM / 4, kLanesN = kSubN / 4;          // 4 x 4 per lane
  static constexpr int kLoadsA = kTileM * kTileK / 4 / kThreads;          // float4s per thread
  static constexpr int kLoadsB = kTileK * kTileN / 4 / kThreads;
  static constexpr int kStageFloats = kTileK * (kTileM + kTileN);
  static constexpr int kSharedBytes = 2 * kStageFloats * static_cast<int>(sizeof(float));
  static_assert(kLanesM * kLanesN == sw::kWarp, "a warp's lanes cover its sub-tile");
  static_assert(kLoadsA * kThreads * 4 == kTileM * kTileK, "whole float4s of A per thread");
  static_assert(kLoadsB * kThreads * 4 == kTileK * kTileN, "whole float4s of B per thread");
  static_assert(kTileM % sw::kWarp == 0, "a warp's A loads: 32 rows at one k quad");
  static_assert(kTileK % 4 == 0 && kTileM % kWarpM == 0 && kTileN % kWarpN == 0, "");
};

// The configurations of --config. sm80, the default (an A100-class tile): 128 x 128 x 8, 8 x 8
// a lane, two blocks per SM; measured the fastest of the three on the H100 and the H200.
// sm90 was the prediction for an H100 (132 SMs, 64 Ki registers and 228 KiB of shared memory
// per SM): the largest tile, 8 x 16 entries a lane, the most FMAs per shared load and per
// instruction, one block of 8 warps per SM. sm75 (a T4, 40 SMs, 64 KiB of shared memory per
// SM): 64 x 64 x 16, four warps, more blocks to fill a smaller GPU. The sweep of the default
// run times all three on the GPU at hand.
//                       tile M    N   K  warp M  N iter M  N  blocks/SM
using Sm90 = Tiles<128, 256, 16, 64, 64, 2, 4, 1>;
using Sm80 = Tiles<128, 128, 8, 32, 64, 2, 2, 2>;
using Sm75 = Tiles<64, 64, 16, 32, 32, 2, 1, 4>;

// This thread's float4s of the tiles of A and B at p0, from global memory into registers.
template <class T, bool kVec>
__device__ __forceinline__ void load_tiles(const float* A, const float* B, int m, int n, int k,
                                           int row0, int col0, int p0, float4 (&a)[T::kLoadsA],
                                           float4 (&b)[T::kLoadsB]) {
#pragma unroll
  for (int l = 0; l < T::kLoadsA; ++l) {
    const int f = threadIdx.x + l * T::kThreads, row = row0 + f % T::kTileM;
    a[l] = load4<kVec>(A + static_cast<int64_t>(row) * k, row < m, p0 + f / T::kTileM * 4, k);
  }
#pragma unroll
  for (int l = 0; l < T::kLoadsB; ++l) {
    const int f = threadIdx.x + l * T::kThreads, p = p0 + f / (T::kTileN / 4);
    const int col = f % (T::kTileN / 4) * 4;
    b[l] = load4<kVec>(B + static_cast<int64_t>(p) * n + col0, p < k, col, n - col0);
  }
}

// The registers of load_tiles into one stage: as[k][row] (A transposed), bs[k][col].
template <class T>
__device__ __forceinline__ void store_tiles(float* as, float* bs, const float4 (&a)[T::kLoadsA],
                                            const float4 (&b)[T::kLoadsB]) {
#pragma unroll
  for (int l = 0; l < T::kLoadsA; ++l) {
    const int f = threadIdx.x + l * T::kThreads, row = f % T::kTileM, p = f / T::kTileM * 4;
    as[(p + 0) * T::kTileM + row] = a[l].x;
    as[(p + 1) * T::kTileM + row] = a[l].y;
    as[(p + 2) * T::kTileM + row] = a[l].z;
    as[(p + 3) * T::kTileM + row] = a[l].w;
  }
#pragma unroll
  for (int l = 0; l < T::kLoadsB; ++l) {
    const int f = threadIdx.x + l * T::kThreads;
    *reinterpret_cast<float4*>(&bs[f / (T::kTileN / 4) * T::kTileN + f % (T::kTileN / 4) * 4]) =
        b[l];
  }
}

template <class T, bool kVec>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    sgemm_warp_tiled(const float* __restrict__ A, const float* __restrict__ B,
                     float* __restrict__ C, int m, int n, int k, float alpha, float beta) {
  extern __shared__ __align__(16) float shared[];  // stage s: A tile, then B tile
  const int row0 = blockIdx.y * T::kTileM, col0 = blockIdx.x * T::kTileN;
  const int warp = threadIdx.x / sw::kWarp, lane = threadIdx.x % sw::kWarp;
  const int warp_row = warp / T::kWarpsAcross * T::kWarpM,
            warp_col = warp % T::kWarpsAcross * T::kWarpN;
  const int lane_row = lane / T::kLanesN * 4, lane_col = lane % T::kLanesN * 4;
  float acc[T::kIterM][T::kIterN][4][4] = {};
  float4 a_next[T::kLoadsA], b_next[T::kLoadsB];
  load_tiles<T, kVec>(A, B, m, n, k, row0, col0, 0, a_next, b_next);
  store_tiles<T>(shared, shared + T::kTileK * T::kTileM, a_next, b_next);
  __syncthreads();
  for (int p0 = 0, stage = 0; p0 < k; p0 += T::kTileK, stage ^= 1) {
    const bool more = p0 + T::kTileK < k;
    if (more) load_tiles<T, kVec>(A, B, m, n, k, row0, col0, p0 + T::kTileK, a_next, b_next);
    const float* as = shared + stage * T::kStageFloats;
    const float* bs = as + T::kTileK * T::kTileM;
#pragma unroll
    for (int p = 0; p < T::kTileK; ++p) {
      float4 a[T::kIterM], b[T::kIterN];
#pragma unroll
      for (int i = 0; i < T::kIterM; ++i)
        a[i] = *reinterpret_cast<const float4*>(
            &as[p * T::kTileM + warp_row + i * T::kSubM + lane_row]);
#pragma unroll
      for (int j = 0; j < T::kIterN; ++j)
        b[j] = *reinterpret_cast<const float4*>(
            &bs[p * T::kTileN + warp_col + j * T::kSubN + lane_col]);
#pragma unroll
      for (int i = 0; i < T::kIterM; ++i)
#pragma unroll
        for (int j = 0; j < T::kIterN; ++j) {
          const float ar[4] = {a[i].x, a[i].y, a[i].z, a[i].w};
          const float bc[4] = {b[j].x, b[j].y, b[j].z, b[j].w};
#pragma unroll
          for (int r = 0; r < 4; ++r)
#pragma unroll
            for (int c = 0; c < 4; ++c) acc[i][j][r][c] += ar[r] * bc[c];
        }
    }
    if (more) {  // the other stage: every thread finished reading it before the last barrier
      float* next = shared + (stage ^ 1) * T::kStageFloats;
      store_tiles<T>(next, next + T::kTileK * T::kTileM, a_next, b_next);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < T::kIterM; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = row0 + warp_row + i * T::kSubM + lane_row + r;
      if (row >= m) continue;
      float* c_row = C + static_cast<int64_t>(row) * n;
#pragma unroll
      for (int j = 0; j < T::kIterN; ++j) {
        const int col = col0 + warp_col + j * T::kSubN + lane_col;
        const float* x = acc[i][j][r];
        store_row4<kVec>(c_row + col, col, n, make_float4(x[0], x[1], x[2], x[3]), alpha, beta);
      }
    }
}

// One configuration's kernel (float4 or scalar loads) and its launch shape. Its shared
// memory may pass the 48 KiB a launch gets without asking: it is allowed once.
struct Kernel {
  void (*kernel)(const float*, const float*, float*, int, int, int, float, float);
  int tile_m, tile_n, threads, shared_bytes;
};
template <class T, bool kVec>
Kernel kernel_of() {
  static const int allowed = [] {
    CUDA_CHECK(cudaFuncSetAttribute(sgemm_warp_tiled<T, kVec>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSharedBytes));
    return T::kSharedBytes;
  }();
  return {sgemm_warp_tiled<T, kVec>, T::kTileM, T::kTileN, T::kThreads, allowed};
}
template <class T>
Kernel kernel_of(bool vec) {
  return vec ? kernel_of<T, true>() : kernel_of<T, false>();
}

}  // namespace

// The table of --config: its index is Args::config, in launch_warp_tiled's order (the
// default first).
template <class T>
gm::TileConfig config_of(const char* name) {
  return {name, T::kTileM, T::kTileN, T::kTileK, T::kThreads};
}
const std::vector<gm::TileConfig> kWarpTileConfigs = {
    config_of<Sm80>("sm80"), config_of<Sm90>("sm90"), config_of<Sm75>("sm75")};

void launch_warp_tiled(const gm::Args& a) {
  const bool vec = gm::vector_ok(a);
  const Kernel pick = a.config == 1   ? kernel_of<Sm90>(vec)
                      : a.config == 2 ? kernel_of<Sm75>(vec)
                                      : kernel_of<Sm80>(vec);
  pick.kernel<<<tile_grid(a, pick.tile_m, pick.tile_n), pick.threads, pick.shared_bytes>>>(
      a.a, a.b, a.c, a.m, a.n, a.k, a.alpha, a.beta);
  CHECK_LAUNCH();
}

}  // namespace ch19
