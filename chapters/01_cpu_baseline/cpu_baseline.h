// What 01_cpu_baseline.cpp and its checks (cpu_checks.cpp) share.
#pragma once

#include <cstdint>
#include <vector>

#include "common/bench/step.h"
#include "common/report.h"

namespace ch01 {

// --- in 01_cpu_baseline.cpp: the loops (in cpu_sum.h, cpu_histogram.h and cpu_transpose.h,
// which it includes) and the version tables ---

enum class Order { kFloatLoop, kDoubleLoop, kKahan, kPairwise };  // orders of addition

float sum_float_loop(const float* x, int64_t n);
double sum_double_loop(const float* x, int64_t n);
float sum_kahan_float(const float* x, int64_t n);
// `threads` contiguous slices, each summed in `order` on its own thread.
double sum_on_threads(Order order, const float* x, int64_t n, int64_t threads);
// The largest error `order` allows for n values in `threads` slices.
double sum_bound(Order order, int64_t n, int64_t threads, double abs_sum);
// `threads` contiguous slices, each counted on its own thread into private bins.
void histogram_on_threads(const uint8_t* bytes, int64_t n, uint64_t bins[256], int64_t threads);
// Transposes rows [r0, r1) of in (rows x cols) into out (cols x rows).
using TransposeRows = void (*)(const float* in, float* out, int64_t rows, int64_t cols, int64_t r0,
                               int64_t r1);
void transpose_on_threads(TransposeRows transpose, const float* in, float* out, int64_t rows,
                          int64_t cols, int64_t threads);

// The step tables, one row each. What a step's launch holds: a sum's order of additions
// (sum_on_threads runs it), the histogram's whole call, a transpose's loop over rows
// (transpose_on_threads runs it on each band). One-core rows are the lesson (role
// "lesson"); kAllCores rows (role "cpu") run on sw::host_threads(): every later chapter's
// "vs CPU" compares with them.
constexpr unsigned kAllCores = 1;  // Step::traits
using SumStep = sw::bench::Step<Order>;
using HistogramStep = sw::bench::Step<decltype(&histogram_on_threads)>;
using TransposeStep = sw::bench::Step<TransposeRows>;
template <class Launch>
sw::bench::Step<Launch> one_core(const char* name, Launch launch) {
  return {name, launch, {}, "lesson"};
}
template <class Launch>
sw::bench::Step<Launch> all_cores(const char* name, Launch launch) {
  return {name, launch, {}, "cpu", kAllCores};
}
extern const std::vector<SumStep> kSumSteps;
extern const std::vector<HistogramStep> kHistogramSteps;
extern const std::vector<TransposeStep> kTransposeSteps;

// --- in cpu_checks.cpp ---

// --verify-only: every step at awkward sizes and thread counts, against exact answers.
int verify(sw::Report& report, uint64_t seed);

}  // namespace ch01
