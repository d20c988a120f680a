// Chapter 18, steps 6 and 7, included by 18_radix_sort.cu below sort_early.cuh: onesweep-early
// (step 3: its tile, early_tile, unchanged) with chapter 16's two answers to the wait of a
// decoupled look-back, each one change on the step before:
//   onesweep-ahead  the L2 prefetch: thread 0 of each tile first asks the L2 for the keys
//                   (and values) of the tile `ahead` tiles later in the same pass, one
//                   cp.async.bulk.prefetch.L2 each (chapter 16's prefetch_tile_l2), about
//                   4 MiB ahead (l2_ahead_tiles). A block spends most of a tile ranking and
//                   waiting, not loading: the DRAM reads of the pass no longer wait for a
//                   block to start its loads, and a tile's own loads find its keys in the L2.
//                   (Chapter 16's scan: 79 -> 92 % of copy; chapter 17's compaction.)
//   onesweep-pause  + the per-digit look-back (lookback_digit) sleeps kFirstPollNs before its
//                   first poll and kPollPauseNs after each poll that finds a tile's word not
//                   yet published (chapter 16's lookback-backoff; CUB's onesweep polls
//                   without pauses); a pass of fewer than kPauseMinTiles tiles, as at 2^20
//                   keys, polls without them.
// Both sort with 32-bit status words below 2^30 keys, else 64-bit (sort_onesweep.cuh).
#pragma once

#include <cstdint>

#include "chapters/16_scan/scan_launch.cuh"
#include "chapters/16_scan/scan_tile_early.cuh"  // kPauseMinTiles
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "sort_early.cuh"     // early_tile: step 3's tile
#include "sort_onesweep.cuh"  // the histogram pass, the status words, the look-back
#include "sort_problem.h"
#include "sort_tile.cuh"

namespace {

// Asks the L2 for the keys (and values) of tile `tile + ahead` of this pass, if it lies
// before n; nothing waits for them.
template <bool kPairs>
__device__ __forceinline__ void prefetch_ahead(const PassArgs& a, int64_t tile, int64_t ahead,
                                               int tile_keys) {
  ch16::prefetch_tile_l2(a.keys_in, a.n, tile + ahead, tile_keys);
  if (kPairs) ch16::prefetch_tile_l2(a.values_in, a.n, tile + ahead, tile_keys);
}

// --- step 6: onesweep-ahead -------------------------------------------------------------------

template <int kRows, bool kPairs, class Word>
__global__ void __launch_bounds__(kMaxSortBlock)
    onesweep_ahead_pass(const PassArgs a, int64_t ahead) {
  const int64_t tile = draw_pass_tile(a.ticket, a.first_ticket);
  prefetch_ahead<kPairs>(a, tile, ahead, blockDim.x * kRows);
  early_tile<kRows, kPairs, Word>(a, tile, false);
}

// --- step 7: onesweep-pause -------------------------------------------------------------------

template <int kRows, bool kPairs, class Word>
__global__ void __launch_bounds__(kMaxSortBlock)
    onesweep_pause_pass(const PassArgs a, int64_t ahead) {
  const int64_t tile = draw_pass_tile(a.ticket, a.first_ticket);
  prefetch_ahead<kPairs>(a, tile, ahead, blockDim.x * kRows);
  early_tile<kRows, kPairs, Word>(a, tile, gridDim.x >= ch16::kPauseMinTiles);
}

// The pass kernel of step 6 (kPause false) or 7, compiled for the tile's rows, pairs or
// keys, and 32- or 64-bit status words.
template <bool kPause>
AheadPass ahead_pass(const ch18::SortCall& c) {
  const bool pairs = c.values_in != nullptr, narrow = narrow_words(c.n);
  return SortRows::pick(c.tile.rows, [&](auto r) -> AheadPass {
    constexpr int kRows = decltype(r)::value;
    if (kPause) {
      if (pairs)
        return narrow ? onesweep_pause_pass<kRows, true, uint32_t>
                      : onesweep_pause_pass<kRows, true, Count>;
      return narrow ? onesweep_pause_pass<kRows, false, uint32_t>
                    : onesweep_pause_pass<kRows, false, Count>;
    }
    if (pairs)
      return narrow ? onesweep_ahead_pass<kRows, true, uint32_t>
                    : onesweep_ahead_pass<kRows, true, Count>;
    return narrow ? onesweep_ahead_pass<kRows, false, uint32_t>
                  : onesweep_ahead_pass<kRows, false, Count>;
  });
}

// Step 3's launcher with the pass of step 6 or 7: the histogram pass and bases, then the
// four passes (launch_ahead_passes).
template <bool kPause>
void launch_ahead(const ch18::SortCall& c) {
  const AheadPass pass = ahead_pass<kPause>(c);
  launch_ahead_passes(c, pass, histogram_and_bases(c));
}

void launch_onesweep_ahead(const ch18::SortCall& c) { launch_ahead<false>(c); }
void launch_onesweep_pause(const ch18::SortCall& c) { launch_ahead<true>(c); }

}  // namespace
