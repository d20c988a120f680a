// Chapter 20: GEMM on tensor cores without Hopper's instructions: bf16 or fp16 in, fp32 out.
//
// What changed:  chapter 19's product, C = alpha * A * B + beta * C with C in fp32, now with A
//                and B in a 16-bit type (--type bf16, the default, or fp16), multiplied by
//                the tensor cores: a warp-wide instruction multiplies a 16 x 16 tile of A by
//                a 16 x 8 (or 16 x 16) tile of B and adds it into fp32 accumulators, 4096
//                flops in one instruction where an FMA does 2. A is row-major, and so is B
//                (k x n, as in chapter 19): ldmatrix's .trans form reads B's row-major tile
//                as the column-major operand the instruction wants, so the problem does not
//                change. The steps:
//   wmma           the CUDA C++ API (nvcuda::wmma): 16 x 16 x 16 fragments loaded from a
//                  shared-memory tile (128 x 128 x 32, padded rows), the tile loaded through
//                  registers.
//   mma-sync       the same tiles, with the instruction itself (inline PTX mma.sync
//                  m16n8k16) and its operands loaded by ldmatrix, in the layout the PTX ISA
//                  documents (mma_sync.cu).
//   mma-cp-async   the pipeline: four shared-memory stages filled by cp.async (global to
//                  shared memory, no registers, in flight while another stage is
//                  multiplied), rows XOR-swizzled instead of padded, and a 128 x 256 tile
//                  with 64 x 64 per warp, fewer shared bytes per flop (mma_pipeline.cu).
//   mma-ahead      the warp's operands one step of k ahead: two sets of fragments, the next
//                  loaded while the mma.syncs of this one run, across the tiles' barriers
//                  too; --config k64-s3 (the default: k 64 at a time, three stages) or k32-s4
//                  (step 3's tiles: the operands ahead alone).
//   mma-hoisted    step 4's loop with its addresses computed once: where each thread's
//                  copies come from and go, where each lane's ldmatrix rows are, moved by
//                  constants per tile (mma_hoisted.cu).
//                mma-roof (role ceiling, mma_roof.cu) times mma.sync alone, on registers:
//                what this instruction can do on the GPU in the machine, the chapter's
//                denominator. cuBLAS's cublasGemmEx (fp32 accumulation) is the vendor row.
// Checked:       every step at chapter 19's awkward shapes, and at sides divisible by 8 with
//                partial tiles, against a double reference of the rounded inputs within the
//                bound gamma'_{3k+2} sum|a||b|, u' = 2^-23 (common/problems/gemm_reference.h:
//                tensor cores truncate); C poisoned before every run, a guard after it.
// Bottleneck:    wmma and mma-sync: the loads through registers and the barriers, with one
//                tile in shared memory at a time; mma-cp-async to mma-hoisted: keeping the
//                tensor pipe fed from two warps per scheduler (the instructions besides
//                mma.sync, which step 5 cuts), and L2's bandwidth. Hopper's full tensor rate
//                needs its own instruction, wgmma, which this chapter leaves out: the roof is
//                mma.sync's.
// Steps:         wmma, mma-sync, mma-cp-async, mma-ahead, mma-hoisted
// Run:           build/chapters/20_tensor_cores [--size 4096 | --m M --n N --k K]
//                [--type bf16|fp16] [--alpha A --beta B] [--variant mma-cp-async] [--json]
//                build/chapters/20_tensor_cores --verify-only [--large | --m M --n N --k K]
#include <mma.h>

#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/gemm.h"
#include "tc.cuh"

namespace {

namespace gm = sw::gemm;
namespace padded = ch20::padded;

// --- step 1: wmma, 16 x 16 x 16 fragments from a shared tile ----------------------------------

// Each warp owns a 64 x 32 tile of C: 4 x 2 accumulator fragments of 16 x 16 floats. Per 32 of
// k, the block loads the A and B tiles into shared memory (ch20::load_padded_tiles), and each
// warp, per 16 of k, loads 4 fragments of A and 2 of B (load_matrix_sync: the layout inside a
// fragment is the compiler's) and does 8 mma_sync. The epilogue goes through shared memory: a
// fragment's layout is opaque, so each warp stores one fragment at a time to its own 16 x 16
// floats there, and its lanes write the entries inside C (guarded) with alpha and beta.
template <class T>
__global__ void __launch_bounds__(padded::kThreads)
    gemm_wmma(const uint16_t* __restrict__ A, const uint16_t* __restrict__ B, float* __restrict__ C,
              int m, int n, int k, float alpha, float beta, bool vec) {
#if CH20_SM80
  using namespace padded;
  namespace wmma = nvcuda::wmma;
  constexpr int kFrag = 16;  // wmma's fragments: 16 x 16 x 16
  constexpr int kFragsM = kWarpM / kFrag, kFragsN = kWarpN / kFrag;
  __shared__ __align__(128) uint16_t as[kTileM * kLdA];
  __shared__ __align__(128) uint16_t bs[kTileK * kLdB];
  __shared__ __align__(128) float staged[kThreads / sw::kWarp][kFrag * kFrag];
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN;
  const int warp = threadIdx.x / sw::kWarp, lane = threadIdx.x % sw::kWarp;
  const int warp_row = warp / kWarpsN * kWarpM, warp_col = warp % kWarpsN * kWarpN;
  wmma::fragment<wmma::accumulator, kFrag, kFrag, kFrag, float> acc[kFragsM][kFragsN];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  for (int p0 = 0; p0 < k; p0 += kTileK) {
    ch20::load_padded_tiles(A, B, as, bs, m, n, k, row0, col0, p0, vec);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += kFrag) {
      wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, T, wmma::row_major> a[kFragsM];
      wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, T, wmma::row_major> b[kFragsN];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
        wmma::load_matrix_sync(
            a[i], reinterpret_cast<const T*>(&as[(warp_row + i * kFrag) * kLdA + kk]), kLdA);
#pragma unroll
      for (int j = 0; j < kFragsN; ++j)
        wmma::load_matrix_sync(
            b[j], reinterpret_cast<const T*>(&bs[kk * kLdB + warp_col + j * kFrag]), kLdB);
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // before the next tiles overwrite these
  }
  float* mine = staged[warp];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      wmma::store_matrix_sync(mine, acc[i][j], kFrag, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < kFrag * kFrag; e += sw::kWarp) {
        const int row = row0 + warp_row + i * kFrag + e / kFrag;
        const int col = col0 + warp_col + j * kFrag + e % kFrag;
        if (row < m && col < n)
          ch20::store_c(C + static_cast<int64_t>(row) * n + col, mine[e], alpha, beta);
      }
      __syncwarp();  // before the next fragment overwrites `mine`
    }
#endif
}
void launch_wmma(const gm::Args& a) {
  const auto kernel = a.type == gm::InputType::kBf16 ? gemm_wmma<__nv_bfloat16> : gemm_wmma<__half>;
  kernel<<<ch20::tile_grid(a, padded::kTileM, padded::kTileN), padded::kThreads>>>(
      a.a16, a.b16, a.c, a.m, a.n, a.k, a.alpha, a.beta, gm::vector_ok(a));
  CHECK_LAUNCH();
}

// The step table, in the order the chapter teaches them. Every step: 16-byte loads where the
// rows are whole 16-byte chunks (kVector: the row says vec=8, else vec=1, the same kernel with
// loads of one element), and compute capability 8.0 (kNeedsSm80: else skipped, with the reason).
constexpr unsigned kTensorStep = gm::kVector | gm::kNeedsSm80;
const std::vector<gm::Step> kSteps = {
    {"wmma", launch_wmma, {}, "step", kTensorStep},
    {"mma-sync", ch20::launch_mma_sync, {}, "step", kTensorStep},
    {"mma-cp-async", ch20::launch_mma_cp_async, {}, "step", kTensorStep},
    {"mma-ahead", ch20::launch_mma_ahead, {}, "step", kTensorStep | gm::kConfigurable},
    {"mma-hoisted", ch20::launch_mma_hoisted, {}, "step", kTensorStep},
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<gm::Step> program{
      "20_tensor_cores",
      "GEMM on tensor cores (bf16 or fp16 in, fp32 out): wmma, mma.sync, cp.async, to cuBLAS.",
      "20", kSteps};
  return sw::bench::run(
      argc, argv, program,
      gm::Problem{
          ch20::kAheadConfigs, {gm::InputType::kBf16, gm::InputType::kFp16}, ch20::mma_roof});
}
