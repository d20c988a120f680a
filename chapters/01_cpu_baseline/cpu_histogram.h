// Chapter 01's histogram of bytes into 256 bins: one core with four sub-histograms, and
// all cores with one private histogram per slice. Defines what cpu_baseline.h declares;
// included once, by 01_cpu_baseline.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "common/parallel.h"
#include "cpu_baseline.h"

namespace ch01 {

// Four sub-histograms: runs of equal bytes would otherwise wait on the store to
// the same bin before each increment (a store-to-load chain).
void histogram_one_core(const uint8_t* bytes, int64_t n, uint64_t bins[256]) {
  std::vector<uint64_t> sub(4 * 256, 0);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    ++sub[bytes[i]];
    ++sub[256 + bytes[i + 1]];
    ++sub[512 + bytes[i + 2]];
    ++sub[768 + bytes[i + 3]];
  }
  for (; i < n; ++i) ++sub[bytes[i]];
  for (int b = 0; b < 256; ++b) bins[b] = sub[b] + sub[256 + b] + sub[512 + b] + sub[768 + b];
}

// All cores: one private histogram per slice, added up at the end.
void histogram_on_threads(const uint8_t* bytes, int64_t n, uint64_t bins[256], int64_t threads) {
  std::vector<uint64_t> part(threads * 256);
  sw::parallel_for(
      threads,
      [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
          histogram_one_core(bytes + lo, hi - lo, &part[t * 256]);
        }
      },
      /*grain=*/1);
  for (int b = 0; b < 256; ++b) {
    bins[b] = 0;
    for (int64_t t = 0; t < threads; ++t) bins[b] += part[t * 256 + b];
  }
}

}  // namespace ch01
