// Chapter 16, steps 9 to 12 and 15: the single pass of lookback-vec (step 8), one change
// at a time, each against the latency of a tile. A tile's life in lookback-vec: a ticket (an
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
//   lookback-backoff   + pauses: __nanosleep for kFirstPollNs once the aggregate is
//                      published, before the first poll, and kPollPauseNs between polls
//                      of a window not yet published (CUB's sm_90 values); none in a scan
//                      below kPauseMinTiles. A poll too early mostly finds the predecessors
//                      unpublished; a spinning warp takes issue slots from the tiles loading
//                      on its SM and reads the L2 lines every waiting tile reads.
//   lookback-lean      + registers for kLeanThreadsPerSM threads an SM (__launch_bounds__'s
//                      minimum of blocks), and its own tile: 128 threads x 6 rows, 24
//                      elements a thread (kLeanBlock, kLeanRows in scan_latency.h, CUB's
//                      sm_90 tile for 4-byte sums): more tiles resident, more loads in
//                      flight while other tiles wait.
//   lookback-l2-prefetch  + thread 0 asks the L2 for the input kL2AheadBytes (4 MiB) ahead of
//                      its tile, one cp.async.bulk.prefetch.L2, before its own loads: the
//                      DRAM streams without waiting for blocks to start (steps 13 and 14
//                      kept that prefetch in registers or shared memory, and lost blocks).
// The tile functions of steps 10 and 11 (scan_tile_early, lookback_prefix_backoff) are in
// scan_tile_early.cuh, which steps 13 and 14 (scan_prefetch.cu) share. Every launcher
// zeroes the status words (and the unused ticket word) and launches one block per tile;
// the kernels take their status words at state + 1, as lookback-vec's.
#include <algorithm>
#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/scan_call.h"
#include "scan_latency.h"
#include "scan_lookback.cuh"
#include "scan_tile_early.cuh"  // steps 10 and 11: the aggregate first, pauses between polls

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

// The tile of steps 11 and 12: blockIdx.x, the aggregate first, a look-back with pauses
// (a grid of one block per tile: gridDim.x is the scan's count of tiles).
template <class T, int kRows>
__device__ __forceinline__ void tile_with_backoff(const T* __restrict__ in, T* __restrict__ out,
                                                  int64_t n, bool inclusive, Count* state) {
  const int64_t tile = blockIdx.x;
  scan_tile_early<T, kVec16<T>, kRows>(in, out, n, tile, inclusive, [&](T aggregate) {
    return lookback_prefix_backoff<T>(
        state + 1, tile, [] { return gridDim.x; }, aggregate);
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

// --- step 15: lookback-l2-prefetch -------------------------------------------------------------

// lookback-lean's kernel, and first, by thread 0, the L2 prefetch of the tile `ahead` tiles
// after this one (prefetch_tile_l2, scan_tile_io.cuh). The DRAM reads no longer wait for a
// block to start: while tiles wait on their look-backs, the L2 keeps fetching the input
// kL2AheadBytes ahead, and a tile's own loads find it there.
template <class T, int kRows, int kBlock>
__global__ void __launch_bounds__(kBlock, std::min(kLeanThreadsPerSM / kBlock, kMaxBlocksPerSM))
    scan_lookback_l2_prefetch(const T* __restrict__ in, T* __restrict__ out, int64_t n,
                              bool inclusive, Count* state, int64_t ahead) {
  prefetch_tile_l2(in, n, blockIdx.x + ahead, tile_items(kBlock, kRows, kVec16<T>));
  tile_with_backoff<T, kRows>(in, out, n, inclusive, state);
}
template <class T>
void launch_lookback_l2_prefetch(const sw::scan::ScanCall<T>& c) {
  const unsigned tiles = tile_count(c.n, c.block, c.rows, kVec16<T>);
  const int64_t ahead = l2_ahead_tiles(tile_items(c.block, c.rows, kVec16<T>), sizeof(T));
  clear_state(c.state, tiles, c.stream);
  const auto kernel = LeanRows::pick(c.rows, [&](auto r) {
    return LeanBlocks::pick(c.block, [](auto b) {
      return scan_lookback_l2_prefetch<T, decltype(r)::value, decltype(b)::value>;
    });
  });
  kernel<<<tiles, c.block, 0, c.stream>>>(c.in, c.out, c.n, c.inclusive, c.state, ahead);
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
template void launch_lookback_l2_prefetch<uint32_t>(const sw::scan::ScanCall<uint32_t>&);
template void launch_lookback_l2_prefetch<float>(const sw::scan::ScanCall<float>&);

}  // namespace ch16
