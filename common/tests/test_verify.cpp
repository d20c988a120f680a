// CPU references and tolerances, against cases worked out by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/data.h"
#include "common/verify.h"

TEST_CASE("reference sums of hand-computed cases") {
  // The float loops of chapter 01 are checked by its own --verify-only.
  const std::vector<float> x = {1.0f, -2.0f, 3.5f, 0.25f};
  CHECK(sw::sum_pairwise_double(x.data(), 4) == 2.75);
  CHECK(sw::sum_abs_double(x.data(), 4) == 6.75);
  CHECK(sw::sum_pairwise_double(x.data(), 1) == 1.0);
  CHECK(sw::sum_pairwise_double(x.data(), 0) == 0.0);
}

TEST_CASE("the reference keeps every small addend, split into chunks or not") {
  // 2^24 + 2 ones: a float loop stalls at 2^24; the double reference does not.
  // Large enough that the reference splits the work across threads in chunks.
  const int64_t n = (int64_t{1} << 24) + 2;
  std::vector<float> ones(n, 1.0f);
  CHECK(sw::sum_pairwise_double(ones.data(), n) == static_cast<double>(n));
  CHECK(sw::sum_abs_double(ones.data(), n) == static_cast<double>(n));
  std::vector<float> x(n);
  sw::host_fill_floats(x.data(), n, 5);
  double in_order = 0, abs_in_order = 0;
  for (float v : x) in_order += v, abs_in_order += std::fabs(v);
  const double slack = 2.0 * n * std::ldexp(1.0, -53) * abs_in_order;  // both orders' double error
  CHECK(std::fabs(sw::sum_pairwise_double(x.data(), n) - in_order) <= slack);
  CHECK(std::fabs(sw::sum_abs_double(x.data(), n) - abs_in_order) <= slack);
}

TEST_CASE("gamma and the float sum bound") {
  const double u = std::ldexp(1.0, -24);
  CHECK(sw::float_gamma(0) == 0.0);
  CHECK(sw::float_gamma(1) == doctest::Approx(u / (1 - u)));
  CHECK(sw::float_gamma(int64_t{1} << 24) == std::numeric_limits<double>::infinity());
  CHECK(sw::ceil_log2(1) == 0);
  CHECK(sw::ceil_log2(2) == 1);
  CHECK(sw::ceil_log2(3) == 2);
  CHECK(sw::ceil_log2(1024) == 10);
  CHECK(sw::ceil_log2(1025) == 11);
  // depth 10, sum|x| = 1000, n = 1024
  CHECK(sw::float_sum_bound(10, 1000, 1024) ==
        doctest::Approx(sw::float_gamma(10) * 1000 + 1024 * std::ldexp(1.0, -53) * 1000));
}

TEST_CASE("check_sum passes within the bound and fails outside it") {
  const double bound = sw::float_sum_bound(20, 1e6, 1 << 20);
  CHECK(sw::check_sum(100.0 + 0.5 * bound, 100.0, 1e6, 20, 1 << 20).ok);
  CHECK_FALSE(sw::check_sum(100.0 + 2.0 * bound, 100.0, 1e6, 20, 1 << 20).ok);
  CHECK_FALSE(sw::check_sum(std::nan(""), 100.0, 1e6, 20, 1 << 20).ok);
  CHECK_FALSE(sw::check_sum(INFINITY, 100.0, 1e6, 20, 1 << 20).ok);
  const sw::SumCheck c = sw::check_sum(101.0, 100.0, 1e6, 1 << 30, 1 << 20);
  CHECK(c.rel_error == doctest::Approx(0.01));
}

TEST_CASE("the tolerance is tight enough to catch a dropped element") {
  // A real sum of mixed data; losing a large element (or a block's worth of
  // small ones) must fail the check. One tiny element can hide under the bound,
  // which is why outputs are also poisoned and sizes are swept.
  const int64_t n = 65537;
  std::vector<float> x(n);
  sw::host_fill_floats(x.data(), n, 42);
  const double ref = sw::sum_pairwise_double(x.data(), n);
  const double abs_sum = sw::sum_abs_double(x.data(), n);
  const int64_t depth = sw::ceil_log2(n);
  CHECK(sw::check_sum(static_cast<float>(ref), ref, abs_sum, depth, n).ok);  // one rounding passes
  int64_t largest = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(x[largest])) largest = i;
  CHECK_FALSE(sw::check_sum(ref - x[largest], ref, abs_sum, depth, n).ok);
  double block = 0;  // a 256-thread block's worth of elements
  for (int64_t i = 1000; i < 1256; ++i) block += x[i];
  CHECK_FALSE(sw::check_sum(ref - block, ref, abs_sum, depth, n).ok);
}

TEST_CASE("histogram reference") {
  const std::vector<uint8_t> b = {0, 255, 3, 3, 3, 255, 7};
  uint64_t bins[256];
  for (uint64_t& v : bins) v = 12345;  // the reference must clear its output
  sw::histogram_cpu(b.data(), static_cast<int64_t>(b.size()), bins);
  CHECK(bins[0] == 1);
  CHECK(bins[3] == 3);
  CHECK(bins[7] == 1);
  CHECK(bins[255] == 2);
  uint64_t total = 0;
  for (uint64_t v : bins) total += v;
  CHECK(total == b.size());
}

TEST_CASE("count_mismatches is exact, NaN included") {
  const std::vector<float> want = {1.0f, 2.0f, 3.0f};
  std::vector<float> got = want;
  CHECK(sw::count_mismatches("x", got.data(), want.data(), 3) == 0);
  got[1] = std::nextafter(2.0f, 3.0f);
  CHECK(sw::count_mismatches("x", got.data(), want.data(), 3) == 1);
  got[2] = std::nanf("");
  CHECK(sw::count_mismatches("x", got.data(), want.data(), 3) == 2);
  const std::vector<float> nans = {std::nanf("")};
  CHECK(sw::count_mismatches("x", nans.data(), nans.data(), 1) == 0);  // bitwise equal
}
