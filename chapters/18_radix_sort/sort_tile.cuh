// Chapter 18's tile in memory, included by 18_radix_sort.cu: the rows (keys per thread)
// the kernels are compiled for and the blocks they take, a key's digit, which key of a
// tile a lane holds, and the tile's loads.
#pragma once

#include <cstdint>
#include <vector>

#include "chapters/16_scan/scan_launch.cuh"
#include "common/cuda_utils.cuh"
#include "sort_problem.h"

namespace {

// Keys per thread (--tile-rows): the tile sweep's 8, 16 and 24, and CUB's 20.
using SortRows = ch16::Choices<8, 16, 20, 24>;
const std::vector<int> kSortBlocks = {256, 384, 512};  // --block: at least one thread per digit
constexpr int kMaxSortBlock = 512;
constexpr int kMaxSortWarps = kMaxSortBlock / sw::kWarp;
constexpr int kDefaultRows = 16, kDefaultBlock = 256;

__device__ __forceinline__ unsigned digit_of(uint32_t key, int shift) {
  return (key >> shift) & (ch18::kDigits - 1);
}

// A tile: block x kRows keys; row r of warp w holds keys [(w * kRows + r) * 32, +32)
// of the tile, one a lane (coalesced 4-byte loads, in the keys' order). Keys past n
// read as 0xFFFFFFFF: digit 255, ranked after every real key of the tile.
template <int kRows>
__device__ __forceinline__ int64_t key_index(int64_t tile, int r) {
  const int warp = threadIdx.x / sw::kWarp, lane = threadIdx.x % sw::kWarp;
  return tile * blockDim.x * kRows + (int64_t{warp} * kRows + r) * sw::kWarp + lane;
}

template <int kRows, bool kPairs>
__device__ __forceinline__ void load_tile(const uint32_t* __restrict__ keys,
                                          const uint32_t* __restrict__ values, int64_t n,
                                          int64_t tile, uint32_t (&key)[kRows],
                                          uint32_t (&value)[kRows]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t i = key_index<kRows>(tile, r);
    key[r] = i < n ? keys[i] : 0xFFFFFFFFu;
    if (kPairs) value[r] = i < n ? values[i] : 0u;
  }
}

}  // namespace
