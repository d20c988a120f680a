// Chapter 16's one-pass steps 6 to 8, included by 16_scan.cu: tiles by ticket, each
// tile's prefix from its predecessors (chained or decoupled look-back, scan_lookback.cuh),
// with a 4-byte load per lane and row, or 16-byte loads (the header's scan_lookback and
// its launcher launch_scan_lookback, which the step table names directly).
#pragma once

#include <cstdint>

#include "common/check.h"
#include "common/scan_harness.h"
#include "scan_lookback.cuh"

namespace {

namespace sc = sw::scan;
using ch16::Count;
using ch16::Lookback;

// --- steps 6 to 8: one pass, tiles by ticket, a prefix from the predecessors -----------------

// chained and decoupled-lookback: one pass, a 4-byte load per lane and row; kMode
// says how the tile gets its prefix (chapter 16's lookback_prefix).
template <class T, int kRows, Lookback kMode>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    scan_one_pass(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                  Count* state) {
  ch16::single_pass<T, 1, kRows, kMode>(in, out, n, inclusive, state);
}
// Zeroes the ticket and status words, launches the kernel compiled for c.rows over the
// tiles of n; returns the tiles: the tickets it must draw.
template <class T, Lookback kMode>
int64_t launch_one_pass(const sc::ScanCall<T>& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.block, c.rows, 1);
  ch16::clear_state(c.state, tiles, c.stream);
  const auto kernel = ch16::ScanRows::pick(
      c.rows, [](auto r) { return scan_one_pass<T, decltype(r)::value, kMode>; });
  kernel<<<tiles, c.block, 0, c.stream>>>(c.in, c.out, c.n, c.inclusive, c.state);
  CHECK_LAUNCH();
  return tiles;
}

// lookback-vec's kernel and launcher are the header's scan_lookback and
// launch_scan_lookback: chapters 17 and 18 launch the kernel too.

}  // namespace
