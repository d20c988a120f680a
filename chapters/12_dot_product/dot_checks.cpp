// Chapter 12's checks (--verify-only), its CPU reference and its CPU baselines.
// Part of the program 12_dot_product; the step table is in 12_dot_product.cu.
#include "dot_checks.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/data.h"
#include "common/parallel.h"

namespace {

constexpr int kRefChunks = 64;  // parallel chunks of the CPU reference

// Data whose dot product float computes exactly in any order: products in [-16, 16],
// so every partial sum is an integer below 2^24 while 16 n < 2^24.
constexpr int64_t kExactMaxN = (int64_t{1} << 24) / 16 - 1;
void fill_small_integers(float* x, int64_t n, uint64_t seed) {
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(static_cast<int>(sw::random_bits(seed, i) % 9) - 4);
}

}  // namespace

ch12::DotRef ch12::dot_reference(const float* x, const float* y, int64_t n) {
  std::vector<double> part(kRefChunks, 0.0), part_abs(kRefChunks, 0.0);
  sw::parallel_for(
      kRefChunks,
      [&](int64_t cb, int64_t ce) {
        for (int64_t c = cb; c < ce; ++c) {
          double s = 0, a = 0;
          for (int64_t i = n * c / kRefChunks; i < n * (c + 1) / kRefChunks; ++i) {
            const double p = static_cast<double>(x[i]) * y[i];
            s += p;
            a += std::fabs(p);
          }
          part[c] = s, part_abs[c] = a;
        }
      },
      1);  // the items are chunks: one thread per core
  DotRef r;
  for (int c = 0; c < kRefChunks; ++c) r.value += part[c], r.abs_sum += part_abs[c];
  return r;
}

// The CPU baselines: one double accumulator on one core (a lesson), and the same
// loop on every core over contiguous slices, the slice sums added in order ("vs CPU").
double ch12::dot_serial_double(const float* x, const float* y, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * y[i];
  return s;
}
double ch12::dot_all_cores_double(const float* x, const float* y, int64_t n) {
  const int64_t parts = sw::host_threads();
  std::vector<double> partial(static_cast<size_t>(parts), 0.0);
  sw::parallel_for(
      parts,
      [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          const int64_t lo = n * p / parts, hi = n * (p + 1) / parts;
          partial[p] = ch12::dot_serial_double(x + lo, y + lo, hi - lo);
        }
      },
      1);
  double s = 0;
  for (double v : partial) s += v;
  return s;
}

int ch12::verify(sw::Report& report, uint64_t seed) {
  const int64_t sizes[] = {1,    2,    3,    4,     5,       31,
                           32,   33,   255,  256,   257,     1000,
                           1023, 1024, 1025, 65537, 1000003, (int64_t{1} << 22) + 1};
  for (int64_t n : sizes) {
    for (const bool exact : {false, true}) {  // exact: small integers, the answer must be exact
      if (exact && n > kExactMaxN) continue;
      std::vector<float> x(n), y(n);
      if (exact) {
        fill_small_integers(x.data(), n, seed);
        fill_small_integers(y.data(), n, seed + 1);
      } else {
        sw::host_fill_floats(x.data(), n, seed);
        sw::host_fill_floats(y.data(), n, seed + 1);
      }
      const std::string at =
          std::string(exact ? " integers" : " random") + " n=" + std::to_string(n);
      for (const Answer& a : run_every_step(x.data(), y.data(), n, exact))
        report.check(a.ok, a.name + at, a.detail);
    }
  }
  return report.exit_code();
}
