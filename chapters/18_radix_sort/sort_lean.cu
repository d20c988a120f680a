// Chapter 18, steps 8 and 9: onesweep-ahead (step 6) with fewer instructions and registers a
// key, then with step 5's histogram pass. Each is one change on the step before:
//   onesweep-lean       A pass of step 6 at 20 x 384 executes about 3.8 warp instructions a
//                       key, CUB's about 2.65, at 64 registers a thread (2 blocks an SM);
//                       at that count the issue slots, not the DRAM, bound the pass
//                       (docs/18). Here the tile does the same work in fewer instructions
//                       and registers:
//     - the tile's shape is known when the kernel is compiled (kBlock, kRows): its loops
//       unroll, its strides are constants, and a full tile (every tile but the last) loads
//       and stores without a bound check, each load at a constant offset from one pointer;
//     - a key's digit is one byte-select instruction (__byte_perm), not a shift and a mask;
//     - the peers of a key (the lanes of its row with the same digit): eight ballots of four
//       instructions each (peers_by_ballot), where the compiler made about seven of step 3's;
//     - the highest peer advances the warp's counter with one shared atomicAdd, which
//       returns where the group starts (step 4's idea, without __match_any_sync): no
//       __syncwarp between rows;
//     - below 2^30 keys, where the status words are 32 bits, a digit's place in the output
//       is 32 bits: one instruction to address a store instead of a 64-bit add and a carry;
//     - 56 registers a thread for keys, three blocks of 384 an SM (36 warps, CUB's count;
//       lean_threads_per_sm): the keys stay in registers from the loads to the ranking;
//       pairs, with their values in registers too, two (or 512 threads at 64 registers).
//   onesweep-lean-hist  + step 5's histogram pass (histogram_vec: 16-byte loads, 16 keys in
//                       flight a thread): step 2's histogram_all moves the keys at about 38 %
//                       of the DRAM peak, a tenth of a sort's time at 2^28.
// and step 10, for pairs (keys sort as in step 9):
//   onesweep-packed     a key and its value travel as one 8-byte word (uint2) wherever the
//                       chapter owns the buffer: the pass writes the scratch buffer (passes 0
//                       and 2) as n (key, value) pairs and reads it back so (passes 1 and 3);
//                       the caller's input and output stay two arrays. Each pass has one
//                       packed side: one 8-byte load or store where there were two 4-byte
//                       ones, one 8-byte shared store and load a key, and a scattered run of
//                       a digit is one run of 8-byte words, not two of 4.
// The look-back and the status words are step 6's (sort_onesweep.cuh).
#include <cstdint>

#include "chapters/16_scan/scan_launch.cuh"
#include "chapters/16_scan/scan_tile_io.cuh"  // prefetch_tile_l2, l2_ahead_tiles
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "sort_onesweep.cuh"  // the early count, the status words, the look-back
#include "sort_problem.h"
#include "sort_steps.h"
#include "sort_tile.cuh"

namespace {

// Key's byte `byte` (the digit of pass byte) in the low byte, zeros above: selector
// 0x4440 | byte picks that byte of key, then three times byte 0 of the zero operand.
__device__ __forceinline__ unsigned digit_selector(int shift) {
  return 0x4440u | static_cast<unsigned>(shift / kDigitBits);
}
__device__ __forceinline__ unsigned digit_by_byte(uint32_t key, unsigned selector) {
  return __byte_perm(key, 0, selector);
}

// The lanes whose digit equals mine, bit by bit: the ballot of bit b is the lanes whose
// bit is 1; where my bit is 0 its complement is the lanes that share it. Four
// instructions a bit (test, ballot, complement under the test's predicate, and).
__device__ __forceinline__ unsigned peers_by_ballot(unsigned digit) {
  unsigned peers = sw::kFullMask;
#pragma unroll
  for (int bit = kDigitBits - 1; bit >= 0; --bit) {  // the top bit first
    unsigned same;
    asm("{\n\t.reg .pred p;\n\t"
        "and.b32 %0, %1, %2;\n\t"
        "setp.ne.u32 p, %0, 0;\n\t"
        "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t"
        "@!p not.b32 %0, %0;\n\t}"
        : "=r"(same)
        : "r"(digit), "r"(1u << bit));
    peers &= same;
  }
  return peers;
}

// This lane's key's place in the tile sorted by digit: counts[digit] (where the warp's next
// key of that digit goes) plus its peers below it. The highest peer's atomicAdd advances the
// counter past the group and returns its start; the next row's atomic follows it in the
// warp's order, so keys of one digit keep their index order. upto_mask: lanes 0 to mine.
__device__ __forceinline__ unsigned rank_lean(unsigned digit, unsigned* counts,
                                              unsigned upto_mask) {
  const unsigned peers = peers_by_ballot(digit);
  const unsigned upto = __popc(peers & upto_mask);  // peers at or below this lane
  const int highest = sw::kWarp - 1 - __clz(peers);
  unsigned start = 0;
  if (threadIdx.x % sw::kWarp == static_cast<unsigned>(highest))
    start = atomicAdd(&counts[digit], upto);
  return __shfl_sync(sw::kFullMask, start, highest) + upto - 1;
}

// Row r of this warp's keys (or values) of the tile, x[r] = in[first + r * 32]: first is
// this lane's first. kChecked: the last tile, whose elements past n read as pad (keys:
// 0xFFFFFFFF, digit 255, ranked last).
template <int kRows, bool kChecked>
__device__ __forceinline__ void load_rows(const uint32_t* in, int64_t n, int64_t first,
                                          uint32_t pad, uint32_t (&x)[kRows]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t i = first + r * sw::kWarp;
    x[r] = !kChecked || i < n ? in[i] : pad;
  }
}

// Row r of this warp's (key, value) pairs from a packed buffer: step 10's passes 1 and 3.
template <int kRows, bool kChecked>
__device__ __forceinline__ void load_packed_rows(const uint2* in, int64_t n, int64_t first,
                                                 uint32_t (&key)[kRows], uint32_t (&value)[kRows]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t i = first + r * sw::kWarp;
    const uint2 kv = !kChecked || i < n ? in[i] : make_uint2(0xFFFFFFFFu, 0u);
    key[r] = kv.x, value[r] = kv.y;
  }
}

// Where a pass's pairs lie: two arrays (steps 8 and 9), or step 10's packed scratch on the
// output side (passes 0 and 2) or on the input side (passes 1 and 3).
enum Pack { kTwoArrays, kPackedOut, kPackedIn };

// Step 6's tile (the L2 prefetch `ahead` tiles on, the early count published, the ranking,
// the look-back, the write-out in runs), with the shapes compiled in.
template <int kRows, int kBlock, bool kPairs, class Word, Pack kPack = kTwoArrays>
__global__ void __launch_bounds__(kBlock, ch18::lean_threads_per_sm(kPairs, kRows, kBlock) / kBlock)
    onesweep_lean_pass(const PassArgs a, int64_t ahead) {
  constexpr int kTileKeys = kBlock * kRows;
  extern __shared__ __align__(16) uint32_t sorted[];  // keys, then values; step 10: pairs
  uint2* sorted_pairs = reinterpret_cast<uint2*>(sorted);
  const uint2* packed_in = reinterpret_cast<const uint2*>(a.keys_in);
  __shared__ unsigned counts[kBlock / sw::kWarp][kDigits];  // per warp: counts, then places
  __shared__ Word place[kDigits];  // digit d's place in keys_out, less where it starts here
  const int64_t tile = draw_pass_tile(a.ticket, a.first_ticket);
  if (kPack == kPackedIn) {
    ch16::prefetch_tile_l2(packed_in, a.n, tile + ahead, kTileKeys);
  } else {
    ch16::prefetch_tile_l2(a.keys_in, a.n, tile + ahead, kTileKeys);
    if (kPairs) ch16::prefetch_tile_l2(a.values_in, a.n, tile + ahead, kTileKeys);
  }
  const int warp = threadIdx.x / sw::kWarp, lane = threadIdx.x % sw::kWarp;
  unsigned selector = digit_selector(a.shift);
  const bool full = (tile + 1) * kTileKeys <= a.n;
  const int64_t first = tile * kTileKeys + int64_t{warp} * kRows * sw::kWarp + lane;
  uint32_t key[kRows], value[kRows];
  if (kPack == kPackedIn) {
    if (full)
      load_packed_rows<kRows, false>(packed_in, a.n, first, key, value);
    else
      load_packed_rows<kRows, true>(packed_in, a.n, first, key, value);
  } else if (full) {
    load_rows<kRows, false>(a.keys_in, a.n, first, 0xFFFFFFFFu, key);
    if (kPairs) load_rows<kRows, false>(a.values_in, a.n, first, 0u, value);
  } else {
    load_rows<kRows, true>(a.keys_in, a.n, first, 0xFFFFFFFFu, key);
    if (kPairs) load_rows<kRows, true>(a.values_in, a.n, first, 0u, value);
  }
  for (int d = lane; d < kDigits; d += sw::kWarp) counts[warp][d] = 0;
  __syncwarp();
#pragma unroll
  for (int r = 0; r < kRows; ++r) atomicAdd(&counts[warp][digit_by_byte(key[r], selector)], 1u);
  unsigned begin, valid;
  const unsigned count = publish_counts<Word>(counts, a, tile, kTileKeys, &begin, &valid);
  const unsigned upto_mask = (2u << lane) - 1;
  // The compiler would keep the count's kRows counter addresses in registers for the
  // ranking (they spill at 56 registers); hiding the selector's value makes it recompute
  // each digit instead, one instruction a key.
  asm volatile("" : "+r"(selector));
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const unsigned at = rank_lean(digit_by_byte(key[r], selector), counts[warp], upto_mask);
    if (kPack != kTwoArrays) {
      sorted_pairs[at] = make_uint2(key[r], value[r]);
    } else {
      sorted[at] = key[r];
      if (kPairs) sorted[kTileKeys + at] = value[r];
    }
  }
  const unsigned d = threadIdx.x;
  if (d < kDigits) {
    const Count before =
        tile ? lookback_digit(reinterpret_cast<Word*>(a.status), tile, d, count, false) : 0;
    place[d] = static_cast<Word>(a.bases[d] + before - begin);            // modulo 2^bits: + i
    if (a.next) reinterpret_cast<Word*>(a.next)[tile * kDigits + d] = 0;  // brings it back
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRows; ++r) {  // key i of the sorted tile to place[digit] + i
    const unsigned i = r * kBlock + threadIdx.x;
    if (!full && i >= valid) break;
    if (kPack != kTwoArrays) {
      const uint2 kv = sorted_pairs[i];
      const Word to = place[digit_by_byte(kv.x, selector)] + i;
      if (kPack == kPackedOut) {
        reinterpret_cast<uint2*>(a.keys_out)[to] = kv;
      } else {
        a.keys_out[to] = kv.x;
        a.values_out[to] = kv.y;
      }
      continue;
    }
    const uint32_t k = sorted[i];
    const Word to = place[digit_by_byte(k, selector)] + i;
    a.keys_out[to] = k;
    if (kPairs) a.values_out[to] = sorted[kTileKeys + i];
  }
}

using LeanRows = ch16::Choices<16, 20, 24>;  // kLeanRowsCompiled (the options' check)
using LeanBlocks = ch16::Choices<384, 512>;  // kLeanBlocksCompiled
AheadPass lean_pass(const ch18::SortCall& c) {
  const bool pairs = c.values_in != nullptr, narrow = narrow_words(c.n);
  return LeanRows::pick(c.tile.rows, [&](auto r) {
    return LeanBlocks::pick(c.tile.block, [&](auto b) -> AheadPass {
      constexpr int kRows = decltype(r)::value, kBlock = decltype(b)::value;
      if (pairs)
        return narrow ? onesweep_lean_pass<kRows, kBlock, true, uint32_t>
                      : onesweep_lean_pass<kRows, kBlock, true, Count>;
      return narrow ? onesweep_lean_pass<kRows, kBlock, false, uint32_t>
                    : onesweep_lean_pass<kRows, kBlock, false, Count>;
    });
  });
}

// Step 10's pass kernels (pairs), compiled for its own block and 20 or 24 rows: passes 0
// and 2 write the packed scratch, passes 1 and 3 read it.
using PackedRows = ch16::Choices<20, 24>;  // kPackedRowsCompiled
template <Pack kPack>
AheadPass packed_pass(const ch18::SortCall& c) {
  return PackedRows::pick(c.tile.rows, [&](auto r) -> AheadPass {
    constexpr int kRows = decltype(r)::value;
    return narrow_words(c.n) ? onesweep_lean_pass<kRows, ch18::kLeanBlock, true, uint32_t, kPack>
                             : onesweep_lean_pass<kRows, ch18::kLeanBlock, true, Count, kPack>;
  });
}

}  // namespace

namespace ch18 {

// Step 6's launcher with the lean pass and a histogram pass (histogram_and_bases or
// histogram_vec_and_bases): the bases, then the four passes (launch_ahead_passes).
template <Count* (*kHistogram)(const SortCall&)>
void launch_lean(const SortCall& c) {
  const AheadPass pass = lean_pass(c);
  launch_ahead_passes(c, pass, kHistogram(c));
}

void launch_onesweep_lean(const SortCall& c) { launch_lean<histogram_and_bases>(c); }
void launch_onesweep_lean_hist(const SortCall& c) { launch_lean<histogram_vec_and_bases>(c); }

// Step 10: keys as step 9; pairs with the packed passes (the scratch buffer, keys_tmp, holds
// at least 2n words: n pairs).
void launch_onesweep_packed(const SortCall& c) {
  if (c.values_in == nullptr) return launch_lean<histogram_vec_and_bases>(c);
  const AheadPass to_packed = packed_pass<kPackedOut>(c), from_packed = packed_pass<kPackedIn>(c);
  launch_ahead_passes(c, to_packed, histogram_vec_and_bases(c), from_packed);
}

}  // namespace ch18
