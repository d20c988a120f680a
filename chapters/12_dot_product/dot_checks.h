// What 12_dot_product.cu and its checks (dot_checks.cpp) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/report.h"

namespace ch12 {

// --- in 12_dot_product.cu ---

// One row of the step table, run once on a poisoned result and checked
// (sw::bench::check_once): against the reference within the row's bound, or exactly
// when `exact`, and x and y on the device as uploaded.
struct Answer {
  std::string name;
  bool ok = false;
  std::string detail;  // why not: "got ..., want ..., error ..., bound ..." or "input changed: ..."
};
// Every row of the step table (kernel-only and end-to-end) on x and y: n floats
// each, in host memory; `exact`: data whose dot product float computes exactly.
std::vector<Answer> run_every_step(const float* x, const float* y, int64_t n, bool exact);

// --- in dot_checks.cpp ---

struct DotRef {
  double value = 0;    // sum x_i y_i in double (each product is exact in double)
  double abs_sum = 0;  // sum |x_i y_i|, for the bound
};
DotRef dot_reference(const float* x, const float* y, int64_t n);  // on all cores

// The CPU baselines: one double accumulator on one core (a lesson), and the same
// loop on every core over contiguous slices, the slice sums added in order ("vs CPU").
double dot_serial_double(const float* x, const float* y, int64_t n);
double dot_all_cores_double(const float* x, const float* y, int64_t n);

// --verify-only: every version at 18 sizes, on random and on exact-integer data.
int verify(sw::Report& report, uint64_t seed);

}  // namespace ch12
