// What a scan launcher gets (the scan track's problem, common/problems/scan.h): one whole
// scan of in into out, on `stream`, and the scratch it may use. A header of its own,
// apart from scan.h (which includes CUB), so that a file of launchers alone (chapter
// 16's scan_latency.cu) compiles without CUB's kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace sw::scan {

// One whole scan of in into out, on `stream`.
template <class T>
struct ScanCall {
  const T* in;
  T* out;
  int64_t n;
  bool inclusive;
  int rows, block;            // the tile of the single-pass steps (--tile-rows, --block)
  T* partials;                // ceil(n / 32) + 64 elements: block or tile sums (16-byte aligned)
  unsigned long long* state;  // ceil(n / kMinTile) + 1 words (scan.h): the ticket, then one
                              // status word per tile
  int64_t* tickets;           // the launcher writes the tickets its kernels must draw (if any)
  cudaStream_t stream;
};
template <class T>
using ScanLaunch = void (*)(const ScanCall<T>&);

}  // namespace sw::scan
