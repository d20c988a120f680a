// What 12_dot_product.cu and its checks (dot_checks.cpp) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/report.h"

namespace ch12 {

// --- in 12_dot_product.cu ---

// One row of the step table, run once on a poisoned result.
struct Answer {
  std::string name;
  double got = 0;          // the dot product it returned
  int64_t depth = 0;       // the longest chain of float roundings, for the error bound
  bool input_kept = true;  // x and y on the device are as uploaded after the run
};
// Every row of the step table (kernel-only and end-to-end) on x and y: n floats
// each, in host memory.
std::vector<Answer> run_every_step(const float* x, const float* y, int64_t n);

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
