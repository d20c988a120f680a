// Chapter 20's pipeline, the pieces steps 3 to 5 share (mma_pipeline.cu, mma_hoisted.cu): the
// block's tile and its warps, the stages of shared memory and their XOR swizzle, the copies of
// a tile into a stage, the operands' split, the multiply and the epilogue.
#pragma once

#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "tc.cuh"

namespace ch20 {
namespace pipeline {

// A block computes a 128 x 256 tile of C with 8 warps (2 down, 4 across, each 64 x 64: 4 x 8
// tiles of mma's 16 x 8), kTileK of k at a time, from kStages stages of shared memory, each an
// A tile (128 x kTileK) and a B tile (kTileK x 256): step 3 takes k 32 at a time from four
// stages (24 KiB each, 96 KiB in all), step 4 64 from three (48 KiB each, 144 KiB).
constexpr int kTileM = 128, kTileN = 256, kThreads = 256;
constexpr int kWarpsN = 4, kWarpM = 64, kWarpN = 64;
constexpr int kTilesM = kWarpM / kMmaM, kTilesN = kWarpN / kMmaN;
constexpr int kChunksB = kTileN / kChunk;  // 16-byte chunks a row of B
template <int kTileK, int kStages>
struct Stages {
  static constexpr int kChunksA = kTileK / kChunk;  // chunks a row of A
  static constexpr int kStageA = kTileM * kTileK, kStage = kStageA + kTileK * kTileN;  // elements
  static constexpr int kSharedBytes = kStages * kStage * static_cast<int>(sizeof(uint16_t));
  static constexpr int kLoadsA = kTileM * kChunksA / kThreads,
                       kLoadsB = kTileK * kChunksB / kThreads;
  static_assert(kLoadsA * kThreads == kTileM * kChunksA && kLoadsB * kThreads == kTileK * kChunksB,
                "whole chunks per thread");
  static_assert((kChunksA == 4 || kChunksA == 8) && kChunksB % 8 == 0,
                "the swizzles below are for these rows");
};

// The swizzle: where chunk c of row r sits in a stage. No padding: an A row is 64 bytes (4
// chunks, k 32) or 128 (8 chunks, k 64), a B row 512 (32 chunks). One phase of ldmatrix reads
// chunk c of 8 consecutive rows (r0 a multiple of 8). Unswizzled, 64-byte A rows would fall
// in two 16-byte bank groups (rows r and r + 2 are 128 bytes apart), 128-byte A rows and the
// B rows all in one: a 4-way and an 8-way conflict.
// XOR-ing c with (r / 2) % 4 in 64-byte rows and with r % 8 in longer ones puts the 8 rows'
// chunks in 8 different 16-byte bank groups, and a row's chunks stay in the row (a warp's
// cp.async of whole rows still writes 512 contiguous bytes).
template <int kChunksA>
__device__ __forceinline__ int a_at(int r, int c) {
  const int x = kChunksA == 4 ? (r >> 1) & 3 : r & 7;
  return (r * kChunksA + (c ^ x)) * kChunk;
}
__device__ __forceinline__ int b_at(int r, int c) {
  return (r * kChunksB + (c ^ (r & 7))) * kChunk;
}

// This thread's chunks of the A tile (load_a) and of the B tile (load_b) at p0 into one
// stage (as, bs). vec: cp.async, 16 bytes each, zero-filled outside the matrices (with k and n
// multiples of 8 a chunk is all in or all out); they land later, in the group the caller
// commits. Else through registers, one element at a time (load8), stored at once.
template <class S>
__device__ __forceinline__ void load_a(const uint16_t* A, uint16_t* as, int m, int k, int row0,
                                       int p0, bool vec) {
#pragma unroll
  for (int l = 0; l < S::kLoadsA; ++l) {
    const int f = threadIdx.x + l * kThreads, r = f / S::kChunksA, c = f % S::kChunksA;
    const int row = row0 + r, col = p0 + c * kChunk;
    const uint16_t* src = A + static_cast<int64_t>(row) * k;
    uint16_t* to = &as[a_at<S::kChunksA>(r, c)];
    if (vec)
      cp_async<16>(to, row < m && col < k ? src + col : A, row < m && col < k ? 16 : 0);
    else
      *reinterpret_cast<uint4*>(to) = load8(src + p0, row < m, c * kChunk, k - p0, false);
  }
}
template <class S>
__device__ __forceinline__ void load_b(const uint16_t* B, uint16_t* bs, int n, int k, int col0,
                                       int p0, bool vec) {
#pragma unroll
  for (int l = 0; l < S::kLoadsB; ++l) {
    const int f = threadIdx.x + l * kThreads, r = f / kChunksB, c = f % kChunksB;
    const int row = p0 + r, col = col0 + c * kChunk;
    const uint16_t* src = B + static_cast<int64_t>(row) * n;
    if (vec)
      cp_async<16>(&bs[b_at(r, c)], row < k && col < n ? src + col : B,
                   row < k && col < n ? 16 : 0);
    else
      *reinterpret_cast<uint4*>(&bs[b_at(r, c)]) =
          load8(src + col0, row < k, c * kChunk, n - col0, false);
  }
}
// Both tiles at p0 into the stage at `stage` (its A tile, then its B tile).
template <class S>
__device__ __forceinline__ void load_stage(const uint16_t* A, const uint16_t* B, uint16_t* stage,
                                           int m, int n, int k, int row0, int col0, int p0,
                                           bool vec) {
  load_a<S>(A, stage, m, k, row0, p0, vec);
  load_b<S>(B, stage + S::kStageA, n, k, col0, p0, vec);
}

// Where this block's tile of C starts (row0, col0), and this warp's in it.
struct Place {
  int row0, col0, warp_row, warp_col, lane;
};
__device__ __forceinline__ Place place() {
  const int warp = threadIdx.x / sw::kWarp;
  return {static_cast<int>(blockIdx.y) * kTileM, static_cast<int>(blockIdx.x) * kTileN,
          warp / kWarpsN * kWarpM, warp % kWarpsN * kWarpN,
          static_cast<int>(threadIdx.x) % sw::kWarp};
}

// The pipeline's start: tiles 0 to kStages - 2 into stages 0 to kStages - 2, a group each
// (an empty group where the product has fewer tiles, so that the count of groups in
// flight stays the same).
template <class S, int kTileK, int kStages>
__device__ __forceinline__ void fill_first_stages(const uint16_t* A, const uint16_t* B,
                                                  uint16_t* shared, int m, int n, int k, int row0,
                                                  int col0, int tiles, bool vec) {
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles)
      load_stage<S>(A, B, shared + s * S::kStage, m, n, k, row0, col0, s * kTileK, vec);
    cp_async_commit();
  }
}

// ldmatrix_x4_trans's four 8 x 8 matrices r[0..3] of B (k 0-7 and 8-15 of mma tile j, then of
// tile j + 1) into the operands b[j] and b[j + 1] of mma_16816.
__device__ __forceinline__ void split_pair(uint32_t (&b)[kTilesN][2], int j,
                                           const uint32_t (&r)[4]) {
  // lab mma-fragments: begin
  b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
  // lab mma-fragments: end
}

template <class T>
__device__ __forceinline__ void multiply(float (&acc)[kTilesM][kTilesN][4],
                                         const uint32_t (&a)[kTilesM][4],
                                         const uint32_t (&b)[kTilesN][2]) {
#pragma unroll
  for (int i = 0; i < kTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) mma_16816<T>(acc[i][j], a[i], b[j]);
}

// The warp's 64 x 64 tile of C from its accumulators.
__device__ __forceinline__ void store_warp_tile(float* C, int m, int n, int row0, int col0,
                                                int warp_row, int warp_col, int lane,
                                                const float (&acc)[kTilesM][kTilesN][4],
                                                float alpha, float beta) {
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

// A kernel allowed its dynamic shared memory (past the 48 KiB a launch gets without asking),
// once.
using Kernel = void (*)(const uint16_t*, const uint16_t*, float*, int, int, int, float, float,
                        bool);
template <Kernel kKernel, int kBytes>
Kernel allowed() {
  static const Kernel kernel = [] {
    CUDA_CHECK(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes));
    return kKernel;
  }();
  return kernel;
}

}  // namespace pipeline
}  // namespace ch20
