// Chapter 17's step 1 (three-pass), included by 17_stream_compaction.cu: each tile
// counts its kept elements, chapter 16's look-back scan turns the counts into tile
// offsets, each tile is read again and scattered from its offset.
#pragma once

#include <cstdint>

#include "chapters/16_scan/scan_lookback.cuh"
#include "common/check.h"
#include "compact_tile.cuh"

namespace {

using ch16::Count;

// --- step 1: count, scan the counts, scatter --------------------------------------------------

template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    count_tiles(const uint32_t* __restrict__ in, int64_t n, KeepBelow keep, Count* counts) {
  const int64_t first = ch16::lane_first<kVec, kRows>(blockIdx.x);
  const bool whole = ch16::tile_whole<kVec, kRows>(blockIdx.x, n);
  ch16::Vec<uint32_t, kVec> x[kRows];
  ch16::load_rows<uint32_t, kVec, kRows>(in, n, first, whole, x);
  unsigned kept = 0;
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      kept += (whole || first + r * sw::kWarp * kVec + k < n) && keep(x[r].v[k]);
  Count aggregate;
  ch16::warps_before<Count>(ch16::warp_sum_all(kept), &aggregate);
  if (threadIdx.x == 0) counts[blockIdx.x] = aggregate;
}

template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    scatter_tiles(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, Count* count,
                  int64_t n, KeepBelow keep, const Count* __restrict__ offsets) {
  compact_tile<kRows>(in, out, n, blockIdx.x, keep, [&](Count kept) {
    const Count offset = offsets[blockIdx.x];
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) *count = offset + kept;
    return offset;
  });
}

// The tile offsets at scratch + aligned(tiles): 16-byte aligned for the scan's loads.
int64_t aligned(int64_t count) { return sw::ceil_div(count, 2) * 2; }

// The count, chapter 16's scan of the counts and the scatter.
// Returns the scan's tickets.
int64_t launch_three_pass(const CompactCall& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, kVec);
  Count* counts = c.scratch;
  Count* offsets = c.scratch + aligned(tiles);
  const auto count =
      ch16::ScanRows::pick(c.tile.rows, [](auto r) { return count_tiles<decltype(r)::value>; });
  const auto scatter =
      ch16::ScanRows::pick(c.tile.rows, [](auto r) { return scatter_tiles<decltype(r)::value>; });
  count<<<tiles, c.tile.block, 0, c.stream>>>(c.in, c.n, c.keep, counts);
  CHECK_LAUNCH();
  // chapter 16's single-pass scan of the counts, in its default tile: clear its ticket and
  // status words, then one block per tile of counts
  const unsigned tickets =
      ch16::tile_count(tiles, ch16::kDefaultBlock, ch16::kDefaultRows, ch16::kVec16<Count>);
  ch16::clear_state(c.state, tickets, c.stream);
  ch16::scan_lookback<Count, ch16::kDefaultRows>
      <<<tickets, ch16::kDefaultBlock, 0, c.stream>>>(counts, offsets, tiles, false, c.state);
  CHECK_LAUNCH();
  scatter<<<tiles, c.tile.block, 0, c.stream>>>(c.in, c.out, c.count, c.n, c.keep, offsets);
  CHECK_LAUNCH();
  return tickets;  // the scan's: this step's own tiles need none
}

}  // namespace
