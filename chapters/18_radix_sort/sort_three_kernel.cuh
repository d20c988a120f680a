// Chapter 18's step 1 (three-kernel), included by 18_radix_sort.cu after its tile
// ranking (rank_tile), constants and pass buffers, which it uses: per digit, each
// tile counts its digits, chapter 16's look-back scan turns the counts into
// offsets, each tile is read again and every key written to its offset plus its rank.
#pragma once

#include <cstdint>

#include "chapters/16_scan/scan_lookback.cuh"
#include "common/check.h"
#include "sort_checks.h"

namespace {

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

// Per digit: the histogram, chapter 16's scan of the counts and
// the scatter. Returns the tickets of the last digit's scan.
int64_t launch_three_kernel(const ch18::SortCall& c) {
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
    const PassBuffers b = pass_buffers(c, p);
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
  return tickets;
}

}  // namespace
