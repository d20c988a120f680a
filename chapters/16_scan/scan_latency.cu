// Chapter 16, steps 9 to 12: the single pass of lookback-vec (step 8), one change at a
// time, each against the latency of a tile. A tile's life in lookback-vec: a ticket (an
// atomic's round trip to the L2), its loads (a round trip to DRAM), its rows scanned, a
// barrier, its aggregate published, the look-back (polls of its predecessors' status
// words), a barrier, its stores. Only the loads and stores move bytes; the rest is
// latency, which only the other tiles resident on the SM can hide.
//   lookback-noticket  the tile is blockIdx.x, not a ticket: the loads start at once.
//                      Safe in practice, not by the programming model: the GPU hands
//                      out the blocks of a one-dimensional grid in the order of
//                      blockIdx.x, so while block b runs, every block before it has
//                      started (it runs, or it has finished) and no wait is for a block
//                      that has no SM to start on. CUB's scan relies on the same order
//                      (its tile is blockIdx.x). The ticket (step 6) guards against a
//                      schedule the model allows and no GPU is known to use: later blocks
//                      resident and waiting on every SM while an earlier one has not
//                      started, a hang. With no ticket drawn, the tickets check has
//                      nothing to count; the scan's own checks remain.
//   lookback-early     + the tile's aggregate, a block reduction of its elements, is
//                      published before the rows are scanned: successors wait a warp scan
//                      per row and a barrier less, and warp 0 looks back while the other
//                      warps scan their rows.
//   lookback-backoff   + a pause between two polls of a window not yet published:
//                      __nanosleep, kFirstPauseNs after the first miss, doubling up to
//                      kMaxPauseNs, and none in a grid below kPauseMinTiles. A spinning
//                      warp takes issue slots from the tiles loading on its SM and reads
//                      the L2 lines every waiting tile reads. (CUB's sm_90 tuning sleeps
//                      a fixed time instead, before its first poll too.)
//   lookback-lean      + registers for kLeanThreadsPerSM threads an SM (__launch_bounds__'s
//                      minimum of blocks), and its own tile: 128 threads x 6 rows, 24
//                      elements a thread (kLeanBlock, kLeanRows in scan_latency.h, CUB's
//                      sm_90 tile for 4-byte sums): more tiles resident, more loads in
//                      flight while other tiles wait.
// Every launcher zeroes the status words (and the unused ticket word) and launches one
// block per tile; the kernels take their status words at state + 1, as lookback-vec's.
#include <algorithm>
#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/scan_call.h"
#include "scan_latency.h"
#include "scan_lookback.cuh"

namespace ch16 {

// --- step 9: lookback-noticket ----------------------------------------------------------------

template <class T, int kRows>
__global__ void __launch_bounds__(kMaxLookbackBlock)
    scan_lookback_noticket(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                           Count* state) {
  const int64_t tile = blockIdx.x;  // no ticket: blocks start in the order of their index
  scan_tile<T, kVec16<T>, kRows>(in, out, n, tile, inclusive, [&](T aggregate) {
    return lookback_prefix<T, Lookback::kDecoupled>(state + 1, tile, aggregate);
  });
}
template <class T>
void launch_lookback_noticket(const sw::scan::ScanCall<T>& c) {
  const unsigned tiles = tile_count(c.n, c.block, c.rows, kVec16<T>);
  clear_state(c.state, tiles, c.stream);
  const auto kernel =
      ScanRows::pick(c.rows, [](auto r) { return scan_lookback_noticket<T, decltype(r)::value>; });
  kernel<<<tiles, c.block, 0, c.stream>>>(c.in, c.out, c.n, c.inclusive, c.state);
  CHECK_LAUNCH();  // no ticket drawn: *c.tickets stays 0
}

// --- step 10: lookback-early --------------------------------------------------------------------

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

// scan_tile with the aggregate first: each thread sums its elements, each warp its
// threads' sums (a butterfly), the block its warps' (warps_before, a barrier), and
// tile_prefix(aggregate) starts at once in warp 0 (it publishes, then looks back). The
// other warps scan their rows before they call it, warp 0 after: its look-back and
// their row scans overlap.
template <class T, int V, int kRows, class Prefix>
__device__ __forceinline__ void scan_tile_early(const T* __restrict__ in, T* __restrict__ out,
                                                int64_t n, int64_t tile, bool inclusive,
                                                Prefix&& tile_prefix) {
  const int64_t first = lane_first<V, kRows>(tile);
  const bool whole = tile_whole<V, kRows>(tile, n);
  Vec<T, V> x[kRows];
  load_rows<T, V, kRows>(in, n, first, whole, x);

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
  for (int r = 0; r < kRows; ++r) {
    T run = prefix + warp_before + before[r];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const T next = run + x[r].v[k];
      y[r].v[k] = inclusive ? next : run;
      run = next;
    }
  }
  store_rows<T, V, kRows>(out, n, first, whole, y);
}

template <class T, int kRows>
__global__ void __launch_bounds__(kMaxLookbackBlock)
    scan_lookback_early(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                        Count* state) {
  const int64_t tile = blockIdx.x;
  scan_tile_early<T, kVec16<T>, kRows>(in, out, n, tile, inclusive, [&](T aggregate) {
    return lookback_prefix<T, Lookback::kDecoupled>(state + 1, tile, aggregate);
  });
}
template <class T>
void launch_lookback_early(const sw::scan::ScanCall<T>& c) {
  const unsigned tiles = tile_count(c.n, c.block, c.rows, kVec16<T>);
  clear_state(c.state, tiles, c.stream);
  const auto kernel =
      ScanRows::pick(c.rows, [](auto r) { return scan_lookback_early<T, decltype(r)::value>; });
  kernel<<<tiles, c.block, 0, c.stream>>>(c.in, c.out, c.n, c.inclusive, c.state);
  CHECK_LAUNCH();
}

// --- step 11: lookback-backoff ------------------------------------------------------------------

// The pause after a poll that found a tile of the window unpublished: kFirstPauseNs,
// doubling up to kMaxPauseNs (__nanosleep sleeps up to twice what it is asked). A grid
// below kPauseMinTiles, about one wave of resident tiles on 132 SMs (2^20 elements
// make 256 to 342 tiles), is all latency: it polls without pauses.
constexpr unsigned kFirstPauseNs = 128;
constexpr unsigned kMaxPauseNs = 1024;
constexpr unsigned kPauseMinTiles = 1024;

// warp_lookback (scan_lookback.cuh), pausing between two polls of a window.
template <class T>
__device__ __forceinline__ T warp_lookback_backoff(Count* status, int64_t tile) {
  const int lane = threadIdx.x % sw::kWarp;
  const bool pauses = gridDim.x >= kPauseMinTiles;
  T aggregates = T{};
  for (int64_t window_end = tile;; window_end -= sw::kWarp) {
    const int64_t p = window_end - sw::kWarp + lane;
    TileStatus s;
    for (unsigned pause_ns = kFirstPauseNs;; pause_ns = min(2 * pause_ns, kMaxPauseNs)) {
      s = p >= 0 ? read_status(status + p) : TileStatus{kInclusive, 0};  // tile -1: identity
      if (!__any_sync(sw::kFullMask, s.flag == kInvalid)) break;
      if (pauses) __nanosleep(pause_ns);
    }
    const unsigned inclusive = __ballot_sync(sw::kFullMask, s.flag == kInclusive);
    const int nearest = inclusive ? sw::kWarp - 1 - __clz(inclusive) : -1;
    aggregates += warp_sum_all(lane > nearest ? from_bits<T>(s.bits) : T{});
    if (inclusive) return __shfl_sync(sw::kFullMask, from_bits<T>(s.bits), nearest) + aggregates;
  }
}

// lookback_prefix's decoupled look-back (scan_lookback.cuh), with warp_lookback_backoff.
template <class T>
__device__ __forceinline__ T lookback_prefix_backoff(Count* status, int64_t tile, T aggregate) {
  __shared__ T prefix;
  if (threadIdx.x < sw::kWarp) {
    T p = T{};
    if (tile > 0) {
      if (threadIdx.x == 0) publish(status + tile, kAggregate, to_bits(aggregate));
      p = warp_lookback_backoff<T>(status, tile);
    }
    if (threadIdx.x == 0) {
      publish(status + tile, kInclusive, to_bits<T>(p + aggregate));
      prefix = p;
    }
  }
  __syncthreads();
  return prefix;
}

// The tile of steps 11 and 12: blockIdx.x, the aggregate first, a look-back with pauses.
template <class T, int kRows>
__device__ __forceinline__ void tile_with_backoff(const T* __restrict__ in, T* __restrict__ out,
                                                  int64_t n, bool inclusive, Count* state) {
  const int64_t tile = blockIdx.x;
  scan_tile_early<T, kVec16<T>, kRows>(in, out, n, tile, inclusive, [&](T aggregate) {
    return lookback_prefix_backoff<T>(state + 1, tile, aggregate);
  });
}

template <class T, int kRows>
__global__ void __launch_bounds__(kMaxLookbackBlock)
    scan_lookback_backoff(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                          Count* state) {
  tile_with_backoff<T, kRows>(in, out, n, inclusive, state);
}
template <class T>
void launch_lookback_backoff(const sw::scan::ScanCall<T>& c) {
  const unsigned tiles = tile_count(c.n, c.block, c.rows, kVec16<T>);
  clear_state(c.state, tiles, c.stream);
  const auto kernel =
      ScanRows::pick(c.rows, [](auto r) { return scan_lookback_backoff<T, decltype(r)::value>; });
  kernel<<<tiles, c.block, 0, c.stream>>>(c.in, c.out, c.n, c.inclusive, c.state);
  CHECK_LAUNCH();
}

// --- step 12: lookback-lean ---------------------------------------------------------------------

// Registers for this many resident threads an SM (40 warps of 64) at every block size:
// 65536 / 1280, at most 48 a thread. The 6-row tile needs about 54 unbound (9 blocks of
// 128 an SM); bound, 10 fit, with a few registers spilled to local memory.
constexpr int kLeanThreadsPerSM = 1280;
constexpr int kMaxBlocksPerSM = 32;                 // sm_90 holds at most 32 blocks an SM
using LeanBlocks = Choices<32, 64, 128, 256, 512>;  // the blocks --block offers

// lookback-backoff's tile, its registers bound for kLeanThreadsPerSM threads an SM.
// __launch_bounds__'s minimum of blocks is per kernel: one kernel per block size.
template <class T, int kRows, int kBlock>
__global__ void __launch_bounds__(kBlock, std::min(kLeanThreadsPerSM / kBlock, kMaxBlocksPerSM))
    scan_lookback_lean(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                       Count* state) {
  tile_with_backoff<T, kRows>(in, out, n, inclusive, state);
}
template <class T>
void launch_lookback_lean(const sw::scan::ScanCall<T>& c) {
  const unsigned tiles = tile_count(c.n, c.block, c.rows, kVec16<T>);
  clear_state(c.state, tiles, c.stream);
  const auto kernel = LeanRows::pick(c.rows, [&](auto r) {
    return LeanBlocks::pick(c.block, [](auto b) {
      return scan_lookback_lean<T, decltype(r)::value, decltype(b)::value>;
    });
  });
  kernel<<<tiles, c.block, 0, c.stream>>>(c.in, c.out, c.n, c.inclusive, c.state);
  CHECK_LAUNCH();
}

// The launchers of the step table, for both element types.
template void launch_lookback_noticket<uint32_t>(const sw::scan::ScanCall<uint32_t>&);
template void launch_lookback_noticket<float>(const sw::scan::ScanCall<float>&);
template void launch_lookback_early<uint32_t>(const sw::scan::ScanCall<uint32_t>&);
template void launch_lookback_early<float>(const sw::scan::ScanCall<float>&);
template void launch_lookback_backoff<uint32_t>(const sw::scan::ScanCall<uint32_t>&);
template void launch_lookback_backoff<float>(const sw::scan::ScanCall<float>&);
template void launch_lookback_lean<uint32_t>(const sw::scan::ScanCall<uint32_t>&);
template void launch_lookback_lean<float>(const sw::scan::ScanCall<float>&);

}  // namespace ch16
