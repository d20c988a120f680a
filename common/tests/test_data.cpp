// The generators: deterministic, seed-dependent, and shaped as documented.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/data.h"
#include "common/verify.h"

TEST_CASE("the same seed gives the same data; another seed does not") {
  const int64_t n = 100003;
  std::vector<float> a(n), b(n), c(n);
  sw::host_fill_floats(a.data(), n, 42);
  sw::host_fill_floats(b.data(), n, 42);
  sw::host_fill_floats(c.data(), n, 43);
  CHECK(std::memcmp(a.data(), b.data(), n * sizeof(float)) == 0);
  int64_t same = 0;
  for (int64_t i = 0; i < n; ++i) same += a[i] == c[i];
  CHECK(same < n / 1000);
  // element i depends on (seed, i) only, not on how the fill was split
  for (int64_t i : {int64_t{0}, int64_t{1}, n - 1}) CHECK(a[i] == sw::float_value(42, i));
}

TEST_CASE("known values do not drift between versions") {
  // Results files and docs quote runs at the default seed; changing the
  // generator silently would change every number. Update these on purpose only.
  CHECK(sw::random_bits(42, 0) == sw::mix64(sw::mix64(42) ^ 0));
  CHECK(sw::mix64(0) == 0xE220A8397B1DCDAFull);
}

TEST_CASE("floats: mixed signs, magnitudes from 2^-4 to 2^5, never zero") {
  const int64_t n = 1 << 16;
  std::vector<float> x(n);
  sw::host_fill_floats(x.data(), n, 7);
  int64_t negative = 0;
  float lo = INFINITY, hi = 0;
  for (float v : x) {
    negative += v < 0;
    lo = std::fmin(lo, std::fabs(v));
    hi = std::fmax(hi, std::fabs(v));
  }
  CHECK(negative > n * 45 / 100);
  CHECK(negative < n * 55 / 100);
  CHECK(lo >= 0.0625f);
  CHECK(lo < 0.07f);
  CHECK(hi < 32.0f);
  CHECK(hi > 30.0f);
}

TEST_CASE("ints reach both signs") {
  const int64_t n = 4096;
  std::vector<int32_t> x(n);
  sw::host_fill_ints(x.data(), n, 3);
  int64_t negative = 0;
  for (int32_t v : x) negative += v < 0;
  CHECK(negative > n / 3);
  CHECK(negative < 2 * n / 3);
}

TEST_CASE("byte distributions") {
  const int64_t n = 1 << 20;
  std::vector<uint8_t> b(n);
  uint64_t bins[256];

  sw::host_fill_bytes(b.data(), n, 1, {sw::ByteDist::Uniform, 0, 0});
  sw::histogram_cpu(b.data(), n, bins);
  for (int v = 0; v < 256; ++v)
    CHECK(std::fabs(static_cast<double>(bins[v]) - n / 256.0) < 0.1 * n / 256.0);

  for (int value : {0, 255}) {
    sw::host_fill_bytes(b.data(), n, 1, {sw::ByteDist::Equal, value, 0});
    sw::histogram_cpu(b.data(), n, bins);
    CHECK(bins[value] == static_cast<uint64_t>(n));
  }

  sw::host_fill_bytes(b.data(), n, 1, {sw::ByteDist::Skewed, 0, 0});
  sw::histogram_cpu(b.data(), n, bins);
  CHECK(bins[0] > bins[128] * 10);  // P(byte 0) = (1/256)^(1/4) = 0.25

  for (double p : {0.0, 0.5, 0.9, 1.0}) {
    sw::host_fill_bytes(b.data(), n, 1, {sw::ByteDist::Mix, 200, p});
    sw::histogram_cpu(b.data(), n, bins);
    const double expected = n * (p + (1 - p) / 256.0);
    CHECK(std::fabs(static_cast<double>(bins[200]) - expected) < 0.01 * n + 1);
  }
}

TEST_CASE("distribution names round-trip") {
  for (auto d :
       {sw::ByteDist::Uniform, sw::ByteDist::Equal, sw::ByteDist::Skewed, sw::ByteDist::Mix}) {
    sw::ByteDist back;
    REQUIRE(sw::parse_byte_dist(sw::byte_dist_name(d), &back));
    CHECK(back == d);
  }
  sw::ByteDist unused;
  CHECK_FALSE(sw::parse_byte_dist("zipf", &unused));
}
