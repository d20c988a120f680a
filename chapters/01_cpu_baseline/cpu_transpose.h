// Chapter 01's transpose (in is rows x cols, out is cols x rows, both row-major): naive,
// blocked in tiles, and either of them on all cores in bands of tile rows. Defines what
// cpu_baseline.h declares; included once, by 01_cpu_baseline.cpp.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/parallel.h"
#include "cpu_baseline.h"

namespace ch01 {

constexpr int64_t kTile = 32;  // blocked transpose: 32 x 32 floats stay in L1

// Naive: walks the output in order, so reads jump by `cols` floats and each read
// touches a new cache line. Rows [r0, r1) of `in` only.
void transpose_naive(const float* in, float* out, int64_t rows, int64_t cols, int64_t r0,
                     int64_t r1) {
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
}

// Blocked: the same in kTile x kTile tiles, so that the tile read and the tile
// written both stay in L1. Rows [r0, r1) of `in` only.
void transpose_blocked(const float* in, float* out, int64_t rows, int64_t cols, int64_t r0,
                       int64_t r1) {
  for (int64_t rb = r0; rb < r1; rb += kTile) {
    const int64_t re = std::min(rb + kTile, r1);
    for (int64_t cb = 0; cb < cols; cb += kTile) {
      const int64_t ce = std::min(cb + kTile, cols);
      for (int64_t c = cb; c < ce; ++c)
        for (int64_t r = rb; r < re; ++r) out[c * rows + r] = in[r * cols + c];
    }
  }
}

// All cores: each thread takes a band of whole tiles' rows; the bands write
// disjoint columns of `out`.
void transpose_on_threads(TransposeRows transpose, const float* in, float* out, int64_t rows,
                          int64_t cols, int64_t threads) {
  const int64_t tile_rows = (rows + kTile - 1) / kTile;
  sw::parallel_for(
      threads,
      [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t lo = tile_rows * t / threads * kTile,
                        hi = tile_rows * (t + 1) / threads * kTile;
          transpose(in, out, rows, cols, std::min(lo, rows), std::min(hi, rows));
        }
      },
      /*grain=*/1);
}

}  // namespace ch01
