// Launching chapter 16's scans, shared through scan_lookback.cuh with chapters 17 and 18:
// the rows and blocks the kernels are compiled for (and the pick of the kernel compiled
// for a run-time --tile-rows), the tile count, the clearing of the ticket and status
// words, and the dynamic shared memory a kernel asks for. Each launcher holds its own
// <<<>>>, right under its kernel.
#pragma once

#include <climits>
#include <cstddef>
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
// line; pick(v, f) returns f(std::integral_constant<int, v>{}) for a run-time v (the
// kernel compiled for v, taken by a launcher beside its <<<>>>).
template <int... kValues>
struct Choices {
  static std::vector<int> list() { return {kValues...}; }
  template <class F>
  static auto pick(int v, F&& f) {
    std::common_type_t<decltype(f(std::integral_constant<int, kValues>{}))...> picked{};
    const bool found =
        ((v == kValues ? (picked = f(std::integral_constant<int, kValues>{}), true) : false) ||
         ...);
    if (!found) {
      std::fprintf(stderr, "error: no kernel compiled for %d\n", v);
      std::exit(1);
    }
    return picked;
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

// Lets `kernel` take `bytes` of dynamic shared memory a block: past 48 KB, dynamic and
// static together, a kernel has to ask (cudaFuncSetAttribute); asking below is harmless,
// so a launcher asks whenever its kernel takes any.
template <class Kernel>
void allow_shared(Kernel kernel, size_t bytes) {
  if (bytes > 0)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)));
}

}  // namespace ch16
