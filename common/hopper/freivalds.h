// Freivalds' check of a whole product C = A B^T (chapter 21), beside the entry-wise check of
// common/problems/gemm_reference.h, which compares a sample of the entries of a large C:
// this one looks at every entry, in O(m n + (m + n) k) work instead of O(m n k).
//
// With a random vector r of +1 and -1 (from the seed), y = C r is computed from the GPU's C and
// z = A (B^T r) from the inputs, both in double. Row i differs by sum_j (c_ij - want_ij) r_j,
// at most sum_j bound_ij = gamma'_{3k+2} sum_p |a_ip| v_p with v_p = sum_j |b_jp| (the bound of
// gemm_reference.h summed over the row: S_ij summed over j), plus the double sums' own error.
// A wrong entry beyond the whole row's bound shows with probability 1/2 per vector; two
// vectors are used. A NaN anywhere in a row fails it. Host C++ (common/tests/test_hopper.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/data.h"
#include "common/problems/gemm_reference.h"

namespace sw::hopper {

constexpr int kFreivaldsVectors = 2;

// "" when every row of c (m x n, fp32) agrees with a (m x k) times bt^T (bt: n x k), both the
// inputs' exact values; else the first row that does not, in one line.
inline std::string freivalds(const float* c, const float* a, const float* bt, int64_t m, int64_t n,
                             int64_t k, uint64_t seed) {
  std::vector<double> v(k, 0.0), w(k), r(n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) v[p] += std::fabs(static_cast<double>(bt[j * k + p]));
  const double slack = static_cast<double>(n + k + 2) * std::ldexp(1.0, -52);
  const double gamma = sw::gemm::truncation_gamma(3 * k + 2);
  for (int vec = 0; vec < kFreivaldsVectors; ++vec) {
    const uint64_t stream = mix64(seed + 0x9E3779B97F4A7C15ull * (vec + 1));
    for (int64_t j = 0; j < n; ++j) r[j] = random_bits(stream, j) & 1 ? 1.0 : -1.0;
    std::fill(w.begin(), w.end(), 0.0);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) w[p] += r[j] * bt[j * k + p];
    for (int64_t i = 0; i < m; ++i) {
      double y = 0, y_abs = 0, z = 0, row_scale = 0;
      for (int64_t j = 0; j < n; ++j) y += r[j] * c[i * n + j], y_abs += std::fabs(c[i * n + j]);
      for (int64_t p = 0; p < k; ++p) {
        z += static_cast<double>(a[i * k + p]) * w[p];
        row_scale += std::fabs(static_cast<double>(a[i * k + p])) * v[p];
      }
      const double bound = gamma * row_scale + slack * (row_scale + y_abs);
      if (std::fabs(y - z) <= bound) continue;  // false for NaN
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "Freivalds: row %lld: C r = %.9g, A (B^T r) = %.9g, |diff| > %.3g",
                    static_cast<long long>(i), y, z, bound);
      return buf;
    }
  }
  return "";
}

}  // namespace sw::hopper
