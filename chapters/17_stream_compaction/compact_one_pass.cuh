// Chapter 17's step 2 (one-pass), included by 17_stream_compaction.cu: one kernel
// draws a ticket, publishes its tile's count, takes its offset from chapter 16's
// decoupled look-back and scatters the tile's kept elements.
#pragma once

#include <cstdint>

#include "chapters/16_scan/scan_lookback.cuh"
#include "common/check.h"
#include "compact_tile.cuh"

namespace {

using ch16::Count;

// --- step 2: one pass, the offset from the look-back ------------------------------------------

template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    compact_one_pass(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, Count* count,
                     int64_t n, KeepBelow keep, Count* state) {
  const int64_t tile = ch16::draw_tile(state);
  compact_tile<kRows>(in, out, n, tile, keep, [&](Count kept) {
    const Count offset =
        ch16::lookback_prefix<Count, ch16::Lookback::kDecoupled>(state + 1, tile, kept);
    if (tile == gridDim.x - 1 && threadIdx.x == 0) *count = offset + kept;
    return offset;
  });
}

// Zeroes the ticket and status words, launches the kernel compiled for the tile's rows;
// returns the tiles: the tickets it must draw.
int64_t launch_one_pass(const CompactCall& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, kVec);
  ch16::clear_state(c.state, tiles, c.stream);
  const auto kernel = ch16::ScanRows::pick(
      c.tile.rows, [](auto r) { return compact_one_pass<decltype(r)::value>; });
  kernel<<<tiles, c.tile.block, 0, c.stream>>>(c.in, c.out, c.count, c.n, c.keep, c.state);
  CHECK_LAUNCH();
  return tiles;
}

}  // namespace
