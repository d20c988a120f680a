// Chapter 17's tile, included by 17_stream_compaction.cu and its problem: the predicate
// (KeepBelow), the compaction of one tile (each kept element's place from warp
// votes, given the tile's prefix) and what a step's launcher gets (CompactCall).
#pragma once

#include <cstdint>

#include "chapters/16_scan/scan_lookback.cuh"  // chapter 16's tile, ticket and look-back
#include "common/problems/scan.h"

namespace {

namespace sc = sw::scan;
using ch16::Count;

constexpr int kVec = 4;  // u32 per 16-byte load

// Keeps x when x < threshold = keep * 2^32 (64-bit: keep 1 keeps every u32).
struct KeepBelow {
  uint64_t threshold;
  __host__ __device__ bool operator()(uint32_t x) const { return x < threshold; }
};
KeepBelow keep_below(double keep) { return {static_cast<uint64_t>(keep * 4294967296.0)}; }

// --- the tile: each kept element's place from warp votes ---------------------------------

// One tile's elements and their warp votes: each lane's rows of kVec elements (x), the
// ballot of each row and element (votes), and per row the kept elements of the lanes below
// (lane_before) and of the rows before (row_before); warp_total, the warp's kept elements.
template <int kRows>
struct TileVotes {
  int64_t first;
  bool whole;
  ch16::Vec<uint32_t, kVec> x[kRows];
  unsigned votes[kRows][kVec], lane_before[kRows];
  Count row_before[kRows], warp_total = 0;
};

// Loads tile `tile` of in and takes its votes (the elements past n are not kept).
template <int kRows>
__device__ __forceinline__ void vote_tile(const uint32_t* __restrict__ in, int64_t n, int64_t tile,
                                          KeepBelow keep, TileVotes<kRows>& t) {
  constexpr int kRow = sw::kWarp * kVec;
  const unsigned below = (1u << (threadIdx.x % sw::kWarp)) - 1;
  t.first = ch16::lane_first<kVec, kRows>(tile);
  t.whole = ch16::tile_whole<kVec, kRows>(tile, n);
  ch16::load_rows<uint32_t, kVec, kRows>(in, n, t.first, t.whole, t.x);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    unsigned row = 0, mine = 0;
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const bool kept = (t.whole || t.first + r * kRow + k < n) && keep(t.x[r].v[k]);
      t.votes[r][k] = __ballot_sync(sw::kFullMask, kept);
      row += __popc(t.votes[r][k]);
      mine += __popc(t.votes[r][k] & below);
    }
    t.lane_before[r] = mine;
    t.row_before[r] = t.warp_total;
    t.warp_total += row;
  }
}

// Compacts one tile: lane l's element k of row r is kept if its flag is set; its place
// is the tile's prefix (tile_prefix(kept in the tile)), plus the kept elements of the
// warps before, of the rows before, of the lanes below (__popc of each ballot, masked),
// and of this lane's elements before k.
template <int kRows, class Prefix>
__device__ __forceinline__ void compact_tile(const uint32_t* __restrict__ in,
                                             uint32_t* __restrict__ out, int64_t n, int64_t tile,
                                             KeepBelow keep, Prefix&& tile_prefix) {
  const int lane = threadIdx.x % sw::kWarp;
  TileVotes<kRows> t;
  vote_tile<kRows>(in, n, tile, keep, t);
  Count aggregate;
  const Count warp_before = ch16::warps_before(t.warp_total, &aggregate);
  const Count prefix = tile_prefix(aggregate);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    Count at = prefix + warp_before + t.row_before[r] + t.lane_before[r];
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      if (t.votes[r][k] >> lane & 1) out[at++] = t.x[r].v[k];
  }
}

// What a launcher gets: one whole compaction, on `stream`.
struct CompactCall {
  const uint32_t* in;
  uint32_t* out;
  Count* count;
  int64_t n;
  KeepBelow keep;
  sc::Tile tile;
  Count* scratch;    // ceil(n / 64) + 64 words: tile counts and offsets
  Count* state;      // ceil(n / 128) + 1 words: the ticket and the status words
  int64_t* tickets;  // the launcher writes the tickets its kernels must draw
  cudaStream_t stream;
};

}  // namespace
