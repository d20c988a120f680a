// Chapter 18: LSD radix sort of 32-bit keys and key-value pairs, 8-bit digits.
//
// What changed:  a radix sort is, per digit, a histogram (chapter 08), a scan
//                (chapter 16) and a scatter. The scatter must be stable: keys with
//                the same digit keep their order, or the digits sorted by earlier
//                passes are lost. A tile's keys (row r of a warp: 32 consecutive
//                keys, one a lane) are ranked in index order: eight __ballot_sync
//                give each lane the lanes with its digit, __popc of those below it
//                its place in the row, and a counter per digit in shared memory the
//                rows before (rank_in_warp); the warps then add up per digit.
//   three-kernel  per digit: each tile counts its digits into a 256 x tiles matrix,
//                 chapter 16's look-back scan turns it into offsets (digit-major: all
//                 of digit 0 first), each tile is read again and every key written
//                 straight to its offset plus its rank: scattered 4-byte stores.
//   onesweep      one histogram pass for all four digits (Adinets and Merrill, 2022),
//                 then per digit one kernel: a ticket, the ranks, each thread one
//                 digit's look-back over the earlier tiles (chapter 16's status words),
//                 the tile reordered by digit in shared memory, then written out in
//                 runs. The default run sweeps its tile.
//   Steps 3 to 5 cut the work and the wait of a tile, each one change on the one before:
//   onesweep-early  (sort_early.cuh) each warp counts its digits first and the tile's
//                   counts are published before the ranking; 32-bit status words below
//                   2^30 keys, zeroed by the pass before instead of a memset a pass.
//   onesweep-match  (sort_match.cu) the ranking by __match_any_sync and a shared atomic,
//                   registers bound for 36 warps an SM, CUB's tile (20 keys x 384).
//   onesweep-hist   + the histogram pass at DRAM speed: 16-byte loads, 16 keys in
//                   flight a thread, a copy of the counters per lane.
//   Steps 6 and 7 go back to step 3 (steps 4 and 5 measured slower, docs/18):
//   onesweep-ahead  (sort_ahead.cuh) each tile first prefetches the keys (and values) of
//                   the tile about 4 MiB ahead into the L2 (chapter 16's step 15).
//   onesweep-pause  + the look-back pauses before its first poll and between polls.
//   Steps 8 and 9 go back to step 6 (the pauses gave nothing), in sort_lean.cu:
//   onesweep-lean       the same tile in fewer instructions and registers a key: its shape
//                       compiled in, no bound checks but in the last tile, a digit in one
//                       instruction, four a ballot bit, 32-bit places, 3 blocks an SM.
//   onesweep-lean-hist  + step 5's histogram pass.
//   onesweep-packed     + pairs as one 8-byte word a key in the scratch buffer.
//                cub::DeviceRadixSort in the same run; GKey/s (extra gkeys_s) next to
//                the GB/s of one read and one write of every key (and value). The
//                inputs, the reference, the checks and the rows: sort_problem.cu.
// Bottleneck:    DRAM: four passes read and write every key (and value).
// Steps:         three-kernel, onesweep, onesweep-early, onesweep-match, onesweep-hist,
//                onesweep-ahead, onesweep-pause, onesweep-lean, onesweep-lean-hist,
//                onesweep-packed
// Run:           build/chapters/18_radix_sort [--n 2^28 [--verify-only] | --verify-only --large]
//                [--sort keys|pairs] [--variant onesweep] [--tile-rows 16 --block 256] [--json]
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/16_scan/scan_lookback.cuh"  // chapter 16's scan, ticket and status words
#include "common/bench/program.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "sort_onesweep.cuh"  // step 2's histogram pass and bases; steps 3 to 5's pieces
#include "sort_problem.h"
#include "sort_steps.h"   // steps 4 and 5 (sort_match.cu)
#include "sort_tile.cuh"  // the tile in memory: its shapes, which key a lane holds, its loads

namespace {

using ch18::Count;
using ch18::kDigitBits;
using ch18::kDigits;
using ch18::kPasses;
using ch18::PassBuffers;

// --- ranking a tile: the heart of a stable scatter ---------------------------------------

// This lane's key among the warp's keys with the same digit, in index order: the
// keys of earlier rows first (counts[digit]: the warp's running count), then the
// lanes below in this row. All 32 lanes call it; counts is this warp's row of counters.
__device__ __forceinline__ unsigned rank_in_warp(unsigned digit, unsigned* counts) {
  // lab digit-scatter: begin
  const int lane = threadIdx.x % sw::kWarp;
  unsigned same = sw::kFullMask;  // the lanes whose digit equals mine, bit by bit
#pragma unroll
  for (int b = 0; b < kDigitBits; ++b) {
    const unsigned ones = __ballot_sync(sw::kFullMask, digit >> b & 1);
    same &= digit >> b & 1 ? ones : ~ones;
  }
  const int leader = __ffs(same) - 1;
  const unsigned below = __popc(same & ((1u << lane) - 1));
  unsigned base = 0;
  if (lane == leader) {
    base = counts[digit];
    counts[digit] = base + __popc(same);
  }
  base = __shfl_sync(sw::kFullMask, base, leader);
  __syncwarp();
  return base + below;
  // lab digit-scatter: end
}

// Ranks every key of the tile among the tile's keys of its digit, in index order.
// Returns, in thread d < 256, how many of the tile's keys (before n) have digit d.
template <int kRows>
__device__ __forceinline__ unsigned rank_tile(const uint32_t (&key)[kRows], int64_t n, int64_t tile,
                                              int shift, unsigned (&rank)[kRows]) {
  __shared__ unsigned counts[kMaxSortWarps][kDigits];  // per warp, per digit
  const int warp = threadIdx.x / sw::kWarp, lane = threadIdx.x % sw::kWarp;
  for (int d = lane; d < kDigits; d += sw::kWarp) counts[warp][d] = 0;
  __syncwarp();
#pragma unroll
  for (int r = 0; r < kRows; ++r) rank[r] = rank_in_warp(digit_of(key[r], shift), counts[warp]);
  __syncthreads();
  unsigned total = 0;  // the warps' counts of my digit become offsets, warp by warp
  if (threadIdx.x < kDigits) {
    for (int w = 0; w < static_cast<int>(blockDim.x / sw::kWarp); ++w) {
      const unsigned c = counts[w][threadIdx.x];
      counts[w][threadIdx.x] = total;
      total += c;
    }
    const int64_t end = (tile + 1) * blockDim.x * kRows;
    if (threadIdx.x == kDigits - 1 && end > n)
      total -= static_cast<unsigned>(end - n);  // the padding
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRows; ++r) rank[r] += counts[warp][digit_of(key[r], shift)];
  return total;
}

// --- step 1: per digit, a histogram per tile, a scan, a scatter -------------------------------

template <int kRows>
__global__ void __launch_bounds__(kMaxSortBlock)
    histogram_tiles(const uint32_t* __restrict__ keys, int64_t n, int shift, Count* counts,
                    int64_t tiles) {
  __shared__ unsigned h[kDigits];
  for (int d = threadIdx.x; d < kDigits; d += blockDim.x) h[d] = 0;
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t i = key_index<kRows>(blockIdx.x, r);
    if (i < n) atomicAdd(&h[digit_of(keys[i], shift)], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < kDigits; d += blockDim.x) counts[d * tiles + blockIdx.x] = h[d];
}

template <int kRows, bool kPairs>
__global__ void __launch_bounds__(kMaxSortBlock)
    scatter_tiles(const uint32_t* __restrict__ keys_in, const uint32_t* __restrict__ values_in,
                  uint32_t* keys_out, uint32_t* values_out, int64_t n, int shift,
                  const Count* __restrict__ offsets, int64_t tiles) {
  __shared__ Count base[kDigits];
  uint32_t key[kRows], value[kRows];
  unsigned rank[kRows];
  load_tile<kRows, kPairs>(keys_in, values_in, n, blockIdx.x, key, value);
  if (threadIdx.x < kDigits) base[threadIdx.x] = offsets[threadIdx.x * tiles + blockIdx.x];
  rank_tile<kRows>(key, n, blockIdx.x, shift, rank);  // its barriers publish base too
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    if (key_index<kRows>(blockIdx.x, r) >= n) continue;
    const Count at = base[digit_of(key[r], shift)] + rank[r];
    keys_out[at] = key[r];
    if (kPairs) values_out[at] = value[r];
  }
}

// Per digit: the histogram, chapter 16's scan of the counts and the scatter; the
// tickets are those of the last digit's scan.
void launch_three_kernel(const ch18::SortCall& c) {
  const int64_t tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, 1);
  Count* counts = c.scratch;
  Count* offsets =
      c.scratch + sw::ceil_div(kDigits * tiles, 2) * 2;  // 16-byte aligned for the scan
  const auto histogram =
      SortRows::pick(c.tile.rows, [](auto r) { return histogram_tiles<decltype(r)::value>; });
  const auto scatter = SortRows::pick(c.tile.rows, [&](auto r) {
    return c.values_in ? scatter_tiles<decltype(r)::value, true>
                       : scatter_tiles<decltype(r)::value, false>;
  });
  int64_t tickets = 0;
  for (int p = 0; p < kPasses; ++p) {
    const PassBuffers b = ch18::pass_buffers(c, p);
    histogram<<<tiles, c.tile.block, 0, c.stream>>>(b.keys_in, c.n, p * kDigitBits, counts, tiles);
    CHECK_LAUNCH();
    // chapter 16's single-pass scan of the counts, digit-major, in its default tile
    tickets = ch16::tile_count(kDigits * tiles, ch16::kDefaultBlock, ch16::kDefaultRows,
                               ch16::kVec16<Count>);
    ch16::clear_state(c.state, tickets, c.stream);
    ch16::scan_lookback<Count, ch16::kDefaultRows><<<tickets, ch16::kDefaultBlock, 0, c.stream>>>(
        counts, offsets, kDigits * tiles, false, c.state);
    CHECK_LAUNCH();
    scatter<<<tiles, c.tile.block, 0, c.stream>>>(b.keys_in, b.values_in, b.keys_out, b.values_out,
                                                  c.n, p * kDigitBits, offsets, tiles);
    CHECK_LAUNCH();
  }
  *c.tickets = tickets;
}

// --- step 2: one histogram pass, then one pass per digit with the look-back -------------------

// Thread d's look-back: the keys of digit d in the tiles before this one (their
// aggregates back to the nearest inclusive count), on chapter 16's status words,
// one word per tile and digit. Publishes the inclusive count; returns the prefix.
__device__ __forceinline__ Count digit_lookback(Count* status, int64_t tile, unsigned digit,
                                                unsigned count) {
  Count before = 0;
  for (int64_t t = tile - 1; t >= 0; --t) {
    ch16::TileStatus s;
    do {
      s = ch16::read_status(status + t * kDigits + digit);
    } while (s.flag == ch16::kInvalid);
    before += s.bits;
    if (s.flag == ch16::kInclusive) break;
  }
  ch16::publish(status + tile * kDigits + digit, ch16::kInclusive, before + count);
  return before;
}

template <int kRows, bool kPairs>
__global__ void __launch_bounds__(kMaxSortBlock)
    onesweep_pass(const uint32_t* __restrict__ keys_in, const uint32_t* __restrict__ values_in,
                  uint32_t* keys_out, uint32_t* values_out, int64_t n, int shift,
                  const Count* __restrict__ bases, Count* state) {
  extern __shared__ uint32_t sorted[];  // the tile by digit: keys, then (pairs) values
  __shared__ unsigned start[kDigits];   // where each digit begins in `sorted`
  __shared__ Count global[kDigits];     // where each digit's keys of this tile go in keys_out
  const int64_t tile = ch16::draw_tile(state);
  Count* status = state + 1;
  uint32_t key[kRows], value[kRows];
  unsigned rank[kRows];
  load_tile<kRows, kPairs>(keys_in, values_in, n, tile, key, value);
  const unsigned count = rank_tile<kRows>(key, n, tile, shift, rank);
  const unsigned d = threadIdx.x;
  if (d < kDigits)
    ch16::publish(status + tile * kDigits + d, tile ? ch16::kAggregate : ch16::kInclusive, count);
  unsigned valid;
  const unsigned mine = ch16::block_exclusive_scan(d < kDigits ? count : 0u, &valid);
  if (d < kDigits) start[d] = mine;
  __syncthreads();
  const int tile_keys = blockDim.x * kRows;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {  // reorder by digit, in shared memory
    const unsigned at = start[digit_of(key[r], shift)] + rank[r];
    sorted[at] = key[r];
    if (kPairs) sorted[tile_keys + at] = value[r];
  }
  if (d < kDigits) global[d] = bases[d] + (tile ? digit_lookback(status, tile, d, count) : 0);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < valid; i += blockDim.x) {  // runs of one digit: coalesced
    const unsigned dig = digit_of(sorted[i], shift);
    const Count at = global[dig] + (i - start[dig]);
    keys_out[at] = sorted[i];
    if (kPairs) values_out[at] = sorted[tile_keys + i];
  }
}

// The histogram pass, the digit bases, then per digit the status words cleared and the
// pass compiled for the tile's rows (and for pairs or keys) launched; its sorted tile
// needs dynamic shared memory above the default 48 KB, allowed here, outside the loop.
// The tiles of a pass are the tickets it must draw.
void launch_onesweep(const ch18::SortCall& c) {
  const int64_t tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, 1);
  const Count* bases = histogram_and_bases(c);
  const bool pairs = c.values_in != nullptr;
  const auto pass = SortRows::pick(c.tile.rows, [&](auto r) {
    return pairs ? onesweep_pass<decltype(r)::value, true>
                 : onesweep_pass<decltype(r)::value, false>;
  });
  const size_t sorted_bytes = sizeof(uint32_t) * c.tile.block * c.tile.rows * (pairs ? 2 : 1);
  CUDA_CHECK(cudaFuncSetAttribute(pass, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(sorted_bytes)));
  for (int p = 0; p < kPasses; ++p) {
    const PassBuffers b = ch18::pass_buffers(c, p);
    ch16::clear_state(c.state, tiles * kDigits, c.stream);
    pass<<<tiles, c.tile.block, sorted_bytes, c.stream>>>(b.keys_in, b.values_in, b.keys_out,
                                                          b.values_out, c.n, p * kDigitBits,
                                                          bases + p * kDigits, c.state);
    CHECK_LAUNCH();
  }
  *c.tickets = tiles;
}

}  // namespace

#include "sort_ahead.cuh"  // steps 6 and 7: step 3's tile, prefetched and pausing
#include "sort_early.cuh"  // step 3: its kernel ranks with rank_in_warp, above

namespace {

// The step table: each step's launcher (it holds the <<<>>>s) and its own tile, if any.
const std::vector<ch18::Step> kSteps = {
    {"three-kernel", launch_three_kernel},
    {"onesweep", launch_onesweep},
    {"onesweep-early", launch_onesweep_early},
    {"onesweep-match",
     ch18::launch_onesweep_match,
     {ch18::kMatchRows, ch18::kMatchBlock, {ch18::kMatchRows}}},
    {"onesweep-hist",
     ch18::launch_onesweep_hist,
     {ch18::kMatchRows, ch18::kMatchBlock, {ch18::kMatchRows}}},
    {"onesweep-ahead", launch_onesweep_ahead},
    {"onesweep-pause", launch_onesweep_pause},
    {"onesweep-lean",
     ch18::launch_onesweep_lean,
     {ch18::kLeanRows, ch18::kLeanBlock, ch18::kLeanRowsCompiled, ch18::kLeanBlocksCompiled}},
    {"onesweep-lean-hist",
     ch18::launch_onesweep_lean_hist,
     {ch18::kLeanRows, ch18::kLeanBlock, ch18::kLeanRowsCompiled, ch18::kLeanBlocksCompiled}},
    {"onesweep-packed",
     ch18::launch_onesweep_packed,
     {ch18::kLeanRows, ch18::kLeanBlock, ch18::kPackedRowsCompiled, {ch18::kLeanBlock}}}};
// The tiles the kernels take (--tile-rows, --block) and the sweep tries.
const sw::scan::TileChoices kTiles{
    SortRows::list(), kSortBlocks, kDefaultBlock, {8, 16, 24}, {256, 384, 512}};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<ch18::Step> program{
      "18_radix_sort",
      "LSD radix sort of u32 keys and key-value pairs: three kernels a digit, then onesweep.", "18",
      kSteps};
  return sw::bench::run(argc, argv, program, ch18::SortProblem{kTiles, kDefaultRows});
}
