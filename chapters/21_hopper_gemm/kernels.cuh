// Chapter 21's shared pieces: the tile sizes, where a block's shared memory starts, the
// epilogue every step uses (accumulators to C, guarded) and step 8's (through shared memory),
// the tensor maps of A, B and C, the grids, and the launchers of steps 3 to 9 (specialized.cu).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "common/cuda_utils.cuh"
#include "common/hopper/arith.h"
#include "common/hopper/ptx.h"
#include "common/hopper/tensor_map.h"
#include "problem.cuh"

namespace ch21 {

namespace hp = sw::hopper;

constexpr int kTileM = 128;  // rows of C a block computes
constexpr int kTileK = 64;   // k per stage: 64 bf16, one 128-byte swizzle row
constexpr int kWarpgroup = 128;
constexpr int kWgmmaM = 64;                         // rows of one wgmma
constexpr uint32_t kRowBytes = kTileK * 2;          // a tile row in shared memory
constexpr uint32_t kABytes = kTileM * kRowBytes;    // an A tile: 16 KiB
constexpr int kAlignSlack = hp::kSwizzleAtomBytes;  // to start the tiles on 1024 bytes
constexpr int kBarrierBytes = 256;                  // room for the stages' mbarriers
static_assert(kRowBytes == hp::kSwizzleBytes, "a tile row is one swizzle row");

// The first 1024-byte boundary in the dynamic shared memory (the swizzle's atoms start there).
__device__ __forceinline__ uint8_t* align_1024(uint8_t* p) {
  const uint32_t s = hp::smem_u32(p);
  return p + (hp::kSwizzleAtomBytes - s % hp::kSwizzleAtomBytes) % hp::kSwizzleAtomBytes;
}

// The descriptors of k-step kk of a swizzled K-major tile at shared address `tile`.
__device__ __forceinline__ uint64_t desc_at(uint32_t tile, int kk) {
  return hp::matrix_descriptor(hp::k_step_address(tile, kk));
}

// A warpgroup's 64 x N accumulators into C at (row0, col0): each thread's pairs of adjacent
// columns as one 8-byte store when n is even (the pair then never straddles the last column,
// and starts 8-byte aligned), else entry by entry; rows and columns outside C dropped.
template <int kHalfN>
__device__ __forceinline__ void store_accumulators(float* C, int m, int n, int row0, int col0,
                                                   const float (&d)[kHalfN]) {
  const int t = threadIdx.x % kWarpgroup;
  const bool pairs = n % 2 == 0;
#pragma unroll
  for (int i = 0; i < kHalfN; i += 2) {
    const int row = row0 + hp::accumulator_row(t, i), col = col0 + hp::accumulator_col(t, i);
    if (row >= m || col >= n) continue;
    float* c = C + static_cast<int64_t>(row) * n + col;
    if (pairs) {
      *reinterpret_cast<float2*>(c) = make_float2(d[i], d[i + 1]);
    } else {
      c[0] = d[i];
      if (col + 1 < n) c[1] = d[i + 1];
    }
  }
}

// Step 8's epilogue: the same accumulators through shared memory and the copy engine, in
// boxes of 64 x 32 floats (128-byte rows, swizzled as C's tensor map says, so a warp's stores
// spread over the banks), two buffers of the warpgroup's taking turns: while the copy engine
// stores one box to C (asynchronous; rows and columns outside C not written), the threads
// fill the other. Thread 0 of the warpgroup issues the stores; before a buffer is filled
// again it waits until the store that used it has read it. `barrier`: the warpgroup's own.
// `add` (step 9's later pieces of a cut unit): each box is added to C instead of stored.
constexpr int kBoxN = 32;                            // columns of a box: 128 bytes of fp32
constexpr uint32_t kBoxBytes = kWgmmaM * kBoxN * 4;  // 8 KiB
template <int kHalfN>
__device__ __forceinline__ void store_through_smem(const CUtensorMap* map_c, uint8_t* buffers,
                                                   uint32_t barrier, int row0, int col0,
                                                   const float (&d)[kHalfN], bool add = false) {
  constexpr int kBoxes = 2 * kHalfN / kBoxN, kPerBox = kHalfN / kBoxes;  // a thread's per box
  const int t = threadIdx.x % kWarpgroup;
#pragma unroll
  for (int q = 0; q < kBoxes; ++q) {
    uint8_t* buffer = buffers + (q % 2) * kBoxBytes;
    if (t == 0) hp::tma_store_wait_read<1>();  // the store before last (this buffer's) has read it
    hp::named_barrier(barrier, kWarpgroup);
#pragma unroll
    for (int i = q * kPerBox; i < (q + 1) * kPerBox; i += 2) {
      const uint32_t at = hp::swizzled_offset_fp32(hp::accumulator_row(t, i),
                                                   hp::accumulator_col(t, i) - q * kBoxN);
      *reinterpret_cast<float2*>(buffer + at) = make_float2(d[i], d[i + 1]);
    }
    hp::fence_proxy_async();  // the writes visible to the copy engine
    hp::named_barrier(barrier, kWarpgroup);
    if (t == 0) {
      if (add)
        hp::tma_reduce_add_2d(map_c, buffer, col0 + q * kBoxN, row0);
      else
        hp::tma_store_2d(map_c, buffer, col0 + q * kBoxN, row0);
      hp::tma_store_commit();
    }
  }
}

// The tensor map of A (box 128 x 64) or B (box rows x 64) of a product, encoded once per
// matrix, shape and box and kept (a launcher is timed: the driver call is left out of it).
inline const CUtensorMap& tile_map(const uint16_t* base, int rows, int cols, int ld, int box_rows) {
  struct Kept {
    const uint16_t* base;
    int rows, cols, ld, box_rows;
    CUtensorMap map;
  };
  constexpr int kKept = 16;
  static Kept kept[kKept];
  static int next = 0;
  for (const Kept& e : kept)
    if (e.base == base && e.rows == rows && e.cols == cols && e.ld == ld && e.box_rows == box_rows)
      return e.map;
  Kept& e = kept[next++ % kKept];
  e = {
      base,     rows,
      cols,     ld,
      box_rows, hp::encode_tile_map(base, rows, cols, ld, static_cast<uint32_t>(box_rows), kTileK)};
  return e.map;
}

// The tensor map of C (fp32, boxes of 64 x 32) for step 8, kept for the last C, or an empty
// one where the copy engine cannot address C's rows (n % 4 != 0: a row is not a multiple of
// 16 bytes); the kernel then writes C as step 6 does.
constexpr int kStoreAlign = 16 / 4;  // n a multiple of it: C's rows on 16 bytes
inline const CUtensorMap& c_map(const Args& a) {
  static const float* base = nullptr;
  static int m = 0, n = 0;
  static CUtensorMap map{};
  if (a.n % kStoreAlign != 0) {
    static const CUtensorMap none{};
    return none;
  }
  if (a.c != base || a.m != m || a.n != n) {
    base = a.c, m = a.m, n = a.n;
    map = hp::encode_tile_map(a.c, a.m, a.n, a.n, kWgmmaM, kBoxN, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  }
  return map;
}

// The blocks of a grid of one block per output tile of kTileM x kTileN (steps 1 to 4).
template <int kTileN>
int64_t tile_blocks(const Args& a) {
  return sw::ceil_div(a.m, kTileM) * sw::ceil_div(a.n, kTileN);
}

// Steps 3 to 9 (specialized.cu), and the blocks of the persistent grids (steps 5 to 9).
void launch_warp_specialized(const Args& a);
void launch_in_flight(const Args& a);
void launch_persistent(const Args& a);
void launch_clusters(const Args& a);
void launch_ping_pong(const Args& a);
void launch_tma_store(const Args& a);
void launch_split_tail(const Args& a);
int64_t persistent_blocks(const Args& a);
int64_t cluster_blocks(const Args& a);
int64_t ping_pong_blocks(const Args& a);

}  // namespace ch21
