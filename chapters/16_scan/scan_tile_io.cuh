// Chapter 16's tile in memory, shared through scan_lookback.cuh with chapters 17 and 18:
// the element count type and the block limits, the V-wide vector of a lane, and each
// lane's loads and stores of its kRows rows (whole tiles with one access a row, the
// last tile element by element).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "common/cli.h"  // parse_integer
#include "common/cuda_utils.cuh"

namespace ch16 {

using Count = unsigned long long;  // element counts and offsets: 64-bit everywhere
constexpr int kMaxBlock = 1024;
constexpr int kMaxWarps = kMaxBlock / sw::kWarp;
constexpr int kMaxLookbackBlock = 512;  // the single-pass kernels' __launch_bounds__

// --- values ------------------------------------------------------------------------------

// V consecutive elements, loaded and stored as one access (16 bytes when V = 16 / sizeof(T)).
template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};
template <class T>
constexpr int kVec16 = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte access

// --- tiles ----------------------------------------------------------------------------------

// Elements one block scans: its threads x rows x V.
__host__ __device__ constexpr int64_t tile_items(int block, int rows, int vec) {
  return int64_t{block} * rows * vec;
}

// The kRows rows of this lane in `tile`, from `in`; elements past n read as T{} (0).
// A whole tile loads every row with one V-wide access; the last tile checks each element.
template <class T, int V, int kRows>
__device__ __forceinline__ void load_rows(const T* __restrict__ in, int64_t n, int64_t first,
                                          bool whole, Vec<T, V> (&x)[kRows]) {
  constexpr int kRow = sw::kWarp * V;
  if (whole) {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      x[r] = *reinterpret_cast<const Vec<T, V>*>(in + first + r * kRow);
  } else {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const int64_t i = first + r * kRow + k;
        x[r].v[k] = i < n ? in[i] : T{};
      }
  }
}

// One V-wide store; 16 bytes go out as one uint4 store (__stwb: the default
// write-back policy), which the compiler cannot split into four.
template <class T, int V>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, V>& y) {
  if constexpr (sizeof(Vec<T, V>) == sizeof(uint4)) {
    uint4 u;
    memcpy(&u, &y, sizeof u);
    __stwb(reinterpret_cast<uint4*>(p), u);
  } else {
    *reinterpret_cast<Vec<T, V>*>(p) = y;
  }
}

template <class T, int V, int kRows>
__device__ __forceinline__ void store_rows(T* __restrict__ out, int64_t n, int64_t first,
                                           bool whole, const Vec<T, V> (&y)[kRows]) {
  constexpr int kRow = sw::kWarp * V;
  if (whole) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) store_vec(out + first + r * kRow, y[r]);
  } else {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int k = 0; k < V; ++k)
        if (first + r * kRow + k < n) out[first + r * kRow + k] = y[r].v[k];
  }
}

// --- the L2 prefetch of a tile ahead (chapter 16's step 15, chapter 17's step 5) ----------

// How far ahead of the tiles being scanned the input is prefetched into the L2: 4 MiB,
// several hundred tiles, more than the tiles resident on the GPU load at once and a
// tenth of the L2 (the chapter's sweep of 1 to 6 MiB on an H100 peaked at 3 to 4).
constexpr int64_t kL2AheadBytes = int64_t{4} << 20;
constexpr int64_t kL2AheadMaxKiB = 64 << 10;  // the knob's range: 1 KiB to 64 MiB

// kL2AheadBytes, or the distance the environment's STEPWISE_L2_AHEAD_KIB names (1 to
// 65536 KiB), read once: the knob of chapter 16's sweep (sweep.py --l2-ahead) and of the
// chapter's exercise, a distance tried without a rebuild. When set, one line on stderr says
// so; another value is a one-line error and exit 2. The tour refuses to write results with
// it set: the results files hold the distance above.
inline int64_t l2_ahead_bytes() {
  static const int64_t bytes = [] {
    const char* v = std::getenv("STEPWISE_L2_AHEAD_KIB");
    if (v == nullptr) return kL2AheadBytes;
    int64_t kib = 0;  // the options' integers: 8192, 2^13, 8e3
    if (!sw::parse_integer(v, &kib) || kib < 1 || kib > kL2AheadMaxKiB) {
      std::fprintf(stderr,
                   "error: STEPWISE_L2_AHEAD_KIB=%s: expected an integer from 1 to %lld (KiB)\n", v,
                   static_cast<long long>(kL2AheadMaxKiB));
      std::exit(2);
    }
    std::fprintf(
        stderr,
        "note: STEPWISE_L2_AHEAD_KIB=%s: the L2 prefetch runs that many KiB ahead, not %lld\n", v,
        static_cast<long long>(kL2AheadBytes >> 10));
    return kib << 10;
  }();
  return bytes;
}

// The tiles of `items` elements of T that l2_ahead_bytes() cover (at least 1).
inline int64_t l2_ahead_tiles(int64_t items, int64_t elem_bytes) {
  const int64_t tiles = l2_ahead_bytes() / (items * elem_bytes);
  return tiles > 0 ? tiles : 1;
}

// Asks the L2 to fetch `tile`'s elements of in (tiles of `items`), if it lies before n,
// without waiting for them: thread 0 issues one bulk prefetch (sm_90's
// cp.async.bulk.prefetch.L2, whole 16-byte pieces); older GPUs get one prefetch.global.L2
// of each 128-byte line, one a thread. No register, shared memory or barrier is involved,
// and nothing is returned: the tile's own loads, later, find the lines in the L2.
template <class T>
__device__ __forceinline__ void prefetch_tile_l2(const T* in, int64_t n, int64_t tile,
                                                 int64_t items) {
  const int64_t first = tile * items;
  if (first >= n) return;
  const int64_t bytes = (n - first < items ? n - first : items) * static_cast<int64_t>(sizeof(T));
  const char* p = reinterpret_cast<const char*>(in + first);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned whole = static_cast<unsigned>(bytes) & ~15u;  // a multiple of 16 bytes
  if (threadIdx.x == 0 && whole > 0)
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(whole) : "memory");
#else
  constexpr int kLine = 128;
  for (int64_t b = int64_t{threadIdx.x} * kLine; b < bytes; b += int64_t{blockDim.x} * kLine)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p + b));
#endif
}

// This lane's first element in `tile` (row 0), and whether the tile lies inside [0, n).
template <int V, int kRows>
__device__ __forceinline__ int64_t lane_first(int64_t tile) {
  const int64_t items = tile_items(blockDim.x, kRows, V);
  const int warp = threadIdx.x / sw::kWarp, lane = threadIdx.x % sw::kWarp;
  return tile * items + (int64_t{warp} * kRows * sw::kWarp + lane) * V;
}
template <int V, int kRows>
__device__ __forceinline__ bool tile_whole(int64_t tile, int64_t n) {
  return (tile + 1) * tile_items(blockDim.x, kRows, V) <= n;
}

}  // namespace ch16
