// Launching chapter 16's scans, shared through scan_lookback.cuh with chapters 17 and 18:
// the rows and blocks the kernels are compiled for, the tile count, the clearing of
// the ticket and status words, and the launcher of a single-pass scan.
#pragma once

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "scan_tile_io.cuh"

namespace ch16 {

// A list of the values a template parameter is compiled for: list() for the command
// line, dispatch(v, f) calls f(std::integral_constant<int, v>{}) at run time.
template <int... kValues>
struct Choices {
  static std::vector<int> list() { return {kValues...}; }
  template <class F>
  static void dispatch(int v, F&& f) {
    const bool found =
        ((v == kValues ? (f(std::integral_constant<int, kValues>{}), true) : false) || ...);
    if (!found) {
      std::fprintf(stderr, "error: no kernel compiled for %d\n", v);
      std::exit(1);
    }
  }
};

// The rows per warp the scan kernels are compiled for (--tile-rows), the block sizes
// they take (--block, a run-time value), and the defaults.
using ScanRows = Choices<1, 2, 4, 8>;
constexpr int kBlockChoices[] = {32, 64, 128, 256, 512};
constexpr int kDefaultRows = 4;     // 16 elements per thread with 16-byte loads
constexpr int kDefaultBlock = 256;  // a tile of 4096 four-byte elements

// Tiles of this shape over n, checked against gridDim.x's limit.
inline unsigned tile_count(int64_t n, int block, int rows, int vec) {
  const int64_t tiles = sw::ceil_div(n, tile_items(block, rows, vec));
  if (tiles < 1 || tiles > INT_MAX) {
    std::fprintf(stderr, "error: %lld tiles do not fit in gridDim.x\n",
                 static_cast<long long>(tiles));
    std::exit(1);
  }
  return static_cast<unsigned>(tiles);
}

// Zeroes the ticket and the tiles' status words on `stream` (part of every scan).
inline void clear_state(Count* state, int64_t tiles, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(state, 0, static_cast<size_t>(tiles + 1) * sizeof(Count), stream));
}

// Zeroes the ticket and status words, then launches pick(rows)'s kernel (a single-pass
// scan compiled for those rows, one of Rows) over the tiles of n. `state` holds at least tiles + 1
// words. Returns the number of tiles: the tickets the launch must draw.
template <class T, int V, class Rows = ScanRows, class Pick>
int64_t launch_single_pass(Pick&& pick, const T* in, T* out, int64_t n, bool inclusive, int rows,
                           int block, Count* state, cudaStream_t stream) {
  const unsigned tiles = tile_count(n, block, rows, V);
  clear_state(state, tiles, stream);
  Rows::dispatch(rows, [&](auto r) {
    const auto kernel = pick(r);
    kernel<<<tiles, block, 0, stream>>>(in, out, n, inclusive, state);
    CHECK_LAUNCH();
  });
  return tiles;
}

}  // namespace ch16
