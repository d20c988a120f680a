// Chapter 20, step 2: mma.sync and ldmatrix, on step 1's tiles.
#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "tc.cuh"

namespace ch20 {
namespace {

// The one change from step 1: the warp's fragments are registers whose layout the PTX ISA
// documents (tc.cuh, mma_16816), filled by ldmatrix from the same padded shared tiles. Per 16
// of k, a warp issues 4 ldmatrix.x4 for A (one 16 x 16 tile each: lane l gives the address of
// row l % 16, columns 8 (l / 16) on), 2 ldmatrix.x4.trans for B (a 16 x 16 tile of B each, two
// of mma's 16 x 8 operands: lane l gives row l % 16 of k, columns 8 (l / 16) on), and 16
// mma.sync. Its accumulators are registers in a known layout too, so the epilogue writes C
// straight from them (store_tile), without the round trip through shared memory.
template <class T>
__global__ void __launch_bounds__(padded::kThreads)
    gemm_mma_sync(const uint16_t* __restrict__ A, const uint16_t* __restrict__ B,
                  float* __restrict__ C, int m, int n, int k, float alpha, float beta, bool vec) {
  using namespace padded;
  constexpr int kTilesM = kWarpM / kMmaM, kTilesN = kWarpN / kMmaN;  // a warp's 4 x 4 of 16 x 8
  __shared__ __align__(128) uint16_t as[kTileM * kLdA];
  __shared__ __align__(128) uint16_t bs[kTileK * kLdB];
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN;
  const int warp = threadIdx.x / sw::kWarp, lane = threadIdx.x % sw::kWarp;
  const int warp_row = warp / kWarpsN * kWarpM, warp_col = warp % kWarpsN * kWarpN;
  const int lane_row = lane % 16, lane_col = lane / 16 * kChunk;  // this lane's ldmatrix row
  float acc[kTilesM][kTilesN][4] = {};
  for (int p0 = 0; p0 < k; p0 += kTileK) {
    load_padded_tiles(A, B, as, bs, m, n, k, row0, col0, p0, vec);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += kMmaK) {
      uint32_t a[kTilesM][4], b[kTilesN][2];
#pragma unroll
      for (int i = 0; i < kTilesM; ++i)
        ldmatrix_x4(a[i], &as[(warp_row + i * kMmaM + lane_row) * kLdA + kk + lane_col]);
#pragma unroll
      for (int j = 0; j < kTilesN; j += 2) {  // B: rows kk.., columns of tiles j and j + 1
        uint32_t r[4];
        ldmatrix_x4_trans(r, &bs[(kk + lane_row) * kLdB + warp_col + j * kMmaN + lane_col]);
        // lab mma-fragments: begin
        b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
        // lab mma-fragments: end
      }
#pragma unroll
      for (int i = 0; i < kTilesM; ++i)
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) mma_16816<T>(acc[i][j], a[i], b[j]);
    }
    __syncthreads();  // before the next tiles overwrite these
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

}  // namespace

void launch_mma_sync(const gm::Args& a) {
  const auto kernel =
      a.type == gm::InputType::kBf16 ? gemm_mma_sync<__nv_bfloat16> : gemm_mma_sync<__half>;
  kernel<<<tile_grid(a, padded::kTileM, padded::kTileN), padded::kThreads>>>(
      a.a16, a.b16, a.c, a.m, a.n, a.k, a.alpha, a.beta, gm::vector_ok(a));
  CHECK_LAUNCH();
}

}  // namespace ch20
