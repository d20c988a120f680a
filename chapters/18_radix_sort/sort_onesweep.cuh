// Chapter 18's onesweep pieces, shared by 18_radix_sort.cu (step 2) and the steps after it
// (sort_early.cuh, sort_ahead.cuh, sort_match.cu, sort_lean.cu):
//   (sort_histogram.cuh, included here: the histogram passes and the digit bases)
//   PassArgs         what one pass kernel of steps 3 to 5 gets
//   publish_digit, read_digit  a status word per tile and digit: 32 bits (a 2-bit flag,
//                    a 30-bit count: n < 2^30) or, for more keys, 64 (chapter 16's layout)
//   draw_pass_tile   the tile, from one ticket counter for all four passes
//   count_tile       the early count: each warp adds its keys' digits to a row of its own
//   publish_counts   the tile's count of each digit published at once, then where each
//                    warp's keys of each digit go in the tile sorted by digit
//   finish_tile      the look-back, the next pass's status words of the tile zeroed, and
//                    the tile written out in runs of one digit
//   pass_args        the arguments of pass p (launchers)
//   launch_ahead_passes  steps 6 to 10's four passes, each prefetching 4 MiB ahead
#pragma once

#include <algorithm>
#include <cstdint>
#include <cuda/atomic>

#include "chapters/16_scan/scan_lookback.cuh"    // block_exclusive_scan, the status flags
#include "chapters/16_scan/scan_tile_early.cuh"  // the look-back's pauses (kFirstPollNs)
#include "chapters/16_scan/scan_tile_io.cuh"     // l2_ahead_tiles
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "sort_histogram.cuh"  // histogram_and_bases, histogram_vec_and_bases
#include "sort_problem.h"
#include "sort_tile.cuh"

namespace {

using ch18::Count;
using ch18::kDigitBits;
using ch18::kDigits;
using ch18::kPasses;

// --- steps 3 to 5: one pass -----------------------------------------------------------------

// One pass's kernel arguments. The status words are 32 or 64 bits (the kernel's Word); both
// sets lie in Count buffers: the pass reads and writes `status` and zeroes its tile's words
// of `next`, the next pass's (none after the last pass).
struct PassArgs {
  const uint32_t *keys_in, *values_in;  // values_in: nullptr for keys alone
  uint32_t *keys_out, *values_out;
  int64_t n;
  int shift;             // of this pass's digit
  const Count* bases;    // where each digit's keys start in keys_out
  Count* ticket;         // one counter for the four passes, zeroed before the first
  int64_t first_ticket;  // the ticket of this pass's tile 0
  Count *status, *next;
};

// 32-bit words while every count fits in 30 bits: below 2^30 keys; 64-bit words for more.
// (CUB's words are 32 bits always: it sorts each pass in portions of fewer than 2^28 keys,
// a launch each, the next portion's digit places written by the last tile of the one before.)
constexpr int64_t kNarrowMaxKeys = (int64_t{1} << 30) - 1;
inline bool narrow_words(int64_t n) { return n <= kNarrowMaxKeys; }

// A status word: the flag (chapter 16's kInvalid, kAggregate, kInclusive) in the top 2
// bits, the count in the others, stored and loaded as one relaxed device-scope atomic.
template <class Word>
constexpr int kFlagShift = 8 * sizeof(Word) - 2;
template <class Word>
__device__ __forceinline__ void publish_digit(Word* word, unsigned flag, Count count) {
  constexpr Word kCountMask = ~(Word{3} << kFlagShift<Word>);
  cuda::atomic_ref<Word, cuda::thread_scope_device> w(*word);
  w.store(Word{flag} << kFlagShift<Word> | (static_cast<Word>(count) & kCountMask),
          cuda::memory_order_relaxed);
}
template <class Word>
__device__ __forceinline__ ch16::TileStatus read_digit(Word* word) {
  constexpr Word kCountMask = ~(Word{3} << kFlagShift<Word>);
  cuda::atomic_ref<Word, cuda::thread_scope_device> w(*word);
  const Word s = w.load(cuda::memory_order_relaxed);
  return {static_cast<unsigned>(s >> kFlagShift<Word>), Count{s & kCountMask}};
}

// The tile: the next ticket less the tickets of the passes before this one. Tiles of a
// pass start in ticket order, as chapter 16's draw_tile (why not blockIdx.x: see there).
__device__ __forceinline__ int64_t draw_pass_tile(Count* ticket, int64_t first_ticket) {
  __shared__ int64_t tile;
  if (threadIdx.x == 0) tile = static_cast<int64_t>(atomicAdd(ticket, Count{1})) - first_ticket;
  __syncthreads();
  return tile;
}

// The early count, before any ranking: the warp adds 1 to its row of counters (this
// warp's, zeroed here) for each of its keys' digits, one shared atomic a key.
template <int kRows>
__device__ __forceinline__ void count_tile(const uint32_t (&key)[kRows], int shift,
                                           unsigned* warp_counts) {
  for (int d = threadIdx.x % sw::kWarp; d < kDigits; d += sw::kWarp) warp_counts[d] = 0;
  __syncwarp();
#pragma unroll
  for (int r = 0; r < kRows; ++r) atomicAdd(&warp_counts[digit_of(key[r], shift)], 1u);
}

// After every warp's count_tile: thread d < 256 adds up the warps' counts of digit d (the
// padding, digit 255 past n, taken off) and publishes it at once, before any key is ranked
// (tile 0: as its inclusive count); the block scans the counts, and each warp's count of
// digit d becomes where its first key of digit d goes in the tile sorted by digit. Returns
// the count in thread d, *first where digit d starts, *valid the tile's keys (every thread).
template <class Word>
__device__ __forceinline__ unsigned publish_counts(unsigned (*counts)[kDigits], const PassArgs& a,
                                                   int64_t tile, int tile_keys, unsigned* first,
                                                   unsigned* valid) {
  const unsigned d = threadIdx.x;
  const int warps = blockDim.x / sw::kWarp;
  __syncthreads();
  unsigned count = 0;
  if (d < kDigits) {
    for (int w = 0; w < warps; ++w) count += counts[w][d];
    const int64_t end = (tile + 1) * tile_keys;
    if (d == kDigits - 1 && end > a.n) count -= static_cast<unsigned>(end - a.n);
    publish_digit(reinterpret_cast<Word*>(a.status) + tile * kDigits + d,
                  tile ? ch16::kAggregate : ch16::kInclusive, count);
  }
  *first = ch16::block_exclusive_scan(d < kDigits ? count : 0u, valid);
  if (d < kDigits) {
    unsigned run = *first;
    for (int w = 0; w < warps; ++w) {
      const unsigned c = counts[w][d];
      counts[w][d] = run;
      run += c;
    }
  }
  __syncthreads();
  return count;
}

// Thread d's look-back: the keys of digit d in the tiles before this one (their counts
// back to the nearest inclusive one), one word per tile and digit, one tile after the
// other; publishes the inclusive count and returns the keys before. With `pauses` (step
// 7), it sleeps chapter 16's kFirstPollNs before its first poll and kPollPauseNs after
// each poll that finds a word not yet published.
template <class Word>
__device__ __forceinline__ Count lookback_digit(Word* status, int64_t tile, unsigned digit,
                                                unsigned count, bool pauses) {
  Count before = 0;
  if (pauses) __nanosleep(ch16::kFirstPollNs);
  for (int64_t t = tile - 1; t >= 0; --t) {
    ch16::TileStatus s = read_digit(status + t * kDigits + digit);
    while (s.flag == ch16::kInvalid) {
      if (pauses) __nanosleep(ch16::kPollPauseNs);
      s = read_digit(status + t * kDigits + digit);
    }
    before += s.bits;
    if (s.flag == ch16::kInclusive) break;
  }
  publish_digit(status + tile * kDigits + digit, ch16::kInclusive, before + count);
  return before;
}

// Once the tile sits sorted by digit in `sorted` (keys, then values at tile_keys): thread
// d < 256 looks back (tile 0 needs not: it published its inclusive counts) and zeroes this
// tile's word of digit d for the next pass (`pauses`: lookback_digit's); then the tile's
// valid keys go out in runs of one digit, key i of the sorted tile to its digit's place in
// keys_out plus i.
template <bool kPairs, class Word>
__device__ __forceinline__ void finish_tile(const PassArgs& a, int64_t tile, unsigned count,
                                            unsigned first, const uint32_t* sorted, int tile_keys,
                                            unsigned valid, bool pauses = false) {
  __shared__ Count place[kDigits];  // digit d's place in keys_out, less where it starts here
  const unsigned d = threadIdx.x;
  if (d < kDigits) {
    const Count before =
        tile ? lookback_digit(reinterpret_cast<Word*>(a.status), tile, d, count, pauses) : 0;
    place[d] = a.bases[d] + before - first;  // modulo 2^64: + i brings it back
    if (a.next) reinterpret_cast<Word*>(a.next)[tile * kDigits + d] = 0;
  }
  __syncthreads();
  for (unsigned i = threadIdx.x; i < valid; i += blockDim.x) {
    const uint32_t key = sorted[i];
    const Count at = place[digit_of(key, a.shift)] + i;
    a.keys_out[at] = key;
    if (kPairs) a.values_out[at] = sorted[tile_keys + i];
  }
}

// Pass p of a sort of `tiles` tiles: its buffers (chapter 18's PassBuffers), its digit's
// bases, the ticket counter state[0], and the two sets of status words, after the ticket
// (state) and in scratch, used in turn: pass p zeroes the set pass p + 1 uses.
inline PassArgs pass_args(const ch18::SortCall& c, const Count* bases, int p, int64_t tiles) {
  const ch18::PassBuffers b = ch18::pass_buffers(c, p);
  Count* sets[2] = {c.state + 1, c.scratch};
  return {b.keys_in,
          b.values_in,
          b.keys_out,
          b.values_out,
          c.n,
          p * kDigitBits,
          bases + p * kDigits,
          c.state,
          p * tiles,
          sets[p % 2],
          p + 1 < kPasses ? sets[(p + 1) % 2] : nullptr};
}

// Zeroes the ticket and the first pass's status words (32 or 64 bits each) on c.stream.
inline void clear_first_pass(const ch18::SortCall& c, int64_t tiles) {
  const size_t word = narrow_words(c.n) ? sizeof(uint32_t) : sizeof(Count);
  CUDA_CHECK(cudaMemsetAsync(c.state, 0, sizeof(Count) + word * kDigits * tiles, c.stream));
}

// The passes of steps 6 to 9, after their histogram pass: their sorted tile's shared memory
// allowed, the first pass's words zeroed, then the four passes, each told how many tiles
// ahead to prefetch (the tiles that 4 MiB of keys, or of keys and values, cover).
// odd_pass: the kernel of passes 1 and 3 when it is not `pass` (step 10).
using AheadPass = void (*)(const PassArgs, int64_t);
inline void launch_ahead_passes(const ch18::SortCall& c, AheadPass pass, const Count* bases,
                                AheadPass odd_pass = nullptr) {
  const int64_t tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, 1);
  const bool pairs = c.values_in != nullptr;
  const int64_t tile_keys = int64_t{c.tile.block} * c.tile.rows;
  const int64_t ahead = ch16::l2_ahead_tiles(tile_keys, sizeof(uint32_t) * (pairs ? 2 : 1));
  const size_t sorted_bytes = sizeof(uint32_t) * tile_keys * (pairs ? 2 : 1);
  if (odd_pass == nullptr) odd_pass = pass;
  ch16::allow_shared(pass, sorted_bytes);
  ch16::allow_shared(odd_pass, sorted_bytes);
  clear_first_pass(c, tiles);
  for (int p = 0; p < kPasses; ++p) {
    const AheadPass kernel = p % 2 ? odd_pass : pass;
    kernel<<<tiles, c.tile.block, sorted_bytes, c.stream>>>(pass_args(c, bases, p, tiles), ahead);
    CHECK_LAUNCH();
  }
  *c.tickets = kPasses * tiles;
}

}  // namespace
