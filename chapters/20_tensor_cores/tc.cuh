// Chapter 20's shared pieces: the tensor-core instructions as inline PTX (mma.sync,
// ldmatrix, cp.async), how a tile's rows come from global memory, how every step writes C,
// and the launchers of the steps in the chapter's other files (the step table in
// 20_tensor_cores.cu lists them all).
//
// A and B arrive as the bits of 16-bit values (gm::Args::a16, b16): the loads and the shared
// tiles do not care which type; only the multiply does (a kernel's template parameter T,
// __nv_bfloat16 or __half).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "common/cp_async.cuh"
#include "common/problems/gemm.h"

// mma.sync.m16n8k16 on bf16 or fp16, bf16 wmma fragments and cp.async need sm_80. A build for
// an older GPU (-Demulate=t4 compiles PTX for compute_75) puts a trap where each instruction
// would be (and leaves wmma's kernel body out); the problem never launches them there: it
// skips the steps on such a GPU (gm::kNeedsSm80), with the reason.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define CH20_SM80 1
#else
#define CH20_SM80 0
#endif

namespace ch20 {

namespace gm = sw::gemm;

constexpr int kChunk = 8;  // 16-bit elements in 16 bytes: one vector load, one ldmatrix row
constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 16;  // the tile of one mma.sync.m16n8k16

// --- global memory to registers --------------------------------------------------------------

// Eight elements of a row, columns col to col + 7 of `cols`, from row_start (the row's column 0
// of this tile); 0 outside the matrix (row_in false, or a column past cols). vec (col and cols
// multiples of 8, the row 16-byte aligned): one 16-byte load, the eight all in or all out.
// Else each element alone.
__device__ __forceinline__ uint4 load8(const uint16_t* row_start, bool row_in, int col, int cols,
                                       bool vec) {
  if (vec)
    return row_in && col < cols ? *reinterpret_cast<const uint4*>(row_start + col)
                                : make_uint4(0, 0, 0, 0);
  uint32_t w[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t lo = row_in && col + 2 * j < cols ? row_start[col + 2 * j] : 0;
    const uint32_t hi = row_in && col + 2 * j + 1 < cols ? row_start[col + 2 * j + 1] : 0;
    w[j] = lo | hi << 16;  // the lower address in the lower half, as in memory
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// --- the tensor-core instructions (PTX ISA, "Warp Level Matrix Multiply-Accumulate") --------

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ldmatrix: the warp reads four 8 x 8 matrices of 16-bit values from shared memory, one row
// of 16 bytes per lane address (lanes 0-7 the rows of the first matrix, 8-15 the second, ...),
// and lane l receives in r[i] the two elements (l / 4, 2 (l % 4)) and (l / 4, 2 (l % 4) + 1)
// of matrix i: the fragment layout of mma.sync. .trans gives each lane the transposed pair,
// (2 (l % 4), l / 4) and (2 (l % 4) + 1, l / 4): a row-major k x n tile of B read as mma's
// column-major B.
// The row's address is a shared-memory address (shared_address; step 5 computes them itself).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t row) {
#if CH20_SM80
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row)
               : "memory");
#else
  r[0] = r[1] = r[2] = r[3] = row;
  __trap();
#endif
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t row) {
#if CH20_SM80
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row)
               : "memory");
#else
  r[0] = r[1] = r[2] = r[3] = row;
  __trap();
#endif
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* row) {
  ldmatrix_x4(r, shared_address(row));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row) {
  ldmatrix_x4_trans(r, shared_address(row));
}

// d += a b for one 16 x 8 tile of C, k = 16: a is 16 x 16 (four registers of two elements),
// b 16 x 8 (two), d 16 x 8 in fp32 (four), each spread over the warp's lanes: with g = lane / 4
// and t = lane % 4, a holds A[g][2t..2t+1], A[g+8][2t..], A[g][2t+8..], A[g+8][2t+8..]; b holds
// B[2t..2t+1][g], B[2t+8..2t+9][g]; d holds C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1].
template <class T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4],
                                          const uint32_t (&b)[2]) {
#if CH20_SM80
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
#else
  __trap();
#endif
}

// cp.async (common/cp_async.cuh): 16 bytes from global to shared memory without passing
// through registers, finished later, in groups.
using sw::cp_async;
using sw::cp_async_commit;
using sw::cp_async_wait;

// --- writing C: the epilogue of every step -------------------------------------------------

// One entry of C: alpha * acc + beta * c. With beta = 0, c is not read (BLAS: C need not hold
// a number then; it is poisoned, NaN).
__device__ __forceinline__ void store_c(float* c, float acc, float alpha, float beta) {
  *c = beta == 0.0f ? alpha * acc : fmaf(beta, *c, alpha * acc);
}

// A lane's four entries of one 16 x 8 tile of C (mma_16816's d): (row, col), (row, col + 1),
// (row + 8, col), (row + 8, col + 1), with row = the tile's row + lane / 4 and col = its column
// + 2 (lane % 4), an even column. vec (n even: col + 1 < n when col < n, and the pair 8-byte
// aligned): one float2 per row. Else each entry alone, guarded.
__device__ __forceinline__ void store_tile(float* C, int m, int n, int row, int col,
                                           const float (&d)[4], float alpha, float beta, bool vec) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row + 8 * h;
    if (r >= m || col >= n) continue;
    float* c = C + static_cast<int64_t>(r) * n + col;
    if (vec) {
      float2 out = make_float2(alpha * d[2 * h], alpha * d[2 * h + 1]);
      if (beta != 0.0f) {
        const float2 old = *reinterpret_cast<const float2*>(c);
        out = make_float2(fmaf(beta, old.x, out.x), fmaf(beta, old.y, out.y));
      }
      *reinterpret_cast<float2*>(c) = out;
    } else {
      store_c(c, d[2 * h], alpha, beta);
      if (col + 1 < n) store_c(c + 1, d[2 * h + 1], alpha, beta);
    }
  }
}

// The grid of a step whose block computes a tile_m x tile_n tile of C: x across the columns,
// y down the rows.
inline dim3 tile_grid(const gm::Args& a, int tile_m, int tile_n) {
  return dim3(static_cast<unsigned>(sw::ceil_div(a.n, tile_n)),
              static_cast<unsigned>(sw::ceil_div(a.m, tile_m)));
}

// --- steps 1 and 2: one tile shape, padded shared rows ---------------------------------------

// A block computes a 128 x 128 tile of C with 8 warps (2 down, 4 across, each a 64 x 32 tile),
// k 32 at a time: the A tile (128 x 32) and the B tile (32 x 128) pass through registers into
// shared memory, each row padded by 8 elements (16 bytes), so that the 8 rows one ldmatrix
// phase (or a wmma load) reads start in 8 different 16-byte bank groups.
namespace padded {
constexpr int kTileM = 128, kTileN = 128, kTileK = 32, kThreads = 256;
constexpr int kWarpsN = 4, kWarpM = 64, kWarpN = 32;
constexpr int kPad = 8, kLdA = kTileK + kPad, kLdB = kTileN + kPad;  // shared row lengths
constexpr int kLoadsA = kTileM * kTileK / kChunk / kThreads;         // 16-byte chunks a thread
constexpr int kLoadsB = kTileK * kTileN / kChunk / kThreads;
static_assert(kLoadsA * kThreads * kChunk == kTileM * kTileK, "whole chunks of A per thread");
static_assert(kLoadsB * kThreads * kChunk == kTileK * kTileN, "whole chunks of B per thread");
}  // namespace padded

// This thread's chunks of the tiles at p0: A's rows row0.. at columns p0.., B's rows p0.. at
// columns col0.., zero outside the matrices, into the padded shared tiles as and bs.
__device__ __forceinline__ void load_padded_tiles(const uint16_t* A, const uint16_t* B,
                                                  uint16_t* as, uint16_t* bs, int m, int n, int k,
                                                  int row0, int col0, int p0, bool vec) {
  using namespace padded;
#pragma unroll
  for (int l = 0; l < kLoadsA; ++l) {
    const int f = threadIdx.x + l * kThreads, r = f / (kTileK / kChunk);
    const int c = f % (kTileK / kChunk) * kChunk;
    const uint16_t* row = A + static_cast<int64_t>(row0 + r) * k + p0;
    *reinterpret_cast<uint4*>(&as[r * kLdA + c]) = load8(row, row0 + r < m, c, k - p0, vec);
  }
#pragma unroll
  for (int l = 0; l < kLoadsB; ++l) {
    const int f = threadIdx.x + l * kThreads, r = f / (kTileN / kChunk);
    const int c = f % (kTileN / kChunk) * kChunk;
    const uint16_t* row = B + static_cast<int64_t>(p0 + r) * n + col0;
    *reinterpret_cast<uint4*>(&bs[r * kLdB + c]) = load8(row, p0 + r < k, c, n - col0, vec);
  }
}

// --- the launchers of steps 2 to 5 and of the ceiling ------------------------------------------
void launch_mma_sync(const gm::Args& a);                 // mma_sync.cu
void launch_mma_cp_async(const gm::Args& a);             // mma_pipeline.cu
void launch_mma_ahead(const gm::Args& a);                // mma_pipeline.cu; Args::config indexes
extern const std::vector<gm::TileConfig> kAheadConfigs;  // its tiles (--config)
void launch_mma_hoisted(const gm::Args& a);              // mma_hoisted.cu
// The mma-roof row (gm::Problem::ceiling): mma.sync alone, on registers (mma_roof.cu).
void mma_roof(const sw::bench::Session<gm::Step>& s, gm::InputType type);

}  // namespace ch20
