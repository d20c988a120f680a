// The GEMM track's host arithmetic (chapters 19 and 20): its inputs (and their rounding to
// bf16 or fp16), which entries of C a check compares, the CPU reference of an entry and its
// error bound, and the comparison.
// Host C++ only (common/tests/test_gemm.cpp tests it); common/problems/gemm.h uses it.
//
// The product: C = alpha * A * B + beta * C0, row-major, fp32; A is m x k, B is k x n,
// C and C0 are m x n. Entry (i, j) of the exact result is
//   want_ij = alpha * sum_p a_ip b_pj + beta * c0_ij,
// computed here in double: a product of two floats is exact in double (24 + 24 bits), so
// the reference errs only by its k double additions.
//
// The bound. A GPU step computes s = the k products a_ip b_pj added in fp32, in any order
// and with or without fused multiply-adds (the steps differ in order only), then
// c = alpha * s + beta * c0 in fp32. Any such sum satisfies (Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., section 3.1)
//   |s - sum_p a_ip b_pj| <= gamma_k * S_ij,   S_ij = sum_p |a_ip| |b_pj|,
//   gamma_k = k u / (1 - k u),   u = 2^-24, the unit roundoff of fp32 (round to nearest).
// The epilogue adds at most three roundings, (alpha s (1 + d1) + beta c0 (1 + d2)) (1 + d3)
// with |d| <= u, and gamma_k (1 + u)^2 + gamma_2 <= gamma_{k+2}, so
//   |c - want_ij| <= gamma_{k+2} |alpha| S_ij + gamma_2 |beta c0_ij|,
// plus the double reference's own error, (k + 2) 2^-53 (|alpha| S_ij + |beta c0_ij|).
// S_ij is computed per entry, in double, beside want_ij. The bound is the worst case of any
// order; a correct kernel's error is far inside it (about sqrt(k) u S_ij). What it catches:
// one product missing or counted twice (|a_ip b_pj| is about 0.25 on average) for k up to
// a few hundred, a whole tile of them missing at any k, and any element not written (the
// poison, NaN, is never within a bound).
//
// 16-bit inputs on tensor cores (chapter 20, --type bf16|fp16). A and B are the generator's
// values rounded to the type (round_to: to nearest, ties to even), so they are exactly what
// the GPU multiplies, and the reference is the product of the rounded values: exact products
// in double again (and in fp32: 8 + 8 or 11 + 11 significant bits). The sum is not fp32
// addition in some order: an mma instruction adds a block of b products and the accumulator
// in one operation, aligned to the largest of them with at least 24 bits kept, the bits
// shifted out and those of the sum truncated (rounded toward zero), b = 4 on V100 and T4
// and 8 on A100 (Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor
// cores", PeerJ Computer Science 7:e330, 2021). With u' = 2^-23, the unit roundoff of
// truncation, one block of b_i products errs by at most (b_i + 2) u' T_i, T_i the absolute
// sum of what it adds (each of its b_i + 1 terms loses less than u' of the largest, the
// sum less than u' of itself). T_i <= S_ij + the error so far, so over the ceil(k / b)
// blocks of a sum of k products the units add up to n = k + 2 ceil(k / b) <= 3k for any
// b >= 1 (a k split into slices whose sums are added afterwards stays within 3k too), and
//   |s - sum_p a_ip b_pj| <= gamma'_{3k} S_ij,   gamma'_n = n u' / (1 - n u').
// With the fp32 epilogue as above (rounding to nearest: within u'):
//   |c - want_ij| <= gamma'_{3k+2} |alpha| S_ij + gamma'_2 |beta c0_ij|,
// plus the double reference's error: the fp32 bound's form, six times as wide (3k units of
// 2^-23 where fp32 addition has k of 2^-24), whatever the block size and the rounding. It
// still catches a whole tile missing at any k, one product missing for k up to a hundred or
// so, and any element not written.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "common/data.h"
#include "common/parallel.h"
#include "common/verify.h"

namespace sw::gemm {

// The CPU reference's budget in multiply-adds: every entry is checked when m n k is at most
// this; beyond it, a sample of this many (see checked_entries), plus the edges.
constexpr int64_t kCheckMadds = int64_t{1} << 29;
constexpr int64_t kMinSample = 4096;  // entries of the sample, however large k is

struct Shape {
  int64_t m = 0, n = 0, k = 0;
  int64_t madds() const { return m * n * k; }  // multiply-adds of one product: the rows' n
  std::string text() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
};

// The type of A and B on the GPU. C is fp32 whatever it is.
enum class InputType { kFp32, kBf16, kFp16 };

inline const char* type_name(InputType t) {
  return t == InputType::kBf16 ? "bf16" : t == InputType::kFp16 ? "fp16" : "fp32";
}

// x rounded to the nearest value of type t, ties to even (fp32: x). bf16 is fp32's upper
// 16 bits (8 significant bits); fp16 has 11 significant bits from 2^-14 up, steps of 2^-24
// below (subnormals), and 65504 at most (from 65520 on: infinity).
inline float round_to(InputType t, float x) {
  if (t == InputType::kFp32 || !std::isfinite(x) || x == 0) return x;
  if (t == InputType::kBf16) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    bits += 0x7FFFu + ((bits >> 16) & 1u);  // up past the half-way point, or at it when odd
    bits &= 0xFFFF0000u;
    std::memcpy(&x, &bits, sizeof x);
    return x;
  }
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 65520.0) return std::copysign(INFINITY, x);
  int exponent = 0;
  std::frexp(a, &exponent);  // a = f 2^exponent, f in [0.5, 1)
  const double step = std::ldexp(1.0, std::max(exponent - 11, -24));  // one unit in the last place
  return static_cast<float>(std::copysign(std::nearbyint(a / step) * step, x));  // ties to even
}

// The 16 bits of x, a value of type t (bf16 or fp16) as round_to gives it.
inline uint16_t half_bits(InputType t, float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if (t == InputType::kBf16) return static_cast<uint16_t>(bits >> 16);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const double a = std::fabs(static_cast<double>(x));
  if (std::isinf(x)) return sign | 0x7C00u;
  if (a < std::ldexp(1.0, -14))  // subnormal (or zero): a multiple of 2^-24
    return sign | static_cast<uint16_t>(std::ldexp(a, 24));
  int exponent = 0;
  const double f = std::frexp(a, &exponent);  // a = 2f 2^(exponent - 1), 2f in [1, 2)
  const auto mantissa = static_cast<uint16_t>(std::ldexp(2 * f - 1, 10));
  return sign | static_cast<uint16_t>((exponent - 1 + 15) << 10) | mantissa;
}

// The three inputs' streams of random numbers.
enum class Operand : uint64_t { kA = 1, kB = 2, kC = 3 };

// Element i of an input (row-major) from the seed: uniform in [-1, 1), mixed signs, the
// same on every machine.
inline float input_value(uint64_t seed, Operand which, uint64_t i) {
  const uint64_t stream = mix64(seed) ^ (0xA24BAED4963EE407ull * static_cast<uint64_t>(which));
  return static_cast<float>(2.0 * unit_double(random_bits(stream, i)) - 1.0);
}

// count elements of an input, on all cores.
inline void fill_input(float* out, int64_t count, uint64_t seed, Operand which) {
  parallel_for(count, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = input_value(seed, which, i);
  });
}

// gamma'_n of the tensor cores' accumulation: n units of truncation, u' = 2^-23.
inline double truncation_gamma(int64_t n) {
  const double nu = static_cast<double>(n) * std::ldexp(1.0, -23);
  return nu < 1 ? nu / (1 - nu) : INFINITY;
}

// The bound on |c - want| of one entry (see the top of this file): k products, S their
// absolute sum, c0 the entry of C0 (any value when beta is 0); fp32 inputs summed in fp32,
// or 16-bit ones on tensor cores.
inline double entry_bound(int64_t k, double alpha, double abs_products, double beta, double c0,
                          InputType type = InputType::kFp32) {
  const double scaled = std::fabs(alpha) * abs_products, added = std::fabs(beta * c0);
  const double reference_error = static_cast<double>(k + 2) * std::ldexp(1.0, -53);
  const double sum_error = type == InputType::kFp32
                               ? float_gamma(k + 2) * scaled + float_gamma(2) * added
                               : truncation_gamma(3 * k + 2) * scaled + truncation_gamma(2) * added;
  return sum_error + reference_error * (scaled + added);
}

// One entry of C that a check compares.
struct Entry {
  int64_t row = 0, col = 0;
  double want = 0;   // alpha * sum a_ip b_pj + beta * c0, in double
  double bound = 0;  // what |got - want| may be (entry_bound)
  double scale = 0;  // |alpha| S + |beta c0|: the error's yardstick (rel_error)
};

// Fills e.want, e.bound and e.scale: a_row is row e.row of A (k floats), bt_row row e.col of
// B transposed (column e.col of B, k floats), c0 the entry of C0 (unused when beta is 0),
// type the inputs' type (their values already rounded to it; the bound follows it).
inline void reference_entry(Entry& e, const float* a_row, const float* bt_row, int64_t k,
                            double alpha, double beta, double c0,
                            InputType type = InputType::kFp32) {
  double sum = 0, abs_sum = 0;
  for (int64_t p = 0; p < k; ++p) {
    const double product = static_cast<double>(a_row[p]) * bt_row[p];  // exact
    sum += product;
    abs_sum += std::fabs(product);
  }
  const double added = beta == 0 ? 0.0 : beta * c0;
  e.want = alpha * sum + added;
  e.bound = entry_bound(k, alpha, abs_sum, beta, beta == 0 ? 0.0 : c0, type);
  e.scale = std::fabs(alpha) * abs_sum + std::fabs(added);
}

// The entries a check compares, sorted by row, then column. Every entry when m n k <=
// kCheckMadds. Otherwise every entry of the first and last rows and columns (where the
// partial tiles are), and one entry at a place drawn from the seed in every s x s block
// of C, s chosen so that the blocks number about max(kMinSample, kCheckMadds / k): every
// region of C is looked at, and a tile computed wrong anywhere shows in its blocks.
inline std::vector<Entry> checked_entries(const Shape& s, uint64_t seed) {
  std::vector<Entry> out;
  auto add = [&](int64_t row, int64_t col) { out.push_back({row, col}); };
  if (s.madds() <= kCheckMadds) {
    out.reserve(static_cast<size_t>(s.m * s.n));
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) add(i, j);
    return out;
  }
  for (int64_t j = 0; j < s.n; ++j) add(0, j), add(s.m - 1, j);
  for (int64_t i = 0; i < s.m; ++i) add(i, 0), add(i, s.n - 1);
  const int64_t sample = std::max(kMinSample, kCheckMadds / s.k);
  const double area = static_cast<double>(s.m) * static_cast<double>(s.n) / sample;
  const int64_t side = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::sqrt(area))));
  const int64_t blocks_across = (s.n + side - 1) / side;
  const uint64_t stream = mix64(seed) ^ 0x5851F42D4C957F2Dull;
  for (int64_t bi = 0; bi * side < s.m; ++bi)
    for (int64_t bj = 0; bj < blocks_across; ++bj) {
      const uint64_t bits = random_bits(stream, static_cast<uint64_t>(bi * blocks_across + bj));
      const int64_t rows = std::min(side, s.m - bi * side), cols = std::min(side, s.n - bj * side);
      add(bi * side + static_cast<int64_t>((bits >> 32) % static_cast<uint64_t>(rows)),
          bj * side + static_cast<int64_t>((bits & 0xFFFFFFFFu) % static_cast<uint64_t>(cols)));
    }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.row != b.row ? a.row < b.row : a.col < b.col;
  });
  out.erase(
      std::unique(out.begin(), out.end(),
                  [](const Entry& a, const Entry& b) { return a.row == b.row && a.col == b.col; }),
      out.end());
  return out;
}

// The reference of every entry, on all cores: a (m x k), bt (B transposed, n x k), c0 (m x n;
// may be null when beta is 0), of inputs of type `type`.
inline void reference_entries(std::vector<Entry>& entries, const Shape& s, const float* a,
                              const float* bt, const float* c0, double alpha, double beta,
                              InputType type = InputType::kFp32) {
  const int64_t grain = std::max<int64_t>(1, 65536 / s.k);  // about 65536 madds a thread at least
  parallel_for(
      static_cast<int64_t>(entries.size()),
      [&](int64_t begin, int64_t end) {
        for (int64_t e = begin; e < end; ++e) {
          Entry& x = entries[e];
          reference_entry(x, a + x.row * s.k, bt + x.col * s.k, s.k, alpha, beta,
                          c0 && beta != 0 ? c0[x.row * s.n + x.col] : 0.0, type);
        }
      },
      grain);
}

// What a check found.
struct Comparison {
  int64_t wrong = 0;       // checked entries beyond their bound
  int64_t not_finite = 0;  // entries of C (all of them) that are NaN or infinite: unwritten
  bool guard_kept = true;  // the floats after C still hold the poison
  double rel_error = 0;    // the largest |got - want| / scale of the checked entries
  std::string detail;      // the first problem, in one line ("" when none)
  bool ok() const { return wrong == 0 && not_finite == 0 && guard_kept; }
};

// c: the m x n result, then `guard` floats that no step may write (poisoned: all bits one,
// or all zero under STEPWISE_POISON=zero). Every entry must be finite; the checked ones
// within their bounds.
inline Comparison compare(const float* c, const Shape& s, int64_t guard,
                          const std::vector<Entry>& entries) {
  Comparison r;
  std::mutex lock;
  int64_t first_nan = -1;
  parallel_for(s.m * s.n, [&](int64_t begin, int64_t end) {
    int64_t count = 0, first = -1;
    for (int64_t i = begin; i < end; ++i)
      if (!std::isfinite(c[i])) count += 1, first = first < 0 ? i : first;
    const std::lock_guard<std::mutex> hold(lock);
    r.not_finite += count;
    if (first >= 0 && (first_nan < 0 || first < first_nan)) first_nan = first;
  });
  uint32_t poison = 0;
  if (guard > 0) std::memcpy(&poison, c + s.m * s.n, sizeof poison);
  r.guard_kept = poison == 0u || poison == 0xFFFFFFFFu;
  for (int64_t i = 0; i < guard && r.guard_kept; ++i) {
    uint32_t bits;
    std::memcpy(&bits, c + s.m * s.n + i, sizeof bits);
    r.guard_kept = bits == poison;
  }
  const Entry* first_wrong = nullptr;
  float first_got = 0;
  for (const Entry& e : entries) {
    const float got = c[e.row * s.n + e.col];
    const double error = std::fabs(static_cast<double>(got) - e.want);
    if (std::isfinite(got) && e.scale > 0) r.rel_error = std::max(r.rel_error, error / e.scale);
    if (error <= e.bound) continue;  // false for NaN: a NaN is never within a bound
    if (r.wrong++ == 0) first_wrong = &e, first_got = got;
  }
  char buf[256] = "";
  if (first_wrong) {
    const Entry& e = *first_wrong;
    std::snprintf(buf, sizeof buf,
                  "C[%lld][%lld]: got %.9g, want %.9g: error %.3g > bound %.3g (%lld of %lld "
                  "checked entries wrong)",
                  static_cast<long long>(e.row), static_cast<long long>(e.col), first_got, e.want,
                  std::fabs(first_got - e.want), e.bound, static_cast<long long>(r.wrong),
                  static_cast<long long>(entries.size()));
  } else if (r.not_finite > 0) {
    std::snprintf(buf, sizeof buf,
                  "%lld entries not finite (not written?), the first C[%lld][%lld]",
                  static_cast<long long>(r.not_finite), static_cast<long long>(first_nan / s.n),
                  static_cast<long long>(first_nan % s.n));
  } else if (!r.guard_kept) {
    std::snprintf(buf, sizeof buf, "a step wrote past the end of C (into the guard after it)");
  }
  r.detail = buf;
  return r;
}

}  // namespace sw::gemm
