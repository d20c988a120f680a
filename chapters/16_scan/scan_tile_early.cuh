// Chapter 16's tile of steps 10 to 15 (scan_latency.cu, scan_prefetch.cu): the aggregate
// published before the rows are scanned (lookback-early), and the look-back that pauses
// before and between polls (lookback-backoff). finish_tile_early takes a tile whose rows
// are already in registers: steps 13 and 14 load them a tile ahead.
#pragma once

#include <cstdint>

#include "common/cuda_utils.cuh"
#include "scan_lookback.cuh"

namespace ch16 {

// --- step 10: the aggregate first -------------------------------------------------------------

// The scans of a lane's rows: before[r], the sum of the warp's rows before row r and of
// the lanes before this one in row r. The lane's sums of its V elements are added again
// here rather than kept: fewer registers live through the look-back.
template <class T, int V, int kRows>
__device__ __forceinline__ void scan_rows(const Vec<T, V> (&x)[kRows], T (&before)[kRows]) {
  T rows_before = T{};
#pragma unroll
  for (int r = 0; r < kRows; ++r) {  // rows are independent: their warp scans overlap
    T s = x[r].v[0];
#pragma unroll
    for (int k = 1; k < V; ++k) s += x[r].v[k];
    const T inclusive_sum = warp_inclusive_scan(s);
    before[r] = rows_before + warp_exclusive_from(inclusive_sum);
    rows_before += __shfl_sync(sw::kFullMask, inclusive_sum, sw::kWarp - 1);
  }
}

// A tile whose rows x are loaded (lane_first `first`, `whole` as tile_whole), with the
// aggregate first: each thread sums its elements, each warp its threads' sums (a
// butterfly), the block its warps' (warps_before, a barrier), and tile_prefix(aggregate)
// starts at once in warp 0 (it publishes, then looks back). The other warps scan their
// rows before they call it, warp 0 after: its look-back and their row scans overlap.
template <class T, int V, int kRows, class Prefix>
__device__ __forceinline__ void finish_tile_early(const Vec<T, V> (&x)[kRows], T* __restrict__ out,
                                                  int64_t n, int64_t first, bool whole,
                                                  bool inclusive, Prefix&& tile_prefix) {
  T thread_sum = T{};
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int k = 0; k < V; ++k) thread_sum += x[r].v[k];
  T aggregate;
  const T warp_before = warps_before(warp_sum_all(thread_sum), &aggregate);
  const bool lookback_warp = threadIdx.x < sw::kWarp;
  T before[kRows];
  if (!lookback_warp) scan_rows<T, V, kRows>(x, before);
  const T prefix = tile_prefix(aggregate);
  if (lookback_warp) scan_rows<T, V, kRows>(x, before);

  Vec<T, V> y[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    y[r] = scan_row_from(x[r], prefix + warp_before + before[r], inclusive);
  store_rows<T, V, kRows>(out, n, first, whole, y);
}

// scan_tile with the aggregate first: the tile's loads, then finish_tile_early.
template <class T, int V, int kRows, class Prefix>
__device__ __forceinline__ void scan_tile_early(const T* __restrict__ in, T* __restrict__ out,
                                                int64_t n, int64_t tile, bool inclusive,
                                                Prefix&& tile_prefix) {
  const int64_t first = lane_first<V, kRows>(tile);
  const bool whole = tile_whole<V, kRows>(tile, n);
  Vec<T, V> x[kRows];
  load_rows<T, V, kRows>(in, n, first, whole, x);
  finish_tile_early<T, V, kRows>(x, out, n, first, whole, inclusive, tile_prefix);
}

// --- step 11: pauses before and between polls -----------------------------------------------

// The pauses of the look-back: kFirstPollNs after the tile publishes its aggregate,
// before the first poll (its predecessors, which started just before it, are finishing
// their own loads: a poll now would mostly find them unpublished), then kPollPauseNs
// between two polls that found a tile of the window unpublished. The values are CUB's
// sm_90 tuning for 4-byte sums (cub/device/dispatch/tuning/tuning_scan.cuh: the L2 write
// latency and the delay of its fixed_delay_constructor_t); __nanosleep sleeps up to twice
// what it is asked. A scan of fewer than kPauseMinTiles tiles, about one wave of resident
// tiles on 132 SMs (2^20 elements make 256 to 342 tiles), is all latency: it polls
// without pauses.
constexpr unsigned kFirstPollNs = 1245;
constexpr unsigned kPollPauseNs = 648;
constexpr unsigned kPauseMinTiles = 1024;

// warp_lookback (scan_lookback.cuh), pausing before its first poll and between two polls
// of a window. tiles() returns the scan's count of tiles, read where the pauses are
// decided: gridDim.x for a grid of one block per tile (steps 11, 12 and 15), the count a
// persistent grid computed (steps 13 and 14).
template <class T, class Tiles>
__device__ __forceinline__ T warp_lookback_backoff(Count* status, int64_t tile, Tiles tiles) {
  const int lane = threadIdx.x % sw::kWarp;
  const bool pauses = tiles() >= kPauseMinTiles;
  if (pauses) __nanosleep(kFirstPollNs);
  T aggregates = T{};
  for (int64_t window_end = tile;; window_end -= sw::kWarp) {
    const int64_t p = window_end - sw::kWarp + lane;
    TileStatus s = p >= 0 ? read_status(status + p) : TileStatus{kInclusive, 0};  // -1: identity
    while (__any_sync(sw::kFullMask, s.flag == kInvalid)) {
      if (pauses) __nanosleep(kPollPauseNs);
      s = p >= 0 ? read_status(status + p) : TileStatus{kInclusive, 0};
    }
    const unsigned inclusive = __ballot_sync(sw::kFullMask, s.flag == kInclusive);
    const int nearest = inclusive ? sw::kWarp - 1 - __clz(inclusive) : -1;
    aggregates += warp_sum_all(lane > nearest ? from_bits<T>(s.bits) : T{});
    if (inclusive) return __shfl_sync(sw::kFullMask, from_bits<T>(s.bits), nearest) + aggregates;
  }
}

// lookback_prefix's decoupled look-back (scan_lookback.cuh), with warp_lookback_backoff.
template <class T, class Tiles>
__device__ __forceinline__ T lookback_prefix_backoff(Count* status, int64_t tile, Tiles tiles,
                                                     T aggregate) {
  __shared__ T prefix;
  if (threadIdx.x < sw::kWarp) {
    T p = T{};
    if (tile > 0) {
      if (threadIdx.x == 0) publish(status + tile, kAggregate, to_bits(aggregate));
      p = warp_lookback_backoff<T>(status, tile, tiles);
    }
    if (threadIdx.x == 0) {
      publish(status + tile, kInclusive, to_bits<T>(p + aggregate));
      prefix = p;
    }
  }
  __syncthreads();
  return prefix;
}

}  // namespace ch16
