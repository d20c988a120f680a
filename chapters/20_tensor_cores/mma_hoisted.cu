// Chapter 20, step 5: step 4's pipeline (k 64 at a time, three stages, the operands one step
// ahead) with its addresses computed once. In step 4's loop most instructions are not
// mma.sync: each cp.async recomputes its row's 64-bit address, its bounds and its swizzled
// place, and each ldmatrix its swizzled row. Here a thread works out before the loop where
// its copies come from and where they go, and a lane where its ldmatrix rows are; inside the
// loop a tile moves them by constants.
#include "pipeline.cuh"

namespace ch20 {
namespace pipeline {

constexpr int kHoistedTileK = 64, kHoistedStages = 3;
using Hoisted = Stages<kHoistedTileK, kHoistedStages>;
constexpr int kChunkBytes = kChunk * static_cast<int>(sizeof(uint16_t));

// This thread's cp.async copies of every tile, addressed once. Its chunks of A: chunk c of
// rows r, r + kRowsA, r + 2 kRowsA, ... of the block's rows; of B: chunk c' of rows r',
// r' + kRowsB, ... of a tile's k rows. They land in the same places of every stage (rows
// kRowsA or kRowsB apart, multiples of 8, keep the swizzle's XOR), and their sources move by
// kTileK columns of A and kTileK rows of B per tile. Zero-filled outside the matrices.
template <class S>
struct Copies {
  static constexpr int kTileK = S::kChunksA * kChunk;
  static constexpr int kRowsA = kThreads / S::kChunksA, kRowsB = kThreads / kChunksB;
  const uint16_t* a;                        // chunk 0 of A at tile 0
  const uint16_t* b;                        // chunk 0 of B at tile 0
  int64_t a_apart, b_apart, b_tiles_apart;  // elements between the chunks, B's tiles
  uint32_t a_rows_in;                       // bit l: the row of A's chunk l is inside A
  int a_col, b_row;                         // A's chunks' column in a tile, B's chunk 0's row
  bool b_cols_in;
  int a_to, b_to;  // chunk 0's place in a stage's A tile, in its B tile (elements)

  __device__ Copies(const uint16_t* A, const uint16_t* B, int m, int n, int k, int row0, int col0) {
    const int ar = threadIdx.x / S::kChunksA, ac = threadIdx.x % S::kChunksA;
    const int br = threadIdx.x / kChunksB, bc = threadIdx.x % kChunksB;
    a = A + static_cast<int64_t>(row0 + ar) * k + ac * kChunk;
    b = B + static_cast<int64_t>(br) * n + col0 + bc * kChunk;
    a_apart = static_cast<int64_t>(kRowsA) * k;
    b_apart = static_cast<int64_t>(kRowsB) * n;
    b_tiles_apart = static_cast<int64_t>(kTileK) * n;
    a_rows_in = 0;
#pragma unroll
    for (int l = 0; l < S::kLoadsA; ++l) a_rows_in |= (row0 + ar + l * kRowsA < m ? 1u : 0u) << l;
    a_col = ac * kChunk, b_row = br, b_cols_in = col0 + bc * kChunk < n;
    a_to = a_at<S::kChunksA>(ar, ac), b_to = b_at(br, bc);
  }
  // Tile `tile`'s chunks of A into `stage`.
  __device__ __forceinline__ void a_tile(uint16_t* stage, const uint16_t* A, int tile,
                                         int k) const {
    const int p0 = tile * kTileK;
    const bool col_in = p0 + a_col < k;
#pragma unroll
    for (int l = 0; l < S::kLoadsA; ++l) {
      const bool in = col_in && (a_rows_in >> l & 1u);
      cp_async<16>(stage + a_to + l * kRowsA * S::kChunksA * kChunk, in ? a + p0 + l * a_apart : A,
                   in ? 16 : 0);
    }
  }
  // Tile `tile`'s chunks of B into `stage` (its B tile).
  __device__ __forceinline__ void b_tile(uint16_t* stage, const uint16_t* B, int tile,
                                         int k) const {
    const int p0 = tile * kTileK;
    const uint16_t* from = b + tile * b_tiles_apart;
#pragma unroll
    for (int l = 0; l < S::kLoadsB; ++l) {
      const bool in = b_cols_in && p0 + b_row + l * kRowsB < k;
      cp_async<16>(stage + S::kStageA + b_to + l * kRowsB * kChunksB * kChunk,
                   in ? from + l * b_apart : B, in ? 16 : 0);
    }
  }
};

// A lane's ldmatrix rows as shared-memory addresses in the stage of the current tile: a_row[s]
// for A at step s of 16 (mma tile i is kMmaM rows further: a constant), b_row[q] for B's mma
// tiles 2q and 2q + 1 (step s is kMmaK rows further: a constant). Those constants keep a row's
// swizzle (it depends on r % 8), so the XOR is done here, once.
template <class S>
struct Operands {
  static constexpr int kSteps = S::kChunksA * kChunk / kMmaK;
  static constexpr uint32_t kStageBytes = S::kStage * sizeof(uint16_t);
  uint32_t a_row[kSteps], b_row[kTilesN / 2];

  __device__ Operands(const uint16_t* shared, const Place& w) {
    const uint32_t base = shared_address(shared);
    const int lane_row = w.lane % 16, lane_chunk = w.lane / 16;
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
      a_row[s] = base + sizeof(uint16_t) * a_at<S::kChunksA>(w.warp_row + lane_row,
                                                             s * kMmaK / kChunk + lane_chunk);
#pragma unroll
    for (int q = 0; q < kTilesN / 2; ++q)
      b_row[q] = base + sizeof(uint16_t) *
                            (S::kStageA +
                             b_at(lane_row, (w.warp_col + 2 * q * kMmaN) / kChunk + lane_chunk));
  }
  // To the next stage; after the last, back to the first.
  __device__ __forceinline__ void next_stage(bool back_to_first) {
    const uint32_t by = back_to_first ? 0u - (S::kSharedBytes - kStageBytes) : kStageBytes;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) a_row[s] += by;
#pragma unroll
    for (int q = 0; q < kTilesN / 2; ++q) b_row[q] += by;
  }
  // The warp's operands of step s: as load_fragments (mma_pipeline.cu), from these rows.
  __device__ __forceinline__ void load(uint32_t (&a)[kTilesM][4], uint32_t (&b)[kTilesN][2],
                                       int s) const {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i)
      ldmatrix_x4(a[i], a_row[s] + i * kMmaM * S::kChunksA * kChunkBytes);
#pragma unroll
    for (int j = 0; j < kTilesN; j += 2) {
      uint32_t r[4];
      ldmatrix_x4_trans(r, b_row[j / 2] + s * kMmaK * kChunksB * kChunkBytes);
      split_pair(b, j, r);
    }
  }
};

// Step 5: step 4's loop (k64-s3), its copies from Copies and its operands from Operands. Rows
// that are not whole 16-byte chunks (vec false) take step 3's loads one element at a time.
template <class T>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_mma_hoisted(const uint16_t* __restrict__ A, const uint16_t* __restrict__ B,
                     float* __restrict__ C, int m, int n, int k, float alpha, float beta,
                     bool vec) {
  using S = Hoisted;
  constexpr int kTileK = kHoistedTileK, kStages = kHoistedStages, kSteps = kTileK / kMmaK;
  extern __shared__ __align__(128) uint16_t shared[];  // stage s: A tile, then B tile
  const Place w = place();
  const int tiles = static_cast<int>(sw::ceil_div(k, kTileK));
  const Copies<S> copies(A, B, m, n, k, w.row0, w.col0);
  auto copy_a = [&](int tile, uint16_t* stage) {
    if (vec)
      copies.a_tile(stage, A, tile, k);
    else
      load_a<S>(A, stage, m, k, w.row0, tile * kTileK, false);
  };
  auto copy_b = [&](int tile, uint16_t* stage) {
    if (vec)
      copies.b_tile(stage, B, tile, k);
    else
      load_b<S>(B, stage + S::kStageA, n, k, w.col0, tile * kTileK, false);
  };
  for (int s = 0; s < kStages - 1; ++s) {  // tiles 0 and 1 into stages 0 and 1
    if (s < tiles) {
      copy_a(s, shared + s * S::kStage);
      copy_b(s, shared + s * S::kStage);
    }
    cp_async_commit();
  }
  Operands<S> ops(shared, w);
  float acc[kTilesM][kTilesN][4] = {};
  uint32_t a[2][kTilesM][4], b[2][kTilesN][2];
  cp_async_wait<kStages - 2>();
  __syncthreads();
  ops.load(a[0], b[0], 0);
  int stage = 0;  // tile t's
  for (int t = 0; t < tiles; ++t) {
    uint16_t* refill = shared + (stage == 0 ? kStages - 1 : stage - 1) * S::kStage;
    const int next = t + kStages - 1;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      if (s == 0 && next < tiles) copy_a(next, refill);
      if (s == 1) {
        if (next < tiles) copy_b(next, refill);
        cp_async_commit();
      }
      if (s < kSteps - 1) {
        ops.load(a[(s + 1) % 2], b[(s + 1) % 2], s + 1);
      } else {
        cp_async_wait<kStages - 2>();  // tile t + 1's copies have landed, for every thread
        __syncthreads();
        stage = stage + 1 == kStages ? 0 : stage + 1;
        ops.next_stage(stage == 0);
        if (t + 1 < tiles) ops.load(a[0], b[0], 0);
      }
      multiply<T>(acc, a[s % 2], b[s % 2]);
    }
  }
  store_warp_tile(C, m, n, w.row0, w.col0, w.warp_row, w.warp_col, w.lane, acc, alpha, beta);
}

}  // namespace pipeline

void launch_mma_hoisted(const gm::Args& a) {
  using namespace pipeline;
  constexpr int kBytes = Hoisted::kSharedBytes;
  const Kernel kernel = a.type == gm::InputType::kBf16
                            ? allowed<gemm_mma_hoisted<__nv_bfloat16>, kBytes>()
                            : allowed<gemm_mma_hoisted<__half>, kBytes>();
  kernel<<<tile_grid(a, kTileM, kTileN), kThreads, kBytes>>>(a.a16, a.b16, a.c, a.m, a.n, a.k,
                                                             a.alpha, a.beta, gm::vector_ok(a));
  CHECK_LAUNCH();
}

}  // namespace ch20
