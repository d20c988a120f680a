// Chapter 18's step 2 (onesweep), included by 18_radix_sort.cu after its tile ranking
// (rank_tile), constants and pass buffers, which it uses: one histogram pass for all
// four digits, then per digit one kernel that ranks its tile, takes each digit's offset
// from a look-back on chapter 16's status words and writes the tile out in runs.
#pragma once

#include <algorithm>
#include <cstdint>

#include "chapters/16_scan/scan_lookback.cuh"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "sort_checks.h"

namespace {

// --- step 2: one histogram pass, then one pass per digit with the look-back -------------------

constexpr int kHistogramBlock = 256, kHistogramBlocksPerSm = 4;

// Every digit of every key, counted in shared memory, added to counts[pass][digit].
__global__ void __launch_bounds__(kHistogramBlock)
    histogram_all(const uint32_t* __restrict__ keys, int64_t n, Count* counts) {
  __shared__ unsigned h[kPasses][kDigits];
  for (int d = threadIdx.x; d < kPasses * kDigits; d += kHistogramBlock)
    h[d / kDigits][d % kDigits] = 0;
  __syncthreads();
  const int64_t stride = int64_t{gridDim.x} * kHistogramBlock;
  for (int64_t i = int64_t{blockIdx.x} * kHistogramBlock + threadIdx.x; i < n; i += stride) {
    const uint32_t key = keys[i];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) atomicAdd(&h[p][digit_of(key, p * kDigitBits)], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < kPasses * kDigits; d += kHistogramBlock)
    if (h[d / kDigits][d % kDigits]) atomicAdd(&counts[d], Count{h[d / kDigits][d % kDigits]});
}

// Block p: where each digit's keys start in pass p's output (an exclusive scan).
__global__ void __launch_bounds__(kDigits) digit_bases(const Count* counts, Count* bases) {
  Count total;
  bases[blockIdx.x * kDigits + threadIdx.x] =
      ch16::block_exclusive_scan(counts[blockIdx.x * kDigits + threadIdx.x], &total);
}

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
int64_t launch_onesweep(const ch18::SortCall& c) {
  const int64_t tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, 1);
  Count* counts = c.digits;
  Count* bases = c.digits + kPasses * kDigits;
  CUDA_CHECK(cudaMemsetAsync(counts, 0, sizeof(Count) * kPasses * kDigits, c.stream));
  const int64_t grid =
      std::min<int64_t>(sw::ceil_div(c.n, kHistogramBlock), sw::sm_count() * kHistogramBlocksPerSm);
  histogram_all<<<grid, kHistogramBlock, 0, c.stream>>>(c.keys_in, c.n, counts);
  CHECK_LAUNCH();
  digit_bases<<<kPasses, kDigits, 0, c.stream>>>(counts, bases);
  CHECK_LAUNCH();
  const bool pairs = c.values_in != nullptr;
  const auto pass = SortRows::pick(c.tile.rows, [&](auto r) {
    return pairs ? onesweep_pass<decltype(r)::value, true>
                 : onesweep_pass<decltype(r)::value, false>;
  });
  const size_t sorted_bytes = sizeof(uint32_t) * c.tile.block * c.tile.rows * (pairs ? 2 : 1);
  CUDA_CHECK(cudaFuncSetAttribute(pass, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(sorted_bytes)));
  for (int p = 0; p < kPasses; ++p) {
    const PassBuffers b = pass_buffers(c, p);
    ch16::clear_state(c.state, tiles * kDigits, c.stream);
    pass<<<tiles, c.tile.block, sorted_bytes, c.stream>>>(b.keys_in, b.values_in, b.keys_out,
                                                          b.values_out, c.n, p * kDigitBits,
                                                          bases + p * kDigits, c.state);
    CHECK_LAUNCH();
  }
  return tiles;
}

}  // namespace
