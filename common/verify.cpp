#include "verify.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "parallel.h"

namespace sw {
namespace {

double pairwise(const float* x, int64_t n) {
  constexpr int64_t kLeaf = 128;  // plain loop below this
  if (n <= kLeaf) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += x[i];
    return s;
  }
  const int64_t half = n / 2;
  return pairwise(x, half) + pairwise(x + half, n - half);
}

template <class T>
void print_value(const T& v) {
  if constexpr (std::is_floating_point_v<T>)
    std::printf("%.9g", static_cast<double>(v));
  else if constexpr (std::is_signed_v<T>)
    std::printf("%lld", static_cast<long long>(v));
  else
    std::printf("%llu", static_cast<unsigned long long>(v));
}

}  // namespace

double sum_pairwise_double(const float* x, int64_t n) {
  // Pairwise over chunks in parallel, then the chunk sums in order (few of them).
  std::vector<double> part(64, 0.0);
  const int64_t chunks = n < 64 * 4096 ? 1 : 64;
  parallel_for(
      chunks,
      [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          const int64_t lo = n * c / chunks, hi = n * (c + 1) / chunks;
          part[c] = pairwise(x + lo, hi - lo);
        }
      },
      /*grain=*/1);  // each item is a chunk
  double s = 0;
  for (int64_t c = 0; c < chunks; ++c) s += part[c];
  return s;
}

double sum_abs_double(const float* x, int64_t n) {
  std::vector<double> part(64, 0.0);
  const int64_t chunks = n < 64 * 4096 ? 1 : 64;
  parallel_for(
      chunks,
      [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          double s = 0;
          for (int64_t i = n * c / chunks; i < n * (c + 1) / chunks; ++i) s += std::fabs(x[i]);
          part[c] = s;
        }
      },
      /*grain=*/1);  // each item is a chunk
  double s = 0;
  for (int64_t c = 0; c < chunks; ++c) s += part[c];
  return s;
}

double float_gamma(int64_t k) {
  const double ku = static_cast<double>(k) * kFloatUnitRoundoff;
  if (ku >= 1.0) return std::numeric_limits<double>::infinity();
  return ku / (1.0 - ku);
}

double float_sum_bound(int64_t depth, double abs_sum, int64_t n) {
  const double double_ref_error = static_cast<double>(n) * std::ldexp(1.0, -53) * abs_sum;
  return float_gamma(depth) * abs_sum + double_ref_error;
}

int64_t ceil_log2(int64_t n) {
  int64_t d = 0;
  while ((int64_t{1} << d) < n) ++d;
  return d;
}

SumCheck check_sum(double got, double ref, double abs_sum, int64_t depth, int64_t n) {
  SumCheck c;
  c.bound = float_sum_bound(depth, abs_sum, n);
  c.abs_error = std::fabs(got - ref);
  const double scale = ref != 0 ? std::fabs(ref) : abs_sum;
  c.rel_error = scale > 0 ? c.abs_error / scale : c.abs_error;
  c.ok = std::isfinite(got) && c.abs_error <= c.bound;
  return c;
}

void histogram_cpu(const uint8_t* bytes, int64_t n, uint64_t bins[256]) {
  for (int b = 0; b < 256; ++b) bins[b] = 0;
  for (int64_t i = 0; i < n; ++i) ++bins[bytes[i]];
}

template <class T>
int64_t count_mismatches(const char* what, const T* got, const T* want, int64_t n, int max_print) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) == 0) continue;
    if (bad < max_print) {
      std::printf("  %s[%lld]: got ", what, static_cast<long long>(i));
      print_value(got[i]);
      std::printf(", want ");
      print_value(want[i]);
      std::printf("\n");
    }
    ++bad;
  }
  if (bad > max_print) std::printf("  ... %lld mismatches in all\n", static_cast<long long>(bad));
  return bad;
}

template int64_t count_mismatches<float>(const char*, const float*, const float*, int64_t, int);
template int64_t count_mismatches<double>(const char*, const double*, const double*, int64_t, int);
template int64_t count_mismatches<int32_t>(const char*, const int32_t*, const int32_t*, int64_t,
                                           int);
template int64_t count_mismatches<int64_t>(const char*, const int64_t*, const int64_t*, int64_t,
                                           int);
template int64_t count_mismatches<uint8_t>(const char*, const uint8_t*, const uint8_t*, int64_t,
                                           int);
template int64_t count_mismatches<uint32_t>(const char*, const uint32_t*, const uint32_t*, int64_t,
                                            int);
template int64_t count_mismatches<uint64_t>(const char*, const uint64_t*, const uint64_t*, int64_t,
                                            int);
template int64_t count_mismatches<unsigned long long>(const char*, const unsigned long long*,
                                                      const unsigned long long*, int64_t, int);

}  // namespace sw
