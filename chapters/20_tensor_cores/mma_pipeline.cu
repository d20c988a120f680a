// Chapter 20, step 3: a cp.async pipeline of four shared-memory stages, rows XOR-swizzled.
#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "tc.cuh"

namespace ch20 {
namespace pipeline {

// A block computes a 128 x 256 tile of C with 8 warps (2 down, 4 across, each 64 x 64: 4 x 8
// tiles of mma's 16 x 8), k 32 at a time. Four stages of shared memory, each an A tile
// (128 x 32) and a B tile (32 x 256): 24 KiB a stage, 96 KiB in all.
constexpr int kTileM = 128, kTileN = 256, kTileK = 32, kStages = 4, kThreads = 256;
constexpr int kWarpsN = 4, kWarpM = 64, kWarpN = 64;
constexpr int kTilesM = kWarpM / kMmaM, kTilesN = kWarpN / kMmaN;
constexpr int kChunksA = kTileK / kChunk, kChunksB = kTileN / kChunk;  // 16-byte chunks a row
constexpr int kStageA = kTileM * kTileK, kStage = kStageA + kTileK * kTileN;  // elements
constexpr int kSharedBytes = kStages * kStage * static_cast<int>(sizeof(uint16_t));
constexpr int kLoadsA = kTileM * kChunksA / kThreads, kLoadsB = kTileK * kChunksB / kThreads;
static_assert(kLoadsA * kThreads == kTileM * kChunksA && kLoadsB * kThreads == kTileK * kChunksB,
              "whole chunks per thread");
static_assert(kChunksA == 4 && kChunksB % 8 == 0, "the swizzles below are for these rows");

// The swizzle: where chunk c of row r sits in a stage. No padding: an A row is 64 bytes (4
// chunks), a B row 512 (32 chunks). One phase of ldmatrix reads chunk c of 8 consecutive rows
// (r0 a multiple of 8). Unswizzled, the even A rows would fall in one 16-byte bank group and
// the odd ones in another (rows r and r + 2 are 128 bytes apart), and the B rows all in one
// (512 apart): a 4-way and an 8-way conflict.
// XOR-ing c with (r / 2) % 4 in A and with r % 8 in B puts the 8 rows' chunks in 8 different
// 16-byte bank groups, and a row's chunks stay in the row (a warp's cp.async of whole rows
// still writes 512 contiguous bytes).
__device__ __forceinline__ int a_at(int r, int c) {
  return (r * kChunksA + (c ^ ((r >> 1) & 3))) * kChunk;
}
__device__ __forceinline__ int b_at(int r, int c) {
  return (r * kChunksB + (c ^ (r & 7))) * kChunk;
}

// This thread's chunks of the tiles at p0 into one stage (as, bs). vec: cp.async, 16 bytes
// each, zero-filled outside the matrices (with k and n multiples of 8 a chunk is all in or
// all out); they land later, in the group the caller commits. Else through registers, one
// element at a time (load8), stored at once.
__device__ __forceinline__ void load_stage(const uint16_t* A, const uint16_t* B, uint16_t* as,
                                           uint16_t* bs, int m, int n, int k, int row0, int col0,
                                           int p0, bool vec) {
#pragma unroll
  for (int l = 0; l < kLoadsA; ++l) {
    const int f = threadIdx.x + l * kThreads, r = f / kChunksA, c = f % kChunksA;
    const int row = row0 + r, col = p0 + c * kChunk;
    const uint16_t* src = A + static_cast<int64_t>(row) * k;
    if (vec)
      cp_async16(&as[a_at(r, c)], row < m && col < k ? src + col : A, row < m && col < k ? 16 : 0);
    else
      *reinterpret_cast<uint4*>(&as[a_at(r, c)]) =
          load8(src + p0, row < m, c * kChunk, k - p0, false);
  }
#pragma unroll
  for (int l = 0; l < kLoadsB; ++l) {
    const int f = threadIdx.x + l * kThreads, r = f / kChunksB, c = f % kChunksB;
    const int row = p0 + r, col = col0 + c * kChunk;
    const uint16_t* src = B + static_cast<int64_t>(row) * n;
    if (vec)
      cp_async16(&bs[b_at(r, c)], row < k && col < n ? src + col : B, row < k && col < n ? 16 : 0);
    else
      *reinterpret_cast<uint4*>(&bs[b_at(r, c)]) =
          load8(src + col0, row < k, c * kChunk, n - col0, false);
  }
}

// The pipeline: stages 0 to 2 are filled before the loop; at tile t the block waits for
// tile t's copies (at most kStages - 2 groups still in flight), one barrier (tile t is in
// shared memory for every thread, and every warp is done with tile t - 1), then starts the
// copies of tile t + 3 into the stage tile t - 1 used, and multiplies tile t while they and
// those of tiles t + 1 and t + 2 are in flight. Per 16 of k a warp issues 4 ldmatrix.x4 (A),
// 4 ldmatrix.x4.trans (B) and 32 mma.sync, as in step 2 (swizzled addresses).
template <class T>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_mma_cp_async(const uint16_t* __restrict__ A, const uint16_t* __restrict__ B,
                      float* __restrict__ C, int m, int n, int k, float alpha, float beta,
                      bool vec) {
  extern __shared__ __align__(128) uint16_t shared[];  // stage s: A tile, then B tile
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN;
  const int warp = threadIdx.x / sw::kWarp, lane = threadIdx.x % sw::kWarp;
  const int warp_row = warp / kWarpsN * kWarpM, warp_col = warp % kWarpsN * kWarpN;
  const int lane_row = lane % 16, lane_chunk = lane / 16;  // this lane's ldmatrix row
  const int tiles = static_cast<int>(sw::ceil_div(k, kTileK));
  for (int s = 0; s < kStages - 1; ++s) {
    uint16_t* stage = shared + s * kStage;
    if (s < tiles) load_stage(A, B, stage, stage + kStageA, m, n, k, row0, col0, s * kTileK, vec);
    cp_async_commit();
  }
  float acc[kTilesM][kTilesN][4] = {};
  for (int t = 0; t < tiles; ++t) {
    cp_async_wait<kStages - 2>();
    __syncthreads();
    const int next = t + kStages - 1;
    uint16_t* refill = shared + next % kStages * kStage;
    if (next < tiles)
      load_stage(A, B, refill, refill + kStageA, m, n, k, row0, col0, next * kTileK, vec);
    cp_async_commit();
    const uint16_t* as = shared + t % kStages * kStage;
    const uint16_t* bs = as + kStageA;
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += kMmaK) {
      uint32_t a[kTilesM][4], b[kTilesN][2];
#pragma unroll
      for (int i = 0; i < kTilesM; ++i)
        ldmatrix_x4(a[i], &as[a_at(warp_row + i * kMmaM + lane_row, kk / kChunk + lane_chunk)]);
#pragma unroll
      for (int j = 0; j < kTilesN; j += 2) {
        uint32_t r[4];
        ldmatrix_x4_trans(r,
                          &bs[b_at(kk + lane_row, (warp_col + j * kMmaN) / kChunk + lane_chunk)]);
        // lab mma-fragments: begin
        b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
        // lab mma-fragments: end
      }
#pragma unroll
      for (int i = 0; i < kTilesM; ++i)
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) mma_16816<T>(acc[i][j], a[i], b[j]);
    }
  }
  // lab mma-fragments: begin
  const bool vec_c = n % 2 == 0;
#pragma unroll
  for (int i = 0; i < kTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kTilesN; ++j)
      store_tile(C, m, n, row0 + warp_row + i * kMmaM + lane / 4,
                 col0 + warp_col + j * kMmaN + 2 * (lane % 4), acc[i][j], alpha, beta, vec_c);
  // lab mma-fragments: end
}

// The kernel for the type, allowed its kSharedBytes of dynamic shared memory (past the
// 48 KiB a launch gets without asking) once.
using Kernel = void (*)(const uint16_t*, const uint16_t*, float*, int, int, int, float, float,
                        bool);
template <class T>
Kernel allowed() {
  static const Kernel kernel = [] {
    CUDA_CHECK(cudaFuncSetAttribute(gemm_mma_cp_async<T>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
    return gemm_mma_cp_async<T>;
  }();
  return kernel;
}

}  // namespace pipeline

void launch_mma_cp_async(const gm::Args& a) {
  using namespace pipeline;
  const Kernel kernel =
      a.type == gm::InputType::kBf16 ? allowed<__nv_bfloat16>() : allowed<__half>();
  kernel<<<tile_grid(a, kTileM, kTileN), kThreads, kSharedBytes>>>(
      a.a16, a.b16, a.c, a.m, a.n, a.k, a.alpha, a.beta, gm::vector_ok(a));
  CHECK_LAUNCH();
}

}  // namespace ch20
