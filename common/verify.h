// CPU references and result checks.
//
// Sums: the reference is a double (pairwise) sum, and a float result passes when
// its error is within the bound that float arithmetic allows for its order of
// additions (see float_sum_bound). Integers and transposes compare exactly.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>

namespace sw {

// --- sums ---------------------------------------------------------------------
// The loops that chapter 01 teaches (float, Kahan, pairwise, double, on one core
// and on all) live in chapters/01_cpu_baseline; these are the references.
double sum_pairwise_double(const float* x,
                           int64_t n);             // the reference: pairwise in double, all cores
double sum_abs_double(const float* x, int64_t n);  // sum of |x_i|, for the error bound, all cores

// Unit roundoff of float: 2^-24.
constexpr double kFloatUnitRoundoff = 1.0 / 16777216.0;

// Higham's gamma_k = k u / (1 - k u) for float; infinity when k u >= 1.
double float_gamma(int64_t k);

// Bound on |computed - exact| for a float sum in which no element passes through
// more than `depth` additions (a tree over n values has depth ceil(log2 n); one
// accumulator over n values has depth n - 1): gamma_depth * sum |x_i|.
// The double reference's own error (n * 2^-53 * sum |x_i|) is added.
double float_sum_bound(int64_t depth, double abs_sum, int64_t n);

// ceil(log2(n)) for n >= 1: the depth of a balanced tree over n values.
int64_t ceil_log2(int64_t n);

struct SumCheck {
  bool ok = false;
  double abs_error = 0;  // |got - ref|
  double rel_error = 0;  // |got - ref| / |ref| (or / sum|x| when ref is 0)
  double bound = 0;      // allowed absolute error
};
// NaN or infinity never passes.
SumCheck check_sum(double got, double ref, double abs_sum, int64_t depth, int64_t n);

// --- histograms ----------------------------------------------------------------
// The reference: one count per byte, the plainest loop (chapter 01 times faster ones).
void histogram_cpu(const uint8_t* bytes, int64_t n, uint64_t bins[256]);

// Exact comparison, bit for bit for floating point (so a NaN never matches).
// Prints the first `max_print` mismatches as "<what>[i]: got X, want Y" and
// returns how many elements differ.
template <class T>
int64_t count_mismatches(const char* what, const T* got, const T* want, int64_t n,
                         int max_print = 5);

}  // namespace sw
