// Chapter 19, steps 4 and 5: register blocking. A thread computes several entries of C,
// so a value it reads from shared memory into a register feeds several FMAs.
#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "sgemm.cuh"

namespace ch19 {
namespace {

// --- step 4: 8 entries of one column per thread ------------------------------------------

// A block computes a 64 x 64 tile of C with 512 threads, each thread 8 entries of one
// column: rows thread_row * 8 to + 7. Per k, the thread reads one B value into a register
// and uses it 8 times; its 8 A values are the same for the whole warp (a broadcast).
// Per tile along k (8 wide), each thread loads one A value and one B value, zero outside
// the matrices.
namespace r1 {
constexpr int kTileM = 64, kTileN = 64, kTileK = 8;
constexpr int kRows = 8;                           // entries per thread, down a column
constexpr int kThreads = kTileM * kTileN / kRows;  // 512
static_assert(kTileM * kTileK == kThreads && kTileK * kTileN == kThreads, "one load each");
}  // namespace r1

__global__ void __launch_bounds__(r1::kThreads)
    sgemm_register_1d(const float* __restrict__ A, const float* __restrict__ B,
                      float* __restrict__ C, int m, int n, int k, float alpha, float beta) {
  using namespace r1;
  __shared__ float as[kTileM][kTileK], bs[kTileK][kTileN];
  const int t = threadIdx.x;
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN;
  const int thread_col = t % kTileN, thread_row = t / kTileN;  // a warp: 32 columns, one row
  const int a_row = t / kTileK, a_col = t % kTileK, b_row = t / kTileN, b_col = t % kTileN;
  float acc[kRows] = {};
  for (int p0 = 0; p0 < k; p0 += kTileK) {
    const int ar = row0 + a_row, ac = p0 + a_col, br = p0 + b_row, bc = col0 + b_col;
    as[a_row][a_col] = ar < m && ac < k ? A[static_cast<int64_t>(ar) * k + ac] : 0.0f;
    bs[b_row][b_col] = br < k && bc < n ? B[static_cast<int64_t>(br) * n + bc] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kTileK; ++p) {
      const float b = bs[p][thread_col];
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] += as[thread_row * kRows + r][p] * b;
    }
    __syncthreads();
  }
  const int col = col0 + thread_col;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int row = row0 + thread_row * kRows + r;
    if (row < m && col < n) store_c(C + static_cast<int64_t>(row) * n + col, acc[r], alpha, beta);
  }
}

}  // namespace

void launch_register_1d(const gm::Args& a) {
  sgemm_register_1d<<<tile_grid(a, r1::kTileM, r1::kTileN), r1::kThreads>>>(a.a, a.b, a.c, a.m, a.n,
                                                                            a.k, a.alpha, a.beta);
  CHECK_LAUNCH();
}

namespace {

// --- step 5: 8 x 8 entries per thread ---------------------------------------------------------

// A block computes a 128 x 128 tile with 256 threads in a 16 x 16 grid, each an 8 x 8
// block of entries. Per k, the thread reads 8 A values and 8 B values into registers and
// does 64 FMAs with them: 16 shared loads for 64 FMAs (step 4: 9 for 8). The loads of a
// tile: 1024 A values and 1024 B values, 4 each per thread.
namespace r2 {
constexpr int kTileM = 128, kTileN = 128, kTileK = 8;
constexpr int kRows = 8, kCols = 8;                          // entries per thread
constexpr int kThreads = kTileM * kTileN / (kRows * kCols);  // 256
constexpr int kThreadsAcross = kTileN / kCols;               // 16
constexpr int kLoads = kTileM * kTileK / kThreads;           // values of each tile per thread: 4
static_assert(kTileM * kTileK == kTileK * kTileN && kLoads * kThreads == kTileM * kTileK, "");
}  // namespace r2

__global__ void __launch_bounds__(r2::kThreads)
    sgemm_register_2d(const float* __restrict__ A, const float* __restrict__ B,
                      float* __restrict__ C, int m, int n, int k, float alpha, float beta) {
  using namespace r2;
  __shared__ float as[kTileM][kTileK], bs[kTileK][kTileN];
  const int t = threadIdx.x;
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN;
  const int thread_row = t / kThreadsAcross, thread_col = t % kThreadsAcross;
  float acc[kRows][kCols] = {};
  float a_reg[kRows], b_reg[kCols];
  for (int p0 = 0; p0 < k; p0 += kTileK) {
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
      const int r = (t + l * kThreads) / kTileK, c = (t + l * kThreads) % kTileK;
      as[r][c] = row0 + r < m && p0 + c < k ? A[static_cast<int64_t>(row0 + r) * k + p0 + c] : 0.0f;
    }
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
      const int r = (t + l * kThreads) / kTileN, c = (t + l * kThreads) % kTileN;
      bs[r][c] = p0 + r < k && col0 + c < n ? B[static_cast<int64_t>(p0 + r) * n + col0 + c] : 0.0f;
    }
    __syncthreads();
    // lab register-2d: begin
#pragma unroll
    for (int p = 0; p < kTileK; ++p) {
#pragma unroll
      for (int i = 0; i < kRows; ++i) a_reg[i] = as[thread_row * kRows + i][p];
#pragma unroll
      for (int j = 0; j < kCols; ++j) b_reg[j] = bs[p][thread_col * kCols + j];
#pragma unroll
      for (int i = 0; i < kRows; ++i)
#pragma unroll
        for (int j = 0; j < kCols; ++j) acc[i][j] += a_reg[i] * b_reg[j];
    }
    // lab register-2d: end
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int row = row0 + thread_row * kRows + i;
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
      const int col = col0 + thread_col * kCols + j;
      if (row < m && col < n)
        store_c(C + static_cast<int64_t>(row) * n + col, acc[i][j], alpha, beta);
    }
  }
}

}  // namespace

void launch_register_2d(const gm::Args& a) {
  sgemm_register_2d<<<tile_grid(a, r2::kTileM, r2::kTileN), r2::kThreads>>>(a.a, a.b, a.c, a.m, a.n,
                                                                            a.k, a.alpha, a.beta);
  CHECK_LAUNCH();
}

}  // namespace ch19
