// Chapter 18, steps 4 and 5: onesweep-early (step 3) with less work a key, then with a
// histogram pass at DRAM speed. Each is one change on the step before:
//   onesweep-match  the ranking: step 3 finds a key's peers (the lanes of its row with
//                   the same digit) with eight __ballot_sync and logic, and the lowest
//                   peer reads and advances the warp's counter, a __syncwarp between rows.
//                   Here __match_any_sync gives the peers in one instruction, and the
//                   highest peer advances the counter with one shared atomicAdd, which
//                   returns where the group starts: no __syncwarp, rows no longer wait on
//                   each other's stores. With fewer registers a key (no ballots, no rank
//                   kept: a key goes to the sorted tile as soon as it is ranked) the kernel
//                   is bound to kMatchThreadsPerSm threads an SM (__launch_bounds__: 56
//                   registers at 384 threads, 36 warps an SM, CUB's count), and its own
//                   tile is CUB's sm_90 one, 384 threads x 20 keys (sort_steps.h).
//   onesweep-hist   + the histogram of all four digits at DRAM speed (histogram_vec): 16
//                   keys a thread in flight (four 16-byte loads) before any is counted, and
//                   a copy of the 4 x 256 counters for each lane of a warp, so that the
//                   warp's 32 shared atomics never meet in a bank (step 2's histogram_all:
//                   one 4-byte load a thread in flight, one copy a block; about 38 % of
//                   the DRAM peak on the H100, CUB's 67 %).
// Both sort with 32-bit status words below 2^30 keys, else 64-bit (sort_onesweep.cuh).
#include <cstdint>

#include "chapters/16_scan/scan_launch.cuh"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "sort_onesweep.cuh"  // the early count, the status words, the look-back, the write-out
#include "sort_problem.h"
#include "sort_steps.h"
#include "sort_tile.cuh"

namespace {

// --- step 4: onesweep-match ------------------------------------------------------------------

// This lane's key's place in the tile sorted by digit: counts[digit] (where the warp's next
// key of that digit goes, from publish_counts) plus its peers below it in the row. One
// shared atomic of the highest peer advances the counter by the group and returns its
// start; the shuffle hands it to the peers. The next row's atomic comes after this one in
// the warp's order, so keys of the same digit keep their index order: the sort is stable.
__device__ __forceinline__ unsigned rank_by_match(unsigned digit, unsigned* counts) {
  const int lane = threadIdx.x % sw::kWarp;
  const unsigned peers = __match_any_sync(sw::kFullMask, digit);
  const unsigned upto = __popc(peers & ((2u << lane) - 1));  // peers at or below this lane
  const int highest = sw::kWarp - 1 - __clz(peers);
  unsigned start = 0;
  if (lane == highest) start = atomicAdd(&counts[digit], upto);
  return __shfl_sync(sw::kFullMask, start, highest) + upto - 1;
}

// Registers for this many resident threads an SM: 65536 / 1152, 56 a thread at 384 (3
// blocks). __launch_bounds__'s minimum of blocks is per kernel: one kernel per block size.
constexpr int kMatchThreadsPerSm = 1152;
// Steps 4 and 5 measured slower than step 3 at every tile the sweep at 4c196e1 tried
// (docs/18): they are compiled for their own tile only (kMatchRows x kMatchBlock), which
// keeps the build short; the step table says so (OwnTile::rows_compiled).
using MatchRows = ch16::Choices<ch18::kMatchRows>;
using MatchBlocks = ch16::Choices<ch18::kMatchBlock>;

template <int kRows, int kBlock, bool kPairs, class Word>
__global__ void __launch_bounds__(kBlock, kMatchThreadsPerSm / kBlock)
    onesweep_match_pass(const PassArgs a) {
  constexpr int kTileKeys = kBlock * kRows;
  extern __shared__ uint32_t sorted[];                      // keys, then values
  __shared__ unsigned counts[kBlock / sw::kWarp][kDigits];  // per warp: counts, then places
  const int64_t tile = draw_pass_tile(a.ticket, a.first_ticket);
  const int warp = threadIdx.x / sw::kWarp;
  uint32_t key[kRows], value[kRows];
  load_tile<kRows, kPairs>(a.keys_in, a.values_in, a.n, tile, key, value);
  count_tile<kRows>(key, a.shift, counts[warp]);
  unsigned first, valid;
  const unsigned count = publish_counts<Word>(counts, a, tile, kTileKeys, &first, &valid);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const unsigned at = rank_by_match(digit_of(key[r], a.shift), counts[warp]);
    sorted[at] = key[r];
    if (kPairs) sorted[kTileKeys + at] = value[r];
  }
  finish_tile<kPairs, Word>(a, tile, count, first, sorted, kTileKeys, valid);
}

// The pass kernel compiled for the tile (rows and block), pairs or keys, and the words.
using PassKernel = void (*)(const PassArgs);
PassKernel match_pass(const ch18::SortCall& c) {
  const bool pairs = c.values_in != nullptr, narrow = narrow_words(c.n);
  return MatchRows::pick(c.tile.rows, [&](auto r) {
    return MatchBlocks::pick(c.tile.block, [&](auto b) {
      constexpr int kRows = decltype(r)::value, kBlock = decltype(b)::value;
      if (pairs)
        return narrow ? onesweep_match_pass<kRows, kBlock, true, uint32_t>
                      : onesweep_match_pass<kRows, kBlock, true, Count>;
      return narrow ? onesweep_match_pass<kRows, kBlock, false, uint32_t>
                    : onesweep_match_pass<kRows, kBlock, false, Count>;
    });
  });
}
size_t sorted_bytes(const ch18::SortCall& c) {
  return sizeof(uint32_t) * c.tile.block * c.tile.rows * (c.values_in ? 2 : 1);
}

// --- step 5: onesweep-hist ----------------------------------------------------------------

}  // namespace

namespace ch18 {

// Step 4, step 3's launcher with the pass ranking by match: the histogram pass and bases,
// the first pass's words zeroed, the four passes.
void launch_onesweep_match(const SortCall& c) {
  const int64_t tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, 1);
  const PassKernel pass = match_pass(c);
  ch16::allow_shared(pass, sorted_bytes(c));
  const Count* bases = histogram_and_bases(c);
  clear_first_pass(c, tiles);
  for (int p = 0; p < kPasses; ++p) {
    pass<<<tiles, c.tile.block, sorted_bytes(c), c.stream>>>(pass_args(c, bases, p, tiles));
    CHECK_LAUNCH();
  }
  *c.tickets = kPasses * tiles;
}

// Step 5, step 4's launcher with histogram_vec (sort_onesweep.cuh).
void launch_onesweep_hist(const SortCall& c) {
  const int64_t tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, 1);
  const PassKernel pass = match_pass(c);
  ch16::allow_shared(pass, sorted_bytes(c));
  const Count* bases = histogram_vec_and_bases(c);
  clear_first_pass(c, tiles);
  for (int p = 0; p < kPasses; ++p) {
    pass<<<tiles, c.tile.block, sorted_bytes(c), c.stream>>>(pass_args(c, bases, p, tiles));
    CHECK_LAUNCH();
  }
  *c.tickets = kPasses * tiles;
}

}  // namespace ch18
