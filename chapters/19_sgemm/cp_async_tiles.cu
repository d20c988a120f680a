// Chapter 19, step 8: the tiles copied by cp.async into a ring of four shared-memory stages.
#include <cstdint>

#include "common/check.h"
#include "common/cp_async.cuh"
#include "common/cuda_utils.cuh"
#include "sgemm.cuh"

namespace ch19 {
namespace {

// Step 7's warp tiles and lanes (sm80: 128 x 128 tiles, 8 warps of 32 x 64, 8 x 8 entries a
// lane as 2 x 2 blocks of 4 x 4), with one change to how the tiles arrive. Step 7 brings
// the next tile through registers: loads into registers before a tile's FMAs, stores into
// the other stage after them, so a load has one tile of FMAs to arrive and 8 registers a
// thread hold it. Here cp.async copies global memory straight into shared memory (no
// registers, no stores after the FMAs) into a ring of kStages stages: while tile t is
// multiplied, tiles t + 1 to t + 3 are in flight. The registers freed pay for a deeper tile
// (kTileK 16, step 7: 8), so half as many barriers per FMA.
//
// A copy moves 16 bytes as they are, so the A tile can no longer be transposed on its way
// (step 6's as[k][m]): it stays as A has it, a row of kTileK floats per row of C, and a lane
// reads 4 k of one of its rows as one float4. For 4 k a lane reads 2 x 4 float4s of A (its 8
// rows) and 4 x 2 of B: 16 reads per 256 FMAs, as in step 7. A warp reads 4 rows at once,
// 4 apart; a row is 64 bytes, so rows 4 apart start in the same banks: the 16-byte pieces of
// a row are stored in an order XOR-ed with (row / 4) % 4 (a swizzle), and the 4 rows' pieces
// fall in 4 different groups of banks. B is stored as it is (step 7's reads of B are
// conflict-free already).
// kVec = false (k or n not a multiple of 4: a 16-byte piece would be misaligned) copies the
// same floats 4 bytes at a time; the tiles, the reads and the arithmetic stay the same.
namespace ca {
constexpr int kTileM = 128, kTileN = 128, kTileK = 16, kStages = 4;
constexpr int kWarpM = 32, kWarpN = 64, kIterM = 2, kIterN = 2;
constexpr int kWarpsAcross = kTileN / kWarpN;
constexpr int kThreads = (kTileM / kWarpM) * kWarpsAcross * sw::kWarp;
constexpr int kSubM = kWarpM / kIterM, kSubN = kWarpN / kIterN;  // a sub-tile
constexpr int kLanesN = kSubN / 4;                               // 4 x 4 entries per lane
constexpr int kPiecesA = kTileK / 4, kPiecesB = kTileN / 4;      // 16-byte pieces per row
constexpr int kCopiesA = kTileM * kPiecesA / kThreads;           // pieces per thread
constexpr int kCopiesB = kTileK * kPiecesB / kThreads;
constexpr int kStageFloats = kTileM * kTileK + kTileK * kTileN;
constexpr int kSharedBytes = kStages * kStageFloats * static_cast<int>(sizeof(float));
static_assert((kSubM / 4) * kLanesN == sw::kWarp, "a warp's lanes cover its sub-tile");
static_assert(kPiecesA == 4, "the swizzle permutes a row's 4 pieces");
static_assert(kCopiesA * kThreads == kTileM * kPiecesA && kCopiesB * kThreads == kTileK * kPiecesB,
              "whole pieces per thread");
}  // namespace ca

// Where piece q (floats 4q to 4q + 3) of row `row` of the A tile lives in its stage.
__device__ __forceinline__ int a_at(int row, int q) {
  return row * ca::kTileK + (q ^ (row / 4 % ca::kPiecesA)) * 4;
}

// Four floats of a row, columns c to c + 3 of `cols`, from row_start into shared memory at
// `to`; zeros outside the matrix (row_in false, or a column past cols), where `any`, a valid
// address, stands in as the source of the copy that reads nothing.
template <bool kVec>
__device__ __forceinline__ void copy4(float* to, const float* row_start, bool row_in, int c,
                                      int cols, const float* any) {
  if constexpr (kVec) {
    const bool in = row_in && c < cols;
    sw::cp_async<16>(to, in ? row_start + c : any, in ? 16 : 0);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const bool in = row_in && c + j < cols;
      sw::cp_async<4>(to + j, in ? row_start + c + j : any, in ? 4 : 0);
    }
  }
}

// This thread's copies of the tiles of A and B at p0 into `stage` (the A tile, then B).
template <bool kVec>
__device__ __forceinline__ void copy_tiles(float* stage, const float* A, const float* B, int m,
                                           int n, int k, int row0, int col0, int p0) {
  using namespace ca;
  float* bs = stage + kTileM * kTileK;
#pragma unroll
  for (int l = 0; l < kCopiesA; ++l) {
    const int f = threadIdx.x + l * kThreads, row = f / kPiecesA, q = f % kPiecesA;
    copy4<kVec>(stage + a_at(row, q), A + static_cast<int64_t>(row0 + row) * k, row0 + row < m,
                p0 + q * 4, k, A);
  }
#pragma unroll
  for (int l = 0; l < kCopiesB; ++l) {
    const int f = threadIdx.x + l * kThreads, p = f / kPiecesB, q = f % kPiecesB;
    copy4<kVec>(bs + p * kTileN + q * 4, B + static_cast<int64_t>(p0 + p) * n + col0, p0 + p < k,
                q * 4, n - col0, B);
  }
}

__device__ __forceinline__ float element(const float4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

template <bool kVec>
__global__ void __launch_bounds__(ca::kThreads, 2)
    sgemm_cp_async(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                   int m, int n, int k, float alpha, float beta) {
  using namespace ca;
  extern __shared__ __align__(16) float shared[];  // kStages stages: A tile, then B tile
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN;
  const int warp = threadIdx.x / sw::kWarp, lane = threadIdx.x % sw::kWarp;
  const int warp_row = warp / kWarpsAcross * kWarpM, warp_col = warp % kWarpsAcross * kWarpN;
  const int lane_row = lane / kLanesN * 4, lane_col = lane % kLanesN * 4;
  const int tiles = sw::ceil_div(k, kTileK);
  float acc[kIterM][kIterN][4][4] = {};
  // The first kStages - 1 tiles in flight, a group each (empty past the last tile, so that
  // the count of groups, and the wait below, are the same for every k).
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles)
      copy_tiles<kVec>(shared + s * kStageFloats, A, B, m, n, k, row0, col0, s * kTileK);
    sw::cp_async_commit();
  }
  for (int t = 0; t < tiles; ++t) {
    sw::cp_async_wait<kStages - 2>();  // this thread's copies of tile t have landed
    __syncthreads();  // every thread's; and every warp is done with tile t - 1's stage
    const int next = t + kStages - 1;  // into tile t - 1's stage
    if (next < tiles)
      copy_tiles<kVec>(shared + next % kStages * kStageFloats, A, B, m, n, k, row0, col0,
                       next * kTileK);
    sw::cp_async_commit();
    const float* as = shared + t % kStages * kStageFloats;
    const float* bs = as + kTileM * kTileK;
#pragma unroll
    for (int q = 0; q < kPiecesA; ++q) {  // 4 k at a time: one piece of each of 8 rows of A
      float4 a[kIterM][4];
#pragma unroll
      for (int i = 0; i < kIterM; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          a[i][r] =
              *reinterpret_cast<const float4*>(&as[a_at(warp_row + i * kSubM + lane_row + r, q)]);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        float4 b[kIterN];
#pragma unroll
        for (int j = 0; j < kIterN; ++j)
          b[j] = *reinterpret_cast<const float4*>(
              &bs[(q * 4 + kk) * kTileN + warp_col + j * kSubN + lane_col]);
#pragma unroll
        for (int i = 0; i < kIterM; ++i)
#pragma unroll
          for (int j = 0; j < kIterN; ++j) {
            const float bc[4] = {b[j].x, b[j].y, b[j].z, b[j].w};
#pragma unroll
            for (int r = 0; r < 4; ++r)
#pragma unroll
              for (int c = 0; c < 4; ++c) acc[i][j][r][c] += element(a[i][r], kk) * bc[c];
          }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kIterM; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = row0 + warp_row + i * kSubM + lane_row + r;
      if (row >= m) continue;
      float* c_row = C + static_cast<int64_t>(row) * n;
#pragma unroll
      for (int j = 0; j < kIterN; ++j) {
        const int col = col0 + warp_col + j * kSubN + lane_col;
        const float* x = acc[i][j][r];
        store_row4<kVec>(c_row + col, col, n, make_float4(x[0], x[1], x[2], x[3]), alpha, beta);
      }
    }
}

// The kernel (16-byte or 4-byte copies), its 64 KiB of shared memory allowed once.
template <bool kVec>
auto kernel_of() {
  static const auto kernel = [] {
    CUDA_CHECK(cudaFuncSetAttribute(sgemm_cp_async<kVec>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, ca::kSharedBytes));
    return sgemm_cp_async<kVec>;
  }();
  return kernel;
}

}  // namespace

void launch_cp_async(const gm::Args& a) {
  const auto kernel = gm::vector_ok(a) ? kernel_of<true>() : kernel_of<false>();
  kernel<<<tile_grid(a, ca::kTileM, ca::kTileN), ca::kThreads, ca::kSharedBytes>>>(
      a.a, a.b, a.c, a.m, a.n, a.k, a.alpha, a.beta);
  CHECK_LAUNCH();
}

}  // namespace ch19
