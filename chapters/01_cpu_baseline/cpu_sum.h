// Chapter 01's sums: four orders of addition on one core (a float loop, a double loop,
// Kahan, pairwise), the same split across threads, and the error bound of each order.
// Defines what cpu_baseline.h declares; included once, by 01_cpu_baseline.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/parallel.h"
#include "common/verify.h"
#include "cpu_baseline.h"

namespace ch01 {

constexpr int64_t kPairwiseLeaf = 128;  // pairwise: a plain loop below this many values

// One float accumulator, in order: value i passes through n - 1 - i additions.
float sum_float_loop(const float* x, int64_t n) {
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}

// The same loop with a double accumulator: 29 more bits to lose before it matters.
double sum_double_loop(const float* x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}

// Kahan (compensated): c carries what the last addition lost into the next one.
// Correct only without -ffast-math, which would simplify c to zero.
float sum_kahan_float(const float* x, int64_t n) {
  float s = 0, c = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float y = x[i] - c;
    const float t = s + y;
    c = (t - s) - y;
    s = t;
  }
  return s;
}

// Pairwise: halve until kPairwiseLeaf values are left, add those in a loop, then
// add the halves. A value passes through at most 128 + log2(n) additions, not n.
float sum_pairwise_float(const float* x, int64_t n) {
  if (n <= kPairwiseLeaf) return sum_float_loop(x, n);
  const int64_t half = n / 2;
  return sum_pairwise_float(x, half) + sum_pairwise_float(x + half, n - half);
}

double sum_one_core(Order order, const float* x, int64_t n) {
  switch (order) {
    case Order::kFloatLoop:
      return sum_float_loop(x, n);
    case Order::kDoubleLoop:
      return sum_double_loop(x, n);
    case Order::kKahan:
      return sum_kahan_float(x, n);
    case Order::kPairwise:
      return sum_pairwise_float(x, n);
  }
  return NAN;
}

// All cores: `threads` contiguous slices, each summed on its own thread, then the
// partial sums added in order on this thread (in double for the double loop, in
// float otherwise). One thread is the one-core loop itself.
double sum_on_threads(Order order, const float* x, int64_t n, int64_t threads) {
  std::vector<double> part(threads, 0.0);
  sw::parallel_for(
      threads,
      [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
          part[t] = sum_one_core(order, x + lo, hi - lo);
        }
      },
      /*grain=*/1);
  if (order == Order::kDoubleLoop) {
    double s = 0;
    for (double p : part) s += p;
    return s;
  }
  float s = 0;
  for (double p : part) s += static_cast<float>(p);  // exact: each p is a float
  return s;
}

// The largest error each order allows (see common/verify.h), for n values split
// into `threads` slices: an element passes through the additions of its slice,
// then through up to threads - 1 more while the partial sums are added.
double sum_bound(Order order, int64_t n, int64_t threads, double abs_sum) {
  const int64_t slice = (n + threads - 1) / threads, combine = threads - 1;
  switch (order) {
    case Order::kFloatLoop:
      return sw::float_sum_bound(std::max<int64_t>(slice - 1, 1) + combine, abs_sum, n);
    case Order::kPairwise:
      return sw::float_sum_bound(kPairwiseLeaf + sw::ceil_log2(slice) + combine, abs_sum, n);
    case Order::kDoubleLoop:  // double's own error (about n 2^-53 sum|x|) is within this
      return sw::float_sum_bound(1, abs_sum, n);
    case Order::kKahan: {  // Higham: (2u + O(slice u^2)) sum|x| per slice
      const double u = sw::kFloatUnitRoundoff;
      return (2 * u + 2 * static_cast<double>(slice) * u * u) * abs_sum +
             sw::float_gamma(combine) * abs_sum +
             static_cast<double>(n) * std::ldexp(1.0, -53) * abs_sum;
    }
  }
  return 0;
}

}  // namespace ch01
