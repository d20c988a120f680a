// Chapter 16's multi-pass steps, included by 16_scan.cu. Steps 1 to 4 scan each block
// (Hillis-Steele, Blelloch, Blelloch padded, warp shuffles), scan the block sums and add
// each block's offset; step 5 sums each tile, scans the sums in one block, and scans each
// tile again from its offset. Steps 1 to 4 share one launcher template (under their
// kernels), step 5 has its own under its kernels; each launches all its kernels itself
// (their kernels number blocks by blockIdx.x: they draw no tickets).
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/scan.h"
#include "scan_lookback.cuh"

namespace {

namespace sc = sw::scan;

constexpr int kClassicTile = 1024;    // elements a block scans in steps 1 to 4
constexpr int kBanks = 32;            // shared-memory banks of 4 bytes
constexpr int kPropagateBlock = 256;  // threads adding one block's offset to its 1024 elements
constexpr int kSumsBlock = 1024;      // the one block that scans the tile sums

// --- steps 1 to 4: scan each block, scan the block sums, add the offsets ---------------------

// Hillis-Steele: at round d every element adds the one d places back, reading one
// buffer and writing the other, so no element is read after it changed in a round.
template <class T>
__global__ void __launch_bounds__(kClassicTile)
    scan_hillis_steele(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                       T* sums) {
  __shared__ T buf[2][kClassicTile];
  const int t = threadIdx.x;
  const int64_t i = int64_t{blockIdx.x} * kClassicTile + t;
  buf[0][t] = i < n ? in[i] : T{};
  __syncthreads();
  int cur = 0;
  for (int d = 1; d < kClassicTile; d *= 2) {
    buf[1 - cur][t] = t >= d ? buf[cur][t - d] + buf[cur][t] : buf[cur][t];
    cur = 1 - cur;
    __syncthreads();
  }
  if (i < n) out[i] = inclusive ? buf[cur][t] : t > 0 ? buf[cur][t - 1] : T{};
  if (t == kClassicTile - 1) sums[blockIdx.x] = buf[cur][t];
}

// Blelloch: the up-sweep builds partial sums in place (a tree), the down-sweep
// pushes each prefix back down: an exclusive scan of 2 elements per thread.
// kPadded inserts a word after every 32, so the tree's strides spread over the banks.
template <class T, bool kPadded>
__global__ void __launch_bounds__(kClassicTile / 2)
    scan_blelloch(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                  T* sums) {
  __shared__ T s[kClassicTile + (kPadded ? kClassicTile / kBanks : 0)];
  const auto at = [](int k) { return kPadded ? k + k / kBanks : k; };
  const int t = threadIdx.x, a = t, b = t + kClassicTile / 2;
  const int64_t base = int64_t{blockIdx.x} * kClassicTile;
  const T xa = base + a < n ? in[base + a] : T{}, xb = base + b < n ? in[base + b] : T{};
  s[at(a)] = xa;
  s[at(b)] = xb;
  int stride = 1;
  for (int d = kClassicTile / 2; d > 0; d /= 2, stride *= 2) {  // up-sweep
    __syncthreads();
    if (t < d) s[at(stride * (2 * t + 2) - 1)] += s[at(stride * (2 * t + 1) - 1)];
  }
  __syncthreads();
  if (t == 0) {
    sums[blockIdx.x] = s[at(kClassicTile - 1)];
    s[at(kClassicTile - 1)] = T{};
  }
  for (int d = 1; d < kClassicTile; d *= 2) {  // down-sweep
    stride /= 2;
    __syncthreads();
    if (t < d) {
      const int left = at(stride * (2 * t + 1) - 1), right = at(stride * (2 * t + 2) - 1);
      const T l = s[left];
      s[left] = s[right];
      s[right] += l;
    }
  }
  __syncthreads();
  if (base + a < n) out[base + a] = inclusive ? s[at(a)] + xa : s[at(a)];
  if (base + b < n) out[base + b] = inclusive ? s[at(b)] + xb : s[at(b)];
}

// Warp shuffles: chapter 16's tile scan (scan_lookback.cuh) with one element a thread.
template <class T>
__global__ void __launch_bounds__(kClassicTile)
    scan_warp_shuffle(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                      T* sums) {
  ch16::scan_tile<T, 1, 1>(in, out, n, blockIdx.x, inclusive, [&](T aggregate) {
    if (threadIdx.x == 0) sums[blockIdx.x] = aggregate;
    return T{};
  });
}

// Adds block b's offset (the exclusive scan of the block sums) to its 1024 elements.
template <class T>
__global__ void __launch_bounds__(kPropagateBlock)
    add_offsets(T* out, int64_t n, const T* __restrict__ offsets) {
  const T offset = offsets[blockIdx.x];
  for (int k = threadIdx.x; k < kClassicTile; k += kPropagateBlock) {
    const int64_t i = int64_t{blockIdx.x} * kClassicTile + k;
    if (i < n) out[i] = offset + out[i];
  }
}

// Scratch grows in 16-byte steps, so every buffer carved from it stays aligned.
constexpr int64_t aligned(int64_t count) { return sw::ceil_div(count, 4) * 4; }

template <class T>
using BlockScan = void (*)(const T*, T*, int64_t, bool, T*);  // the kernels above
constexpr int kMaxLevels = 8;  // levels of 1024-element blocks: 7 cover any int64_t n

// The launcher of steps 1 to 4, instantiated per step (kScan its block scan, kThreads
// its block): level 0 scans in into out and writes each block's sum into scratch; each
// level above scans the sums below it (exclusive) into offsets, until one block holds
// them all; then, from the top down, add_offsets adds each block's offset to its 1024.
template <class T, BlockScan<T> kScan, int kThreads>
void launch_scan_then_propagate(const sc::ScanCall<T>& c) {
  struct Level {
    T* out;
    int64_t n;
    unsigned blocks;
  } level[kMaxLevels];
  const T* in = c.in;
  T* sums = c.partials;
  int top = 0;
  for (Level at{c.out, c.n, 0};; ++top) {
    at.blocks = ch16::tile_count(at.n, kClassicTile, 1, 1);
    kScan<<<at.blocks, kThreads, 0, c.stream>>>(in, at.out, at.n, top == 0 && c.inclusive, sums);
    CHECK_LAUNCH();
    level[top] = at;
    if (at.blocks == 1) break;
    in = sums;                                       // the next level scans these sums
    at = {sums + aligned(at.blocks), at.blocks, 0};  // into their offsets
    sums = at.out + aligned(at.n);
  }
  for (int l = top - 1; l >= 0; --l) {
    add_offsets<T><<<level[l].blocks, kPropagateBlock, 0, c.stream>>>(level[l].out, level[l].n,
                                                                      level[l + 1].out);
    CHECK_LAUNCH();
  }
}

// --- step 5: reduce, scan the tile sums, scan each tile from its offset -----------------------

template <class T, int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    reduce_tiles(const T* __restrict__ in, int64_t n, T* sums) {
  constexpr int V = ch16::kVec16<T>;
  ch16::Vec<T, V> x[kRows];
  ch16::load_rows<T, V, kRows>(in, n, ch16::lane_first<V, kRows>(blockIdx.x),
                               ch16::tile_whole<V, kRows>(blockIdx.x, n), x);
  T s = T{};
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int k = 0; k < V; ++k) s += x[r].v[k];
  T aggregate;
  ch16::warps_before(ch16::warp_sum_all(s), &aggregate);
  if (threadIdx.x == 0) sums[blockIdx.x] = aggregate;
}

// One block: each thread sums a contiguous run of the tile sums, the block scans the
// runs' sums, each thread writes its run's exclusive scan.
template <class T>
__global__ void __launch_bounds__(kSumsBlock)
    scan_tile_sums(const T* __restrict__ sums, T* offsets, int64_t count) {
  const int64_t per = sw::ceil_div(count, kSumsBlock);
  const int64_t begin = std::min(count, threadIdx.x * per), end = std::min(count, begin + per);
  T s = T{}, total;
  for (int64_t i = begin; i < end; ++i) s += sums[i];
  T run = ch16::block_exclusive_scan(s, &total);
  for (int64_t i = begin; i < end; ++i) {
    offsets[i] = run;
    run += sums[i];
  }
}

template <class T, int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    scan_from_offsets(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                      const T* offsets) {
  ch16::scan_tile<T, ch16::kVec16<T>, kRows>(in, out, n, blockIdx.x, inclusive,
                                             [&](T) { return offsets[blockIdx.x]; });
}

// Its tile is fixed (16 elements a thread, 256 threads): --tile-rows and --block tune
// the single-pass steps.
template <class T>
void launch_reduce_then_scan(const sc::ScanCall<T>& c) {
  constexpr int kRows = ch16::kDefaultRows, kBlock = ch16::kDefaultBlock;
  const unsigned tiles = ch16::tile_count(c.n, kBlock, kRows, ch16::kVec16<T>);
  T* sums = c.partials;
  T* offsets = c.partials + aligned(tiles);
  reduce_tiles<T, kRows><<<tiles, kBlock, 0, c.stream>>>(c.in, c.n, sums);
  CHECK_LAUNCH();
  scan_tile_sums<T><<<1, kSumsBlock, 0, c.stream>>>(sums, offsets, tiles);
  CHECK_LAUNCH();
  scan_from_offsets<T, kRows>
      <<<tiles, kBlock, 0, c.stream>>>(c.in, c.out, c.n, c.inclusive, offsets);
  CHECK_LAUNCH();
}

}  // namespace
