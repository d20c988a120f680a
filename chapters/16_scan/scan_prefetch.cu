// Chapter 16, steps 13 and 14: the next tile's loads in flight while this one waits.
// Steps 9 to 12 made a tile's wait shorter and held more tiles on an SM, and moved the
// rate by the tile's shape, not by its wait (docs/16_scan.md): a block has loads in
// flight only at its start. Here a block waits with its next tile's loads in flight.
// Both steps run a persistent grid, launched cooperatively (below): as many blocks as the
// GPU holds at once (sw::resident_grid, the occupancy calculator's count; fewer for fewer
// tiles), block b scanning tiles b, b + G, b + 2G, ... (G blocks), each tile as
// lookback-lean's (6 rows x 128 threads, the aggregate first, pauses between polls), the
// registers not bound.
//   lookback-prefetch  before a tile is reduced, published and looked back, the block
//                      issues the 16-byte loads of its next tile into a second set of
//                      registers; they land while this tile waits, scans and stores, and
//                      move to the first set at the end (a copy that waits for them if
//                      they have not landed). The simplest form: plain loads, no new
//                      instruction. Its price: the second set, 24 registers a thread at
//                      6 rows (94 u32, 100 f32 by ptxas at sm_90: 5 or 4 blocks of 128 an
//                      SM, each with a tile of loads in flight while it waits).
//   lookback-async     + the next tile waits in shared memory, not in registers: a ring
//                      of two stages, the next tile's rows copied into one by cp.async
//                      (__pipeline_memcpy_async, 16 bytes a lane and row, from L2 to
//                      shared memory without a register) while this tile, read from the
//                      other, is scanned. 64 registers at 6 rows and 24 KB of stages a
//                      block of 128: 8 blocks an SM (CUB's count for its scan), each with
//                      a tile of loads in flight. A lane reads back only its own 16-byte
//                      pieces, and a stage is refilled a tile after it was read, past
//                      the two barriers of that tile: the ring needs no barrier of its own.
// Why not two tiles ahead: in registers it takes a third set (about 125 registers at
// 6 rows, 4 blocks of 128); in the ring, a third stage (36 KB a block at 6 x 128, 6
// blocks an SM). Either is the next step if one tile ahead is not enough.
// Every block of the grid must be resident at once: a block waits for the tiles of all
// the others, and one that never started would hang them. A cooperative launch
// (cudaLaunchAttributeCooperative) guarantees it: the GPU runs every block at once or
// refuses the launch with an error. No ticket is drawn.
#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/scan_call.h"
#include "scan_latency.h"
#include "scan_lookback.cuh"
#include "scan_tile_early.cuh"  // the tile of steps 10 to 12: the aggregate first, pauses

namespace ch16 {

// The rows of `tile` into x, if the scan has that tile (a block past its last loads none).
template <class T, int V, int kRows>
__device__ __forceinline__ void load_tile(const T* __restrict__ in, int64_t n, int64_t tile,
                                          int64_t tiles, Vec<T, V> (&x)[kRows]) {
  if (tile < tiles)
    load_rows<T, V, kRows>(in, n, lane_first<V, kRows>(tile), tile_whole<V, kRows>(tile, n), x);
}

// The look-back of steps 13 and 14: lookback-lean's, over the scan's `tiles`.
template <class T>
struct PrefixWithBackoff {
  Count* status;
  int64_t tile, tiles;
  __device__ T operator()(T aggregate) const {
    return lookback_prefix_backoff<T>(
        status, tile, [this] { return tiles; }, aggregate);
  }
};

// --- step 13: lookback-prefetch -----------------------------------------------------------------

// Block b scans tiles b + i * gridDim.x: the loads of the next into `next`, then this one.
template <class T, int kRows>
__global__ void __launch_bounds__(kMaxLookbackBlock)
    scan_lookback_prefetch(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                           Count* state) {
  constexpr int V = kVec16<T>;
  const int64_t tiles = sw::ceil_div(n, tile_items(blockDim.x, kRows, V));
  Vec<T, V> x[kRows], next[kRows];
  load_tile<T, V, kRows>(in, n, blockIdx.x, tiles, x);
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    load_tile<T, V, kRows>(in, n, tile + gridDim.x, tiles, next);
    finish_tile_early<T, V, kRows>(x, out, n, lane_first<V, kRows>(tile),
                                   tile_whole<V, kRows>(tile, n), inclusive,
                                   PrefixWithBackoff<T>{state + 1, tile, tiles});
#pragma unroll
    for (int r = 0; r < kRows; ++r) x[r] = next[r];
  }
}

// A cooperative launch of `grid` blocks on `stream`, for cudaLaunchKernelEx: every block
// resident at once, or an error.
struct ResidentLaunch {
  ResidentLaunch(unsigned grid, int block, size_t shared_bytes, cudaStream_t stream) {
    attr.id = cudaLaunchAttributeCooperative;
    attr.val.cooperative = 1;
    config.gridDim = dim3(grid);
    config.blockDim = dim3(static_cast<unsigned>(block));
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    config.attrs = &attr;
    config.numAttrs = 1;
  }
  ResidentLaunch(const ResidentLaunch&) = delete;  // config points at attr
  ResidentLaunch& operator=(const ResidentLaunch&) = delete;

  cudaLaunchAttribute attr = {};
  cudaLaunchConfig_t config = {};
};

// Zeroes the status words (and the unused ticket word), launches the kernel compiled for
// c.rows on the blocks the GPU holds at once (fewer for a scan of fewer tiles).
template <class T>
void launch_lookback_prefetch(const sw::scan::ScanCall<T>& c) {
  const unsigned tiles = tile_count(c.n, c.block, c.rows, kVec16<T>);
  clear_state(c.state, tiles, c.stream);
  const auto kernel =
      LeanRows::pick(c.rows, [](auto r) { return scan_lookback_prefetch<T, decltype(r)::value>; });
  const auto grid =
      static_cast<unsigned>(std::min<int64_t>(tiles, sw::resident_grid(kernel, c.block)));
  const ResidentLaunch launch(grid, c.block, 0, c.stream);
  CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel, c.in, c.out, c.n, c.inclusive, c.state));
  CHECK_LAUNCH();  // no ticket drawn: *c.tickets stays 0
}

// --- step 14: lookback-async --------------------------------------------------------------------

constexpr int kRingStages = 2;  // the tile being scanned and the next

// Starts the copies of `tile`'s rows into `stage` (this lane's piece of row r at
// stage[r * blockDim.x + threadIdx.x]) and closes them as one group, empty for a tile
// the scan does not have or that is not whole (the last: it is loaded directly).
template <class T, int V, int kRows>
__device__ __forceinline__ void stage_tile(const T* __restrict__ in, int64_t n, int64_t tile,
                                           int64_t tiles, Vec<T, V>* stage) {
  if (tile < tiles && tile_whole<V, kRows>(tile, n)) {
    const int64_t first = lane_first<V, kRows>(tile);
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      __pipeline_memcpy_async(stage + r * blockDim.x + threadIdx.x, in + first + r * sw::kWarp * V,
                              sizeof(Vec<T, V>));
  }
  __pipeline_commit();
}

// Block b scans tiles b + i * gridDim.x; tile i's rows wait in stage i % kRingStages.
template <class T, int kRows>
__global__ void __launch_bounds__(kMaxLookbackBlock)
    scan_lookback_async(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                        Count* state) {
  constexpr int V = kVec16<T>;
  extern __shared__ uint4 ring_words[];  // kRingStages stages of kRows x blockDim.x pieces
  Vec<T, V>* const ring = reinterpret_cast<Vec<T, V>*>(ring_words);
  const int64_t tiles = sw::ceil_div(n, tile_items(blockDim.x, kRows, V));
  const int stage_pieces = kRows * blockDim.x;
  stage_tile<T, V, kRows>(in, n, blockIdx.x, tiles, ring);
  int stage = 0;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    stage_tile<T, V, kRows>(in, n, tile + gridDim.x, tiles,
                            ring + (1 - stage) * stage_pieces);  // kRingStages == 2
    __pipeline_wait_prior(1);  // this tile's group has landed; the next one's may not
    const int64_t first = lane_first<V, kRows>(tile);
    const bool whole = tile_whole<V, kRows>(tile, n);
    Vec<T, V> x[kRows];
    if (whole) {
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        x[r] = ring[stage * stage_pieces + r * blockDim.x + threadIdx.x];
    } else {
      load_rows<T, V, kRows>(in, n, first, false, x);
    }
    finish_tile_early<T, V, kRows>(x, out, n, first, whole, inclusive,
                                   PrefixWithBackoff<T>{state + 1, tile, tiles});
    stage = 1 - stage;
  }
}

// As launch_lookback_prefetch, with kRingStages tiles of shared memory a block.
template <class T>
void launch_lookback_async(const sw::scan::ScanCall<T>& c) {
  const unsigned tiles = tile_count(c.n, c.block, c.rows, kVec16<T>);
  clear_state(c.state, tiles, c.stream);
  const auto kernel =
      LeanRows::pick(c.rows, [](auto r) { return scan_lookback_async<T, decltype(r)::value>; });
  const size_t ring_bytes = kRingStages * tile_items(c.block, c.rows, kVec16<T>) * sizeof(T);
  allow_shared(kernel, ring_bytes);
  // resident_grid counts the blocks that fit the largest shared-memory carveout: ask for it
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared));
  const auto grid = static_cast<unsigned>(
      std::min<int64_t>(tiles, sw::resident_grid(kernel, c.block, ring_bytes)));
  const ResidentLaunch launch(grid, c.block, ring_bytes, c.stream);
  CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel, c.in, c.out, c.n, c.inclusive, c.state));
  CHECK_LAUNCH();  // no ticket drawn: *c.tickets stays 0
}

// The launchers of the step table, for both element types.
template void launch_lookback_prefetch<uint32_t>(const sw::scan::ScanCall<uint32_t>&);
template void launch_lookback_prefetch<float>(const sw::scan::ScanCall<float>&);
template void launch_lookback_async<uint32_t>(const sw::scan::ScanCall<uint32_t>&);
template void launch_lookback_async<float>(const sw::scan::ScanCall<float>&);

}  // namespace ch16
