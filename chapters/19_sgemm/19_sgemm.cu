// Chapter 19: SGEMM on CUDA cores, C = alpha * A * B + beta * C in fp32, up to cuBLAS.
//
// What changed:  every chapter before this one is bound by memory bandwidth; a matrix
//                product does 2 m n k flops on 4 (m k + k n + m n) bytes, so a kernel that
//                reuses what it loads is bound by the FMA units instead. The rows report
//                TFLOP/s (2 m n k per call), the SM clock and the board power. Each step is
//                one change, to more reuse of each loaded value:
//   naive              one thread per entry of C, neighbouring threads on neighbouring ROWS:
//                      a warp reads 32 rows of A (32 sectors) and writes C 32 rows apart.
//   coalesced          neighbouring threads on neighbouring COLUMNS: a warp reads one A
//                      value (a broadcast) and 32 consecutive B and C values.
//   shared-tiles       a block stages 32 x 32 tiles of A and B in shared memory: each value
//                      loaded from global memory is used 32 times, not once.
//   register-1d        each thread computes 8 entries of a column: each B value read from
//                      shared memory is used 8 times from a register (register_blocking.cu).
//   register-2d        8 x 8 entries per thread: 16 shared loads feed 64 FMAs.
//   vector-transposed  float4 loads from global and shared memory; the A tile stored
//                      transposed so a thread's 4 rows are one float4; no bank conflicts
//                      (vector_tiles.cu).
//   warp-tiled         each warp owns a compact tile of C; two shared-memory stages, so the
//                      next tile loads while this one is multiplied; tiles per GPU from
//                      --config (warp_tiles.cu).
//   cp-async           the tiles copied by cp.async (no registers on the way) into a ring of
//                      four stages, three tiles in flight; the A tile swizzled, not
//                      transposed; a tile 16 deep (cp_async_tiles.cu). Compute capability 8.0.
//                cuBLAS's cublasSgemm (default math mode: no TF32) is the vendor row.
// Checked:       every step at awkward shapes (1x1x1, 3x3x431, primes, one row or column,
//                partial tiles on every side) against a double reference within the bound
//                gamma_{k+2} sum|a||b| (common/problems/gemm_reference.h); C poisoned before
//                every run (beta = 0) and a guard after it that no step may write.
// Bottleneck:    the naive steps: memory (L1/L2) traffic; the tiled ones: shared-memory
//                loads per FMA; the last ones: issue slots (an FMA per cycle per scheduler,
//                and every other instruction takes one of those cycles).
// Steps:         naive, coalesced, shared-tiles, register-1d, register-2d, vector-transposed,
//                warp-tiled, cp-async
// Run:           build/chapters/19_sgemm [--size 4096 | --m M --n N --k K]
//                [--alpha A --beta B] [--variant warp-tiled] [--config sm80|sm90|sm75] [--json]
//                build/chapters/19_sgemm --verify-only [--large | --m M --n N --k K]
#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/gemm.h"
#include "sgemm.cuh"

namespace {

namespace gm = sw::gemm;

constexpr int kSide = 32;  // steps 1 to 3: blocks of 32 x 32 threads, one entry of C each

// --- step 1: one thread per entry, threads along the rows ---------------------------------

// Thread (x, y) computes C[row][col]; x, the index that neighbours in a warp share, walks
// down the rows. Each of a warp's 32 loads of A falls in another row (32 sectors per load);
// its loads of B are one address (a broadcast); its stores to C are n floats apart.
__global__ void sgemm_naive(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, int m, int n, int k, float alpha, float beta) {
  const int row = blockIdx.x * kSide + threadIdx.x;
  const int col = blockIdx.y * kSide + threadIdx.y;
  if (row >= m || col >= n) return;
  const float* a = A + static_cast<int64_t>(row) * k;
  float acc = 0.0f;
  for (int p = 0; p < k; ++p) acc += a[p] * B[static_cast<int64_t>(p) * n + col];
  ch19::store_c(C + static_cast<int64_t>(row) * n + col, acc, alpha, beta);
}
void launch_naive(const gm::Args& a) {
  const dim3 grid(sw::ceil_div(a.m, kSide), sw::ceil_div(a.n, kSide)), block(kSide, kSide);
  sgemm_naive<<<grid, block>>>(a.a, a.b, a.c, a.m, a.n, a.k, a.alpha, a.beta);
  CHECK_LAUNCH();
}

// --- step 2: the same, threads along the columns -------------------------------------------

// The one change: x walks along the columns. A warp now reads one value of A (a
// broadcast), 32 consecutive values of B (one 128-byte line) and writes 32 consecutive
// entries of C.
__global__ void sgemm_coalesced(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, int m, int n, int k, float alpha,
                                float beta) {
  const int col = blockIdx.x * kSide + threadIdx.x;
  const int row = blockIdx.y * kSide + threadIdx.y;
  if (row >= m || col >= n) return;
  const float* a = A + static_cast<int64_t>(row) * k;
  float acc = 0.0f;
  for (int p = 0; p < k; ++p) acc += a[p] * B[static_cast<int64_t>(p) * n + col];
  ch19::store_c(C + static_cast<int64_t>(row) * n + col, acc, alpha, beta);
}
void launch_coalesced(const gm::Args& a) {
  const dim3 block(kSide, kSide);
  sgemm_coalesced<<<ch19::tile_grid(a, kSide, kSide), block>>>(a.a, a.b, a.c, a.m, a.n, a.k,
                                                               a.alpha, a.beta);
  CHECK_LAUNCH();
}

// --- step 3: 32 x 32 tiles of A and B in shared memory --------------------------------------

// The block walks along k one 32-wide tile at a time: each thread loads one value of the A
// tile and one of the B tile (zero outside the matrices, so a partial tile adds nothing),
// then every thread reads 32 of each from shared memory. Every thread of the block takes
// part in the loads and the barriers, so a thread past the edge of C only skips the store.
__global__ void sgemm_shared_tiles(const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ C, int m, int n, int k, float alpha,
                                   float beta) {
  __shared__ float as[kSide][kSide], bs[kSide][kSide];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kSide + ty, col = blockIdx.x * kSide + tx;
  float acc = 0.0f;
  // lab smem-tiles: begin
  for (int p0 = 0; p0 < k; p0 += kSide) {
    as[ty][tx] = row < m && p0 + tx < k ? A[static_cast<int64_t>(row) * k + p0 + tx] : 0.0f;
    bs[ty][tx] = p0 + ty < k && col < n ? B[static_cast<int64_t>(p0 + ty) * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kSide; ++p) acc += as[ty][p] * bs[p][tx];  // as: broadcast; bs: a row
    __syncthreads();  // before the next tile overwrites these
  }
  // lab smem-tiles: end
  if (row < m && col < n) ch19::store_c(C + static_cast<int64_t>(row) * n + col, acc, alpha, beta);
}
void launch_shared_tiles(const gm::Args& a) {
  const dim3 block(kSide, kSide);
  sgemm_shared_tiles<<<ch19::tile_grid(a, kSide, kSide), block>>>(a.a, a.b, a.c, a.m, a.n, a.k,
                                                                  a.alpha, a.beta);
  CHECK_LAUNCH();
}

// The step table, in the order the chapter teaches them. kVector: float4 loads where the
// rows are whole float4s, else the same kernel with scalar loads (the row says vec=4 or 1);
// kConfigurable: tiles from --config.
const std::vector<gm::Step> kSteps = {
    {"naive", launch_naive},
    {"coalesced", launch_coalesced},
    {"shared-tiles", launch_shared_tiles},
    {"register-1d", ch19::launch_register_1d},
    {"register-2d", ch19::launch_register_2d},
    {"vector-transposed", ch19::launch_vector_transposed, {}, "step", gm::kVector},
    {"warp-tiled", ch19::launch_warp_tiled, {}, "step", gm::kVector | gm::kConfigurable},
    {"cp-async", ch19::launch_cp_async, {}, "step", gm::kVector | gm::kNeedsSm80},
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<gm::Step> program{
      "19_sgemm",
      "SGEMM on CUDA cores (fp32): from a thread per entry to warp tiles, beside cuBLAS.", "19",
      kSteps};
  return sw::bench::run(argc, argv, program, gm::Problem{ch19::kWarpTileConfigs});
}
