// Chapter 01: CPU baselines for the tutorial's three problems.
//
// What this is:  the sum of 2^28 floats, a 256-bin histogram of 2^30 bytes and
//                the transpose of a 16384 x 16384 matrix, first on one CPU core
//                (the loops a student writes first: the lesson rows), then split
//                across all cores with std::thread (the "cpu" rows). Every later
//                chapter quotes its speedup over the all-cores rows ("vs CPU" in
//                the tour): a user with a CPU has all of its cores.
// The lesson:    float accumulation loses small addends once the running sum is
//                large ("the big number eats the small one"): a float loop over
//                1e8 copies of 1.23 stops growing at 2^25 = 33554432. Double,
//                Kahan (compensated) and pairwise summation fix it in different
//                ways. Splitting a sum across threads changes its order of
//                additions, so its error bound changes too.
// Bottleneck:    one core's load bandwidth for the sum and the histogram; cache
//                misses on the strided side of the naive transpose; with all
//                cores, the memory bandwidth of the host.
// Checks:        cpu_checks.cpp (--verify-only): awkward sizes and thread counts.
// Run:           build/chapters/01_cpu_baseline [--n 2^28] [--bytes 2^30]
//                [--rows 16384 --cols 16384] [--verify-only] [--json]
// Steps:         float-loop, double-loop, kahan-float, pairwise-float,
//                double-data-double-loop, sum-double-1core, sum-float-1core,
//                sum-kahan-float-1core, sum-pairwise-float-1core, sum-double-all-cores,
//                sum-pairwise-float-all-cores, histogram-1core, histogram-all-cores,
//                transpose-naive-1core, transpose-blocked-1core,
//                transpose-blocked-all-cores
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/data.h"
#include "common/parallel.h"
#include "common/report.h"
#include "common/timing.h"
#include "common/verify.h"
#include "cpu_baseline.h"

namespace {

constexpr int kDefaultReps = 2;    // CPU runs take up to seconds each (the naive transpose)
constexpr int kDefaultWarmup = 1;
constexpr int64_t kLessonCount = 100000000;  // 1e8 copies of 1.23
constexpr float kLessonValue = 1.23f;
constexpr int64_t kPairwiseLeaf = 128;       // pairwise: a plain loop below this many values
constexpr int64_t kTile = 32;                // blocked transpose: 32 x 32 floats stay in L1

}  // namespace

namespace ch01 {

// --- sums: four orders of addition --------------------------------------------------

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
    case Order::kFloatLoop: return sum_float_loop(x, n);
    case Order::kDoubleLoop: return sum_double_loop(x, n);
    case Order::kKahan: return sum_kahan_float(x, n);
    case Order::kPairwise: return sum_pairwise_float(x, n);
  }
  return NAN;
}

// All cores: `threads` contiguous slices, each summed on its own thread, then the
// partial sums added in order on this thread (in double for the double loop, in
// float otherwise). One thread is the one-core loop itself.
double sum_on_threads(Order order, const float* x, int64_t n, int64_t threads) {
  std::vector<double> part(threads, 0.0);
  sw::parallel_for(threads, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
      part[t] = sum_one_core(order, x + lo, hi - lo);
    }
  }, /*grain=*/1);
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
    case Order::kKahan: {     // Higham: (2u + O(slice u^2)) sum|x| per slice
      const double u = sw::kFloatUnitRoundoff;
      return (2 * u + 2 * static_cast<double>(slice) * u * u) * abs_sum +
             sw::float_gamma(combine) * abs_sum + static_cast<double>(n) * std::ldexp(1.0, -53) * abs_sum;
    }
  }
  return 0;
}

// --- histogram ---------------------------------------------------------------------

// Four sub-histograms: runs of equal bytes would otherwise wait on the store to
// the same bin before each increment (a store-to-load chain).
void histogram_one_core(const uint8_t* bytes, int64_t n, uint64_t bins[256]) {
  std::vector<uint64_t> sub(4 * 256, 0);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    ++sub[bytes[i]];
    ++sub[256 + bytes[i + 1]];
    ++sub[512 + bytes[i + 2]];
    ++sub[768 + bytes[i + 3]];
  }
  for (; i < n; ++i) ++sub[bytes[i]];
  for (int b = 0; b < 256; ++b) bins[b] = sub[b] + sub[256 + b] + sub[512 + b] + sub[768 + b];
}

// All cores: one private histogram per slice, added up at the end.
void histogram_on_threads(const uint8_t* bytes, int64_t n, uint64_t bins[256], int64_t threads) {
  std::vector<uint64_t> part(threads * 256);
  sw::parallel_for(threads, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
      histogram_one_core(bytes + lo, hi - lo, &part[t * 256]);
    }
  }, /*grain=*/1);
  for (int b = 0; b < 256; ++b) {
    bins[b] = 0;
    for (int64_t t = 0; t < threads; ++t) bins[b] += part[t * 256 + b];
  }
}

// --- transpose: in is rows x cols, out is cols x rows, both row-major --------------

// Naive: walks the output in order, so reads jump by `cols` floats and each read
// touches a new cache line. Rows [r0, r1) of `in` only.
void transpose_naive(const float* in, float* out, int64_t rows, int64_t cols, int64_t r0, int64_t r1) {
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
}

// Blocked: the same in kTile x kTile tiles, so that the tile read and the tile
// written both stay in L1. Rows [r0, r1) of `in` only.
void transpose_blocked(const float* in, float* out, int64_t rows, int64_t cols, int64_t r0, int64_t r1) {
  for (int64_t rb = r0; rb < r1; rb += kTile) {
    const int64_t re = std::min(rb + kTile, r1);
    for (int64_t cb = 0; cb < cols; cb += kTile) {
      const int64_t ce = std::min(cb + kTile, cols);
      for (int64_t c = cb; c < ce; ++c)
        for (int64_t r = rb; r < re; ++r) out[c * rows + r] = in[r * cols + c];
    }
  }
}

// All cores: each thread takes a band of whole tiles' rows; the bands write
// disjoint columns of `out`.
void transpose_on_threads(TransposeRows transpose, const float* in, float* out, int64_t rows, int64_t cols,
                          int64_t threads) {
  const int64_t tile_rows = (rows + kTile - 1) / kTile;
  sw::parallel_for(threads, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t lo = tile_rows * t / threads * kTile, hi = tile_rows * (t + 1) / threads * kTile;
      transpose(in, out, rows, cols, std::min(lo, rows), std::min(hi, rows));
    }
  }, /*grain=*/1);
}

// --- the version tables: one row each; all_cores rows run on sw::host_threads() ---

// The lesson on 1e8 x 1.23f (one core), then the sum of mixed data.
const std::vector<SumStep> kAccuracySteps = {
    {"float-loop", Order::kFloatLoop, false},
    {"double-loop", Order::kDoubleLoop, false},
    {"kahan-float", Order::kKahan, false},
    {"pairwise-float", Order::kPairwise, false},
};
constexpr const char* kDoubleDataStep = "double-data-double-loop";  // decimal 1.23 held as a double
const std::vector<SumStep> kSumSteps = {
    {"sum-double-1core", Order::kDoubleLoop, false},
    {"sum-float-1core", Order::kFloatLoop, false},
    {"sum-kahan-float-1core", Order::kKahan, false},
    {"sum-pairwise-float-1core", Order::kPairwise, false},
    {"sum-double-all-cores", Order::kDoubleLoop, true},
    {"sum-pairwise-float-all-cores", Order::kPairwise, true},
};

const std::vector<HistogramStep> kHistogramSteps = {{"histogram-1core", false}, {"histogram-all-cores", true}};

const std::vector<TransposeStep> kTransposeSteps = {
    {"transpose-naive-1core", transpose_naive, false},
    {"transpose-blocked-1core", transpose_blocked, false},
    {"transpose-blocked-all-cores", transpose_blocked, true},
};

}  // namespace ch01

namespace {

using namespace ch01;

std::vector<std::string> step_names() {
  std::vector<std::string> names;
  for (const auto& s : kAccuracySteps) names.push_back(s.name);
  names.push_back(kDoubleDataStep);
  for (const auto& s : kSumSteps) names.push_back(s.name);
  for (const auto& s : kHistogramSteps) names.push_back(s.name);
  for (const auto& s : kTransposeSteps) names.push_back(s.name);
  return names;
}

// One-core rows are the lesson; all-cores rows are what "vs CPU" compares with.
const char* role(bool all_cores) { return all_cores ? "cpu" : "lesson"; }
int64_t threads_of(bool all_cores) { return all_cores ? sw::host_threads() : 1; }

}  // namespace

int main(int argc, char** argv) {
  int64_t n = int64_t{1} << 28, bytes = int64_t{1} << 30, rows = 16384, cols = 16384;
  sw::Cli cli("01_cpu_baseline", "CPU baselines: float sum, byte histogram, matrix transpose, on one core and all.");
  cli.defaults().reps = kDefaultReps;
  cli.defaults().warmup = kDefaultWarmup;
  cli.add_int("--n", &n, 1, int64_t{1} << 32, "floats to sum");
  cli.add_int("--bytes", &bytes, 1, int64_t{1} << 34, "bytes to histogram");
  cli.add_int("--rows", &rows, 1, int64_t{1} << 20, "rows of the matrix to transpose");
  cli.add_int("--cols", &cols, 1, int64_t{1} << 20, "columns of the matrix to transpose");
  cli.set_steps(step_names());
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  sw::Report report(opt, 0.0, "01", "sum");

  if (opt.verify_only) return ch01::verify(report, opt.seed);  // cpu_checks.cpp

  // --- the accumulation lesson: 1e8 x 1.23f, one core ------------------------------
  {
    const int64_t m = kLessonCount;
    const std::vector<float> ones(m, kLessonValue);
    const double exact_of_floats = static_cast<double>(kLessonValue) * m;  // the stored 1.23f, exactly
    auto lesson = [&](const char* variant, double value, double ms, bool ok, double exact) {
      sw::Result r{variant, m, 4.0 * m, {ms, ms, 1}, ok, "lesson"};
      r.extra = {{"threads", 1}, {"value", value}, {"rel_error", std::fabs(value - exact) / exact}};
      r.problem = "sum-of-1.23";
      r.note = "1e8 x 1.23";
      report.add(r);
      char text[160];
      std::snprintf(text, sizeof text, "%-24s sum = %.2f, relative error %.1e", variant, value, r.extra["rel_error"]);
      report.note(text);
    };
    for (const SumStep& s : kAccuracySteps) {
      double got = 0;
      const sw::Timing t = sw::time_cpu(0, 1, [&] { got = sum_one_core(s.order, ones.data(), m); });
      // 2^25 is where 1.23 drops below half a unit in the last place: the float loop stalls there.
      const bool ok = s.order == Order::kFloatLoop
                          ? got == 33554432.0
                          : std::fabs(got - exact_of_floats) <= sum_bound(s.order, m, 1, exact_of_floats);
      lesson(s.name, got, t.ms_median, ok, exact_of_floats);
    }
    double dd = 0;
    const sw::Timing t = sw::time_cpu(0, 1, [&] {
      double s = 0;
      for (int64_t i = 0; i < m; ++i) s += 1.23;  // decimal 1.23 held as a double
      dd = s;
    });
    lesson(kDoubleDataStep, dd, t.ms_median, std::fabs(dd - 1.23e8) < 1.0, 1.23e8);
    char text[200];
    std::snprintf(text, sizeof text,
                  "1e8 x 1.23f: the float nearest 1.23 is %.10g, so the exact sum of the floats is "
                  "%.4f (decimal 1.23 x 1e8 = 123000000); errors are against that sum (against 1.23e8 for double data)",
                  static_cast<double>(kLessonValue), exact_of_floats);
    report.note(text);
  }

  // --- sum -------------------------------------------------------------------------
  {
    std::vector<float> x(n);
    sw::host_fill_floats(x.data(), n, opt.seed);
    const double ref = sw::sum_pairwise_double(x.data(), n);
    const double abs_sum = sw::sum_abs_double(x.data(), n);
    for (const SumStep& s : kSumSteps) {
      const int64_t threads = threads_of(s.all_cores);
      double got = NAN;
      const sw::Timing t =
          sw::time_cpu(opt.warmup, opt.reps, [&] { got = sum_on_threads(s.order, x.data(), n, threads); });
      const bool ok = std::isfinite(got) && std::fabs(got - ref) <= sum_bound(s.order, n, threads, abs_sum);
      sw::Result r{s.name, n, 4.0 * n, t, ok, role(s.all_cores)};
      r.extra = {{"threads", static_cast<double>(threads)}, {"rel_error", std::fabs(got - ref) / std::fabs(ref)}};
      report.add(r);
    }
  }

  // --- histogram -------------------------------------------------------------------
  {
    std::vector<uint8_t> b(bytes);
    sw::host_fill_bytes(b.data(), bytes, opt.seed, {});
    for (const HistogramStep& s : kHistogramSteps) {
      const int64_t threads = threads_of(s.all_cores);
      uint64_t bins[256];
      std::fill(bins, bins + 256, ~uint64_t{0});  // poison
      const sw::Timing t =
          sw::time_cpu(opt.warmup, opt.reps, [&] { histogram_on_threads(b.data(), bytes, bins, threads); });
      // The seed's check: count every byte back down; each bin must end at zero.
      for (int64_t i = 0; i < bytes; ++i) --bins[b[i]];
      bool zero = true;
      for (uint64_t v : bins) zero = zero && v == 0;
      sw::Result r{s.name, bytes, static_cast<double>(bytes), t, zero, role(s.all_cores)};
      r.problem = "histogram";
      r.note = "uniform";
      r.extra = {{"threads", static_cast<double>(threads)}};
      report.add(r);
    }
  }

  // --- transpose -------------------------------------------------------------------
  {
    const int64_t count = rows * cols;
    std::vector<float> in(count), out(count), want(count);
    sw::host_fill_floats(in.data(), count, opt.seed);
    transpose_on_threads(transpose_naive, in.data(), want.data(), rows, cols, sw::host_threads());
    for (const TransposeStep& s : kTransposeSteps) {
      const int64_t threads = threads_of(s.all_cores);
      std::fill(out.begin(), out.end(), NAN);  // poison
      const sw::Timing t = sw::time_cpu(opt.warmup, opt.reps, [&] {
        transpose_on_threads(s.transpose, in.data(), out.data(), rows, cols, threads);
      });
      const bool ok = sw::count_mismatches("out", out.data(), want.data(), count) == 0;
      sw::Result r{s.name, count, 2.0 * 4.0 * count, t, ok, role(s.all_cores)};  // read once, write once
      r.problem = "transpose";
      r.note = std::to_string(rows) + "x" + std::to_string(cols);
      r.extra = {{"threads", static_cast<double>(threads)}};
      report.add(r);
    }
  }
  return report.exit_code();
}
