// Chapter 12's checks (--verify-only: DotProblem::verify), its CPU reference and its CPU
// baselines. Part of the program 12_dot_product; the versions are in 12_dot_product.cu.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/data.h"
#include "common/parallel.h"
#include "common/report.h"
#include "dot_problem.h"

namespace {

constexpr int kRefChunks = 64;  // parallel chunks of the CPU reference

// Data whose dot product float computes exactly in any order: products in [-16, 16],
// so every partial sum is an integer below 2^24 while 16 n < 2^24.
constexpr int64_t kExactMaxN = (int64_t{1} << 24) / 16 - 1;
void fill_small_integers(float* x, int64_t n, uint64_t seed) {
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(static_cast<int>(sw::random_bits(seed, i) % 9) - 4);
}

// The vendor and every chosen step once on x and y (n floats each, in host memory),
// each on a poisoned result (sw::bench::check_once): against the reference within the
// row's bound, or exactly when `exact`, and x and y on the device as uploaded. One
// PASS/FAIL line each.
void check_steps(const sw::bench::Session<ch12::Step>& s, const ch12::Step& vendor, const float* x,
                 const float* y, int64_t n, bool exact, const std::string& at) {
  ch12::Dot d(n);
  std::copy(x, x + n, d.hx.begin());
  std::copy(y, y + n, d.hy.begin());
  d.upload();
  d.ref = ch12::dot_reference(x, y, n);
  std::vector<ch12::Step> rows = {vendor};
  rows.insert(rows.end(), s.steps.begin(), s.steps.end());
  for (const ch12::Step& st : rows) {
    const ch12::DotData data{{d}, st.more.from, st.more.depth(d), exact, true, d.uploaded};
    const sw::bench::Verdict v = sw::bench::check_once(data, st.launch, std::ref(d));
    s.report.check(v.ok, st.name + at, v.detail);
  }
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

void ch12::DotProblem::verify(const sw::bench::Session<Step>& s) {
  const std::vector<int64_t> sweep = {1,    2,    3,    4,     5,       31,
                                      32,   33,   255,  256,   257,     1000,
                                      1023, 1024, 1025, 65537, 1000003, (int64_t{1} << 22) + 1};
  const bool n_given = s.cli.was_given("--n");
  if (n_given)  // x, y, and those of one allocate-per-call call, on the device at once
    sw::require_fits(s.gpu, "--n", n, 4.0 * sizeof(float),
                     2.0 * first_pass_max_blocks() * kChunks * sizeof(float));
  const uint64_t seed = static_cast<uint64_t>(s.opt.seed);
  const std::vector<int64_t> sizes = n_given ? std::vector<int64_t>{n} : sweep;
  for (const int64_t n : sizes) {             // shadows the member
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
      check_steps(s, vendor, x.data(), y.data(), n, exact, at);
    }
  }
}
