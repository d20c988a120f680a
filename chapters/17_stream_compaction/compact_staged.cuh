// Chapter 17's tiles of steps 3 and 4 (17_stream_compaction.cu): the kept elements of a
// tile go to shared memory first, at their places in the tile, and from there to the
// output in 16-byte pieces, consecutive threads writing consecutive pieces.
//   compact_tile_staged  compact_tile's votes and places, the scatter through `stage`
//   compact_tile_lean    the same with fewer registers live through the look-back: the
//                        lane's flags in one word, the places in the tile in 32 bits
//   store_staged         the stores: whole pieces as one 16-byte store each, the pieces
//                        at either end element by element
#pragma once

#include <cstdint>

#include "chapters/16_scan/scan_lookback.cuh"  // chapter 16's tile and warps_before
#include "compact_tile.cuh"                    // KeepBelow, kVec, Count

namespace {

// The stage is in front of the output by `skew` elements, 0 to kVec - 1: stage[i] goes
// to base[i], base = out + prefix - skew, which is 16-byte aligned. Every piece
// stage[4p, 4p + 4) inside [skew, skew + kept) leaves as one 16-byte store; the first
// and the last piece may hold elements of the neighbouring tiles' ranges and are
// written element by element.
__device__ __forceinline__ void store_staged(const uint32_t* stage, uint32_t* base, int skew,
                                             int kept) {
  const int end = skew + kept;
  for (int p = threadIdx.x; p * kVec < end; p += blockDim.x) {
    const int lo = p * kVec;
    if (lo >= skew && lo + kVec <= end) {
      reinterpret_cast<uint4*>(base)[p] = reinterpret_cast<const uint4*>(stage)[p];
    } else {
      for (int i = max(lo, skew); i < min(lo + kVec, end); ++i) base[i] = stage[i];
    }
  }
}

// How far out + prefix lies past a 16-byte boundary, in elements.
__device__ __forceinline__ int staged_skew(const uint32_t* at) {
  return static_cast<int>(reinterpret_cast<uintptr_t>(at) % sizeof(uint4) / sizeof(uint32_t));
}

// compact_tile (compact_tile.cuh) with the scatter through `stage` (tile_items + kVec
// words of shared memory): each kept element to stage[skew + its place in the tile],
// a barrier, then store_staged.
template <int kRows, class Prefix>
__device__ __forceinline__ void compact_tile_staged(const uint32_t* __restrict__ in,
                                                    uint32_t* __restrict__ out, int64_t n,
                                                    int64_t tile, KeepBelow keep, uint32_t* stage,
                                                    Prefix&& tile_prefix) {
  const int lane = threadIdx.x % sw::kWarp;
  TileVotes<kRows> t;
  vote_tile<kRows>(in, n, tile, keep, t);
  Count aggregate;
  const Count warp_before = ch16::warps_before(t.warp_total, &aggregate);
  const Count prefix = tile_prefix(aggregate);
  const int skew = staged_skew(out + prefix);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    Count at = skew + warp_before + t.row_before[r] + t.lane_before[r];
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      if (t.votes[r][k] >> lane & 1) stage[at++] = t.x[r].v[k];
  }
  __syncthreads();
  store_staged(stage, out + prefix - skew, skew, static_cast<int>(aggregate));
}

// compact_tile_staged keeping less through the look-back: instead of 4 ballots a row
// and 64-bit counts (at 8 rows, 32 + 16 + 8 registers), the lane's own flags (bit
// r * kVec + k: element k of row r is kept) and each row's place in the tile, in 32 bits
// (a tile holds at most 2^14 elements): 1 + 8 registers.
template <int kRows, class Prefix>
__device__ __forceinline__ void compact_tile_lean(const uint32_t* __restrict__ in,
                                                  uint32_t* __restrict__ out, int64_t n,
                                                  int64_t tile, KeepBelow keep, uint32_t* stage,
                                                  Prefix&& tile_prefix) {
  static_assert(kRows * kVec <= 32, "a lane's flags fit in one word");
  constexpr int kRow = sw::kWarp * kVec;
  const unsigned below = (1u << (threadIdx.x % sw::kWarp)) - 1;
  const int64_t first = ch16::lane_first<kVec, kRows>(tile);
  const bool whole = ch16::tile_whole<kVec, kRows>(tile, n);
  ch16::Vec<uint32_t, kVec> x[kRows];
  ch16::load_rows<uint32_t, kVec, kRows>(in, n, first, whole, x);
  unsigned flags = 0, place[kRows], warp_total = 0;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    unsigned row = 0, mine = 0;
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const bool kept = (whole || first + r * kRow + k < n) && keep(x[r].v[k]);
      const unsigned vote = __ballot_sync(sw::kFullMask, kept);
      row += __popc(vote);
      mine += __popc(vote & below);
      flags |= unsigned{kept} << (r * kVec + k);
    }
    place[r] = warp_total + mine;
    warp_total += row;
  }
  unsigned aggregate;
  const unsigned warp_before = ch16::warps_before(warp_total, &aggregate);
  const Count prefix = tile_prefix(Count{aggregate});
  const int skew = staged_skew(out + prefix);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    unsigned at = skew + warp_before + place[r];
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      if (flags >> (r * kVec + k) & 1) stage[at++] = x[r].v[k];
  }
  __syncthreads();
  store_staged(stage, out + prefix - skew, skew, static_cast<int>(aggregate));
}

// The shared memory of a tile's stage: its elements and up to kVec - 1 of skew in front.
size_t stage_bytes(const sc::Tile& t) {
  return static_cast<size_t>(ch16::tile_items(t.block, t.rows, kVec) + kVec) * sizeof(uint32_t);
}

}  // namespace
