// Chapter 16's scan, in a header of its own so that chapters 17 (stream compaction)
// and 18 (radix sort) reuse it instead of copying it, as chapter 12 reuses chapter 06.
//
// A tile is what one block scans: blockDim.x / 32 warps, each owning kRows rows of
// 32 * V consecutive elements; lane l holds elements [l * V, l * V + V) of each row
// (V = 1: a 4-byte load per lane; V = 16 / sizeof(T): one 16-byte load).
//   warp_inclusive_scan   the scan of one value per lane, with __shfl_up_sync
//   block_exclusive_scan  one value per thread, warps then warp totals
//   scan_tile             a tile's scan, given a function that returns its prefix
//   draw_tile             the tile index, as a ticket from an atomic counter
//   publish, read_status  the status word of a tile: a flag and a value in 64 bits
//   lookback_prefix       a tile's prefix from its predecessors' status words
//   scan_lookback         the single-pass scan (decoupled look-back, 16-byte loads),
//                         launch_scan_lookback its launcher (a ScanCall, as every step's)
// It includes the tile's loads and stores (scan_tile_io.cuh) and the launchers'
// choices, tile count and clearing of the status words (scan_launch.cuh).
#pragma once

#include <cstdint>
#include <cuda/atomic>
#include <type_traits>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "scan_launch.cuh"
#include "scan_tile_io.cuh"

// What a scan launcher gets (common/problems/scan.h, included by every file that
// launches a scan; status_check.cu, which only publishes and reads, does without it).
namespace sw::scan {
template <class T>
struct ScanCall;
}  // namespace sw::scan

namespace ch16 {

// --- values ------------------------------------------------------------------------------

// A tile's value as the 62 bits of a status word, and back (see publish).
template <class T>
__device__ __forceinline__ Count to_bits(T v) {
  if constexpr (std::is_same_v<T, float>)
    return __float_as_uint(v);
  else
    return static_cast<Count>(v);
}
template <class T>
__device__ __forceinline__ T from_bits(Count b) {
  if constexpr (std::is_same_v<T, float>)
    return __uint_as_float(static_cast<unsigned>(b));
  else
    return static_cast<T>(b);
}

// --- warp and block scans -------------------------------------------------------------------

// Inclusive scan across the warp: lane l returns v_0 + ... + v_l (all 32 lanes take part).
template <class T>
__device__ __forceinline__ T warp_inclusive_scan(T v) {
  // lab warp-scan: begin
  const int lane = threadIdx.x % sw::kWarp;
#pragma unroll
  for (int d = 1; d < sw::kWarp; d *= 2) {
    const T up = __shfl_up_sync(sw::kFullMask, v, d);
    if (lane >= d) v += up;
  }
  return v;
  // lab warp-scan: end
}

// The exclusive scan within the warp, from the inclusive one: lane l gets v_0 + ... + v_{l-1}.
template <class T>
__device__ __forceinline__ T warp_exclusive_from(T inclusive) {
  const T up = __shfl_up_sync(sw::kFullMask, inclusive, 1);
  return threadIdx.x % sw::kWarp == 0 ? T{} : up;
}

// The sum of v over the warp, in every lane (a butterfly).
template <class T>
__device__ __forceinline__ T warp_sum_all(T v) {
#pragma unroll
  for (int m = sw::kWarp / 2; m > 0; m /= 2) v += __shfl_xor_sync(sw::kFullMask, v, m);
  return v;
}

// Exclusive scan of one value per thread over the block (blockDim.x a multiple of 32);
// *total gets the block's sum in every thread. Ends with a barrier: it can run again.
template <class T>
__device__ T block_exclusive_scan(T v, T* total) {
  __shared__ T warp_sums[kMaxWarps];
  const int lane = threadIdx.x % sw::kWarp, warp = threadIdx.x / sw::kWarp;
  const int warps = blockDim.x / sw::kWarp;
  const T inclusive = warp_inclusive_scan(v);
  if (lane == sw::kWarp - 1) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) warp_sums[lane] = warp_inclusive_scan(lane < warps ? warp_sums[lane] : T{});
  __syncthreads();
  const T before = warp == 0 ? T{} : warp_sums[warp - 1];
  *total = warp_sums[warps - 1];
  const T mine = before + warp_exclusive_from(inclusive);
  __syncthreads();
  return mine;
}

// --- tiles ----------------------------------------------------------------------------------

// The block's step of a tile: each warp's total (the same in all its lanes) through
// shared memory; returns the sum of the warps before this one, and *aggregate the
// tile's, in every thread, both added in warp order.
template <class T>
__device__ __forceinline__ T warps_before(T warp_total, T* aggregate) {
  __shared__ T warp_totals[kMaxWarps];
  const int warp = threadIdx.x / sw::kWarp;
  if (threadIdx.x % sw::kWarp == 0) warp_totals[warp] = warp_total;
  __syncthreads();
  T before = T{}, all = T{};
  for (int w = 0; w < static_cast<int>(blockDim.x / sw::kWarp); ++w) {
    const T t = warp_totals[w];
    if (w < warp) before += t;
    all += t;
  }
  *aggregate = all;
  return before;
}

// One row's V elements as running sums from `start`: inclusive (each element's own value
// included) or exclusive (the sum before it).
template <class T, int V>
__device__ __forceinline__ Vec<T, V> scan_row_from(const Vec<T, V>& x, T start, bool inclusive) {
  Vec<T, V> y;
  T run = start;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const T next = run + x.v[k];
    y.v[k] = inclusive ? next : run;
    run = next;
  }
  return y;
}

// Scans one tile of in into out. Every row is scanned across its warp, the rows of a
// warp in order, the warps through shared memory; tile_prefix(aggregate) then returns,
// in every thread, the sum of everything before the tile (the look-back, a precomputed
// offset, or 0). Inclusive: out[i] = in[0] + ... + in[i]; exclusive: up to in[i - 1].
template <class T, int V, int kRows, class Prefix>
__device__ __forceinline__ void scan_tile(const T* __restrict__ in, T* __restrict__ out, int64_t n,
                                          int64_t tile, bool inclusive, Prefix&& tile_prefix) {
  const int64_t first = lane_first<V, kRows>(tile);
  const bool whole = tile_whole<V, kRows>(tile, n);
  Vec<T, V> x[kRows];
  load_rows<T, V, kRows>(in, n, first, whole, x);

  T lane_before[kRows], row_total[kRows];  // rows are independent: their shuffles overlap
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    T s = x[r].v[0];
#pragma unroll
    for (int k = 1; k < V; ++k) s += x[r].v[k];
    const T inclusive_sum = warp_inclusive_scan(s);
    lane_before[r] = warp_exclusive_from(inclusive_sum);
    row_total[r] = __shfl_sync(sw::kFullMask, inclusive_sum, sw::kWarp - 1);
  }
  T row_before[kRows], warp_total = T{};
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    row_before[r] = warp_total;
    warp_total += row_total[r];
  }
  T aggregate;
  const T warp_before = warps_before(warp_total, &aggregate);
  const T prefix = tile_prefix(aggregate);

  Vec<T, V> y[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    y[r] = scan_row_from(x[r], prefix + warp_before + row_before[r] + lane_before[r], inclusive);
  store_rows<T, V, kRows>(out, n, first, whole, y);
}

// --- the look-back: tickets and status words -------------------------------------------------

// The tile this block works on: a ticket from a counter (zeroed before the launch), so
// tiles start in the order of their indices. blockIdx.x would not do: nothing says
// block b starts before block b + 1, and a block that waits for a predecessor that
// cannot start (every SM busy with waiting blocks) waits forever.
__device__ __forceinline__ int64_t draw_tile(Count* counter) {
  __shared__ int64_t tile;
  if (threadIdx.x == 0) {
    // lab lookback: begin
    tile = static_cast<int64_t>(atomicAdd(counter, Count{1}));
    // lab lookback: end
  }
  __syncthreads();
  return tile;
}

// A tile's status word: the flag in the top 2 bits, its value (a T's bits, or a count
// below 2^62) in the other 62. Zero (kInvalid) until the tile publishes.
enum : unsigned { kInvalid = 0, kAggregate = 1, kInclusive = 2 };
constexpr int kFlagShift = 62;
constexpr Count kValueMask = (Count{1} << kFlagShift) - 1;
struct TileStatus {
  unsigned flag;
  Count bits;
};

// One 64-bit store publishes flag and value together, one 64-bit load reads them
// together: a reader sees both from the same publication, so relaxed atomics
// (device scope, served by L2, never a stale L1 line) are all the protocol needs.
__device__ __forceinline__ void publish(Count* word, unsigned flag, Count bits) {
  // lab lookback: begin
  cuda::atomic_ref<Count, cuda::thread_scope_device> w(*word);
  w.store((Count{flag} << kFlagShift) | (bits & kValueMask), cuda::memory_order_relaxed);
  // lab lookback: end
}

__device__ __forceinline__ TileStatus read_status(Count* word) {
  // lab lookback: begin
  cuda::atomic_ref<Count, cuda::thread_scope_device> w(*word);
  const Count s = w.load(cuda::memory_order_relaxed);
  return {static_cast<unsigned>(s >> kFlagShift), s & kValueMask};
  // lab lookback: end
}

// The exclusive prefix of `tile`, by warp 0: lane l watches tile window_end - 32 + l
// and the warp waits until no lane sees kInvalid. The nearest inclusive prefix in the
// window, plus the aggregates of the tiles after it, is the answer; with none in the
// window, its 32 aggregates are added up and the window moves back 32 tiles. The
// inclusive prefix is added last: a float passes through 2 more additions per tile.
template <class T>
__device__ __forceinline__ T warp_lookback(Count* status, int64_t tile) {
  const int lane = threadIdx.x % sw::kWarp;
  T aggregates = T{};
  for (int64_t window_end = tile;; window_end -= sw::kWarp) {
    const int64_t p = window_end - sw::kWarp + lane;
    TileStatus s;
    do {
      s = p >= 0 ? read_status(status + p)
                 : TileStatus{kInclusive, 0};  // before tile 0: the identity
    } while (__any_sync(sw::kFullMask, s.flag == kInvalid));
    const unsigned inclusive = __ballot_sync(sw::kFullMask, s.flag == kInclusive);
    const int nearest = inclusive ? sw::kWarp - 1 - __clz(inclusive) : -1;
    aggregates += warp_sum_all(lane > nearest ? from_bits<T>(s.bits) : T{});
    if (inclusive) return __shfl_sync(sw::kFullMask, from_bits<T>(s.bits), nearest) + aggregates;
  }
}

enum class Lookback { kChained, kDecoupled };

// Called by every thread once the tile's aggregate is known; returns its prefix.
// kDecoupled: publish the aggregate at once, look back over the predecessors'
// aggregates and inclusive prefixes, publish the inclusive prefix. kChained: wait for
// the predecessor's inclusive prefix alone, so the tiles finish one after another.
template <class T, Lookback kMode>
__device__ __forceinline__ T lookback_prefix(Count* status, int64_t tile, T aggregate) {
  __shared__ T prefix;
  const int lane = threadIdx.x % sw::kWarp;
  if (threadIdx.x < sw::kWarp) {
    T p = T{};
    if (tile > 0 && kMode == Lookback::kChained) {
      if (lane == 0) {
        TileStatus s;
        do {
          s = read_status(status + tile - 1);
        } while (s.flag != kInclusive);
        p = from_bits<T>(s.bits);
      }
    } else if (tile > 0) {
      if (lane == 0) publish(status + tile, kAggregate, to_bits(aggregate));
      p = warp_lookback<T>(status, tile);
    }
    if (lane == 0) {
      publish(status + tile, kInclusive, to_bits<T>(p + aggregate));
      prefix = p;
    }
  }
  __syncthreads();
  return prefix;
}

// The whole single-pass scan of one tile: a ticket, the tile's scan, its look-back.
// `state` is the ticket counter followed by one status word per tile, all zero.
template <class T, int V, int kRows, Lookback kMode>
__device__ __forceinline__ void single_pass(const T* __restrict__ in, T* __restrict__ out,
                                            int64_t n, bool inclusive, Count* state) {
  const int64_t tile = draw_tile(state);
  scan_tile<T, V, kRows>(in, out, n, tile, inclusive, [&](T aggregate) {
    return lookback_prefix<T, kMode>(state + 1, tile, aggregate);
  });
}

// Step 8 of chapter 16, used by chapters 17 and 18: decoupled look-back, 16-byte loads.
template <class T, int kRows>
__global__ void __launch_bounds__(kMaxLookbackBlock)
    scan_lookback(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                  Count* state) {
  single_pass<T, kVec16<T>, kRows, Lookback::kDecoupled>(in, out, n, inclusive, state);
}

// Its launcher: chapter 16's step lookback-vec (the kernel compiled for c.rows). Zeroes the
// ticket and the status words; the tiles are the tickets the kernel must draw.
// Chapters 17 and 18 launch scan_lookback themselves, in the default tile, beside their
// own kernels.
template <class T>
void launch_scan_lookback(const sw::scan::ScanCall<T>& c) {
  const unsigned tiles = tile_count(c.n, c.block, c.rows, kVec16<T>);
  clear_state(c.state, tiles, c.stream);
  const auto kernel =
      ScanRows::pick(c.rows, [](auto r) { return scan_lookback<T, decltype(r)::value>; });
  kernel<<<tiles, c.block, 0, c.stream>>>(c.in, c.out, c.n, c.inclusive, c.state);
  CHECK_LAUNCH();
  *c.tickets = tiles;
}

}  // namespace ch16
