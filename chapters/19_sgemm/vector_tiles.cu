// Chapter 19, step 6: float4 loads, a transposed A tile, no bank conflicts.
#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "sgemm.cuh"

namespace ch19 {
namespace {

// The tile of step 5 (128 x 128 x 8, 256 threads, 8 x 8 entries each), three changes to
// how it moves data, each for fewer instructions per FMA:
//   - global loads of 4 floats at once (float4): one load instruction, not four;
//   - the A tile stored transposed, as[k][m]: a thread's 4 rows at one k are 4 consecutive
//     floats, one float4 read from shared memory (step 5: 8 scalar reads);
//   - a thread's 8 x 8 entries are 2 x 2 blocks of 4 x 4, the halves 64 rows and 64 columns
//     apart: 8 threads that read B at once read 8 consecutive float4s, 128 bytes in 32
//     banks. (Step 5's 8 consecutive columns per thread put threads 0, 4, 8 and 12 in the
//     same banks: a 4-way conflict on every read of B.)
// The stores to shared memory are conflict-free too: 32 neighbouring threads load the
// float4s of 32 neighbouring rows of A at the same k, and write them to 32 consecutive
// floats of as[k]; they load 32 consecutive float4s of one row of B and write them as
// they are.
// kVec = false (a row of A or B is not a whole number of float4s: k or n not a multiple of
// 4, so a float4 would be misaligned) loads the same values one float at a time; the
// tiles, the reads of shared memory and the arithmetic stay the same.
namespace v {
constexpr int kTileM = 128, kTileN = 128, kTileK = 8;
constexpr int kThreads = 256;
constexpr int kThreadsAcross = 16;  // a 16 x 16 grid of threads
constexpr int kHalf = 64;           // the second 4 x 4 block starts 64 rows (columns) later
static_assert(kTileM * kTileK / 4 == kThreads && kTileK * kTileN / 4 == kThreads,
              "one float4 of each tile per thread");
}  // namespace v

template <bool kVec>
__global__ void __launch_bounds__(v::kThreads)
    sgemm_vector_transposed(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, int m, int n, int k, float alpha, float beta) {
  using namespace v;
  __shared__ __align__(16) float as[kTileK][kTileM];  // transposed: as[p][row]
  __shared__ __align__(16) float bs[kTileK][kTileN];
  const int t = threadIdx.x;
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN;
  const int thread_row = t / kThreadsAcross, thread_col = t % kThreadsAcross;
  const int a_row = t % kTileM, a_k = t / kTileM * 4;  // a warp: 32 rows, one k quad
  const int b_row = t / (kTileN / 4), b_col = t % (kTileN / 4) * 4;
  const float* a_start = A + static_cast<int64_t>(row0 + a_row) * k;
  float acc[2][2][4][4] = {};  // [row half][column half][row][column]
  for (int p0 = 0; p0 < k; p0 += kTileK) {
    // lab vector-transposed: begin
    const float4 a4 = load4<kVec>(a_start, row0 + a_row < m, p0 + a_k, k);
    as[a_k + 0][a_row] = a4.x;
    as[a_k + 1][a_row] = a4.y;
    as[a_k + 2][a_row] = a4.z;
    as[a_k + 3][a_row] = a4.w;
    const float* b_start = B + static_cast<int64_t>(p0 + b_row) * n + col0;
    *reinterpret_cast<float4*>(&bs[b_row][b_col]) =
        load4<kVec>(b_start, p0 + b_row < k, b_col, n - col0);
    __syncthreads();
    // lab vector-transposed: end
#pragma unroll
    for (int p = 0; p < kTileK; ++p) {
      float4 a[2], b[2];
      // lab vector-transposed: begin
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        a[h] = *reinterpret_cast<const float4*>(&as[p][h * kHalf + thread_row * 4]);
        b[h] = *reinterpret_cast<const float4*>(&bs[p][h * kHalf + thread_col * 4]);
      }
#pragma unroll
      for (int hm = 0; hm < 2; ++hm)
#pragma unroll
        for (int hn = 0; hn < 2; ++hn) {
          const float ar[4] = {a[hm].x, a[hm].y, a[hm].z, a[hm].w};
          const float bc[4] = {b[hn].x, b[hn].y, b[hn].z, b[hn].w};
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[hm][hn][i][j] += ar[i] * bc[j];
        }
      // lab vector-transposed: end
    }
    __syncthreads();
  }
#pragma unroll
  for (int hm = 0; hm < 2; ++hm)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = row0 + hm * kHalf + thread_row * 4 + i;
      if (row >= m) continue;
      float* c_row = C + static_cast<int64_t>(row) * n;
#pragma unroll
      for (int hn = 0; hn < 2; ++hn) {
        const int col = col0 + hn * kHalf + thread_col * 4;
        const float* x = acc[hm][hn][i];
        store_row4<kVec>(c_row + col, col, n, make_float4(x[0], x[1], x[2], x[3]), alpha, beta);
      }
    }
}

}  // namespace

void launch_vector_transposed(const gm::Args& a) {
  const auto kernel =
      gm::vector_ok(a) ? sgemm_vector_transposed<true> : sgemm_vector_transposed<false>;
  kernel<<<tile_grid(a, v::kTileM, v::kTileN), v::kThreads>>>(a.a, a.b, a.c, a.m, a.n, a.k, a.alpha,
                                                              a.beta);
  CHECK_LAUNCH();
}

}  // namespace ch19
