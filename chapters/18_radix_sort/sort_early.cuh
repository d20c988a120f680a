// Chapter 18, step 3: onesweep-early, included by 18_radix_sort.cu below rank_in_warp, the
// ranking it keeps. onesweep (step 2) publishes a tile's counts only after the whole
// ranking, and the tiles after it wait for them in their look-back; its status words are
// 64 bits, one per tile and digit (89.5 MB a pass at 2^28 keys in tiles of 6,144, more
// than the H100's 50 MB L2), zeroed by a memset before every pass. One change here, in
// three parts, all about the look-back's wait and traffic:
//   - the early count: each warp counts its keys' digits first (count_tile, one shared
//     atomic a key), and the block publishes the tile's count of every digit at once,
//     before any key is ranked (publish_counts). The counts also give each warp where its
//     keys of each digit start in the tile sorted by digit, so rank_in_warp, unchanged,
//     now returns a key's place there, and the block's second pass over the counters
//     (rank_tile's) is gone.
//   - 32-bit status words: a 2-bit flag and a 30-bit count, enough below 2^30 keys (more
//     keys, as the large suite's 2^31 + 17, take 64-bit words: the same kernel with
//     another Word): half the bytes, about 45 MB a pass at 2^28 keys.
//   - no memset between passes: two sets of status words used in turn, each tile of pass
//     p zeroing its words of the set pass p + 1 uses; one memset before the first pass
//     zeroes the ticket (one counter for all four passes) and the first set.
// The tile, the look-back and the write-out are step 2's (sort_onesweep.cuh).
#pragma once

#include <cstdint>

#include "chapters/16_scan/scan_launch.cuh"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "sort_onesweep.cuh"  // the early count, the status words, the look-back, the write-out
#include "sort_problem.h"
#include "sort_tile.cuh"

namespace {

// The tile's work after its ticket: the loads, the early count published, each key ranked
// straight to its place in the tile sorted by digit, the look-back and the write-out.
// `pauses`: the look-back pauses before and between polls (step 7; steps 3 and 6: false).
template <int kRows, bool kPairs, class Word>
__device__ __forceinline__ void early_tile(const PassArgs& a, int64_t tile, bool pauses) {
  extern __shared__ uint32_t sorted[];                 // the tile by digit: keys, then values
  __shared__ unsigned counts[kMaxSortWarps][kDigits];  // per warp: its counts, then places
  const int warp = threadIdx.x / sw::kWarp, tile_keys = blockDim.x * kRows;
  uint32_t key[kRows], value[kRows];
  load_tile<kRows, kPairs>(a.keys_in, a.values_in, a.n, tile, key, value);
  count_tile<kRows>(key, a.shift, counts[warp]);
  unsigned first, valid;
  const unsigned count = publish_counts<Word>(counts, a, tile, tile_keys, &first, &valid);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {  // each key straight to its place in the sorted tile
    const unsigned at = rank_in_warp(digit_of(key[r], a.shift), counts[warp]);
    sorted[at] = key[r];
    if (kPairs) sorted[tile_keys + at] = value[r];
  }
  finish_tile<kPairs, Word>(a, tile, count, first, sorted, tile_keys, valid, pauses);
}

template <int kRows, bool kPairs, class Word>
__global__ void __launch_bounds__(kMaxSortBlock) onesweep_early_pass(const PassArgs a) {
  early_tile<kRows, kPairs, Word>(a, draw_pass_tile(a.ticket, a.first_ticket), false);
}

// Step 2's histogram pass and bases, the first pass's words zeroed, then the four passes,
// compiled for the tile's rows, pairs or keys, and 32- or 64-bit status words.
void launch_onesweep_early(const ch18::SortCall& c) {
  const int64_t tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, 1);
  const bool pairs = c.values_in != nullptr, narrow = narrow_words(c.n);
  const auto pass = SortRows::pick(c.tile.rows, [&](auto r) {
    constexpr int kRows = decltype(r)::value;
    if (pairs)
      return narrow ? onesweep_early_pass<kRows, true, uint32_t>
                    : onesweep_early_pass<kRows, true, Count>;
    return narrow ? onesweep_early_pass<kRows, false, uint32_t>
                  : onesweep_early_pass<kRows, false, Count>;
  });
  const size_t sorted_bytes = sizeof(uint32_t) * c.tile.block * c.tile.rows * (pairs ? 2 : 1);
  ch16::allow_shared(pass, sorted_bytes);
  const Count* bases = histogram_and_bases(c);
  clear_first_pass(c, tiles);
  for (int p = 0; p < kPasses; ++p) {
    pass<<<tiles, c.tile.block, sorted_bytes, c.stream>>>(pass_args(c, bases, p, tiles));
    CHECK_LAUNCH();
  }
  *c.tickets = kPasses * tiles;
}

}  // namespace
