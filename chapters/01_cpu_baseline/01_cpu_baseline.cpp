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
// Files:         this file (the version tables, main); cpu_sum.h, cpu_histogram.h and
//                cpu_transpose.h (the loops, one core and all cores).
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

#include "common/bench/step.h"
#include "common/cli.h"
#include "common/data.h"
#include "common/parallel.h"
#include "common/report.h"
#include "common/timing.h"
#include "common/verify.h"
#include "cpu_baseline.h"
#include "cpu_histogram.h"
#include "cpu_sum.h"
#include "cpu_transpose.h"

namespace {

constexpr int kDefaultReps = 2;  // CPU runs take up to seconds each (the naive transpose)
constexpr int kDefaultWarmup = 1;
constexpr int64_t kLessonCount = 100000000;  // 1e8 copies of 1.23
constexpr float kLessonValue = 1.23f;

}  // namespace

namespace ch01 {

// --- the version tables: one row each; kAllCores rows run on sw::host_threads() ---

// The lesson on 1e8 x 1.23f (one core), then the sum of mixed data.
const std::vector<SumStep> kAccuracySteps = {
    one_core("float-loop", Order::kFloatLoop),
    one_core("double-loop", Order::kDoubleLoop),
    one_core("kahan-float", Order::kKahan),
    one_core("pairwise-float", Order::kPairwise),
};
constexpr const char* kDoubleDataStep = "double-data-double-loop";  // decimal 1.23 held as a double
const std::vector<SumStep> kSumSteps = {
    one_core("sum-double-1core", Order::kDoubleLoop),
    one_core("sum-float-1core", Order::kFloatLoop),
    one_core("sum-kahan-float-1core", Order::kKahan),
    one_core("sum-pairwise-float-1core", Order::kPairwise),
    all_cores("sum-double-all-cores", Order::kDoubleLoop),
    all_cores("sum-pairwise-float-all-cores", Order::kPairwise),
};

const std::vector<HistogramStep> kHistogramSteps = {
    one_core("histogram-1core", histogram_on_threads),
    all_cores("histogram-all-cores", histogram_on_threads),
};

const std::vector<TransposeStep> kTransposeSteps = {
    one_core("transpose-naive-1core", transpose_naive),
    one_core("transpose-blocked-1core", transpose_blocked),
    all_cores("transpose-blocked-all-cores", transpose_blocked),
};

}  // namespace ch01

namespace {

using namespace ch01;

// What --list prints: every step's name, in the order of the rows.
std::vector<std::string> step_names() {
  std::vector<std::string> names = sw::bench::names(kAccuracySteps);
  names.push_back(kDoubleDataStep);
  for (const std::vector<std::string>& more :
       {sw::bench::names(kSumSteps), sw::bench::names(kHistogramSteps),
        sw::bench::names(kTransposeSteps)})
    names.insert(names.end(), more.begin(), more.end());
  return names;
}

// The threads a step runs on: all of the host's for a kAllCores step, else one.
int64_t threads_of(unsigned traits) { return traits & kAllCores ? sw::host_threads() : 1; }

}  // namespace

int main(int argc, char** argv) {
  int64_t n = int64_t{1} << 28, bytes = int64_t{1} << 30, rows = 16384, cols = 16384;
  sw::Cli cli("01_cpu_baseline",
              "CPU baselines: float sum, byte histogram, matrix transpose, on one core and all.");
  cli.defaults().reps = kDefaultReps;
  cli.defaults().warmup = kDefaultWarmup;
  cli.add_int("--n", &n, 1, int64_t{1} << 32, "floats to sum");
  cli.add_int("--bytes", &bytes, 1, int64_t{1} << 34, "bytes to histogram");
  cli.add_int("--rows", &rows, 1, int64_t{1} << 20, "rows of the matrix to transpose");
  cli.add_int("--cols", &cols, 1, int64_t{1} << 20, "columns of the matrix to transpose");
  cli.set_steps(step_names());
  cli.without("--graded-timing");  // the lab grader's GPU timing: no GPU here
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  sw::Report report(opt, 0.0, "01", "sum");

  if (opt.verify_only) return ch01::verify(report, opt.seed);  // cpu_checks.cpp

  // --- the accumulation lesson: 1e8 x 1.23f, one core ------------------------------
  {
    const int64_t m = kLessonCount;
    const std::vector<float> ones(m, kLessonValue);
    const double exact_of_floats =
        static_cast<double>(kLessonValue) * m;  // the stored 1.23f, exactly
    auto lesson = [&](const char* variant, double value, double ms, bool ok, double exact) {
      sw::Result r{variant, m, 4.0 * m, {ms, ms, 1}, ok, "lesson"};
      r.extra = {{"threads", 1}, {"value", value}, {"rel_error", std::fabs(value - exact) / exact}};
      r.problem = "sum-of-1.23";
      r.note = "1e8 x 1.23";
      report.add(r);
      char text[160];
      std::snprintf(text, sizeof text, "%-24s sum = %.2f, relative error %.1e", variant, value,
                    r.extra["rel_error"]);
      report.note(text);
    };
    for (const SumStep& s : kAccuracySteps) {
      double got = 0;
      const sw::Timing t =
          sw::time_cpu(0, 1, [&] { got = sum_one_core(s.launch, ones.data(), m); });
      // 2^25 is where 1.23 drops below half a unit in the last place: the float loop stalls there.
      const bool ok =
          s.launch == Order::kFloatLoop
              ? got == 33554432.0
              : std::fabs(got - exact_of_floats) <= sum_bound(s.launch, m, 1, exact_of_floats);
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
                  "%.4f (decimal 1.23 x 1e8 = 123000000); errors are against that sum (against "
                  "1.23e8 for double data)",
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
      const int64_t threads = threads_of(s.traits);
      double got = NAN;
      const sw::Timing t = sw::time_cpu(
          opt.warmup, opt.reps, [&] { got = sum_on_threads(s.launch, x.data(), n, threads); });
      const bool ok =
          std::isfinite(got) && std::fabs(got - ref) <= sum_bound(s.launch, n, threads, abs_sum);
      sw::Result r{s.name, n, 4.0 * n, t, ok, s.role};
      r.extra = {{"threads", static_cast<double>(threads)},
                 {"rel_error", std::fabs(got - ref) / std::fabs(ref)}};
      report.add(r);
    }
  }

  // --- histogram -------------------------------------------------------------------
  {
    std::vector<uint8_t> b(bytes);
    sw::host_fill_bytes(b.data(), bytes, opt.seed, {});
    for (const HistogramStep& s : kHistogramSteps) {
      const int64_t threads = threads_of(s.traits);
      uint64_t bins[256];
      std::fill(bins, bins + 256, ~uint64_t{0});  // poison
      const sw::Timing t =
          sw::time_cpu(opt.warmup, opt.reps, [&] { s.launch(b.data(), bytes, bins, threads); });
      // The seed's check: count every byte back down; each bin must end at zero.
      for (int64_t i = 0; i < bytes; ++i) --bins[b[i]];
      bool zero = true;
      for (uint64_t v : bins) zero = zero && v == 0;
      sw::Result r{s.name, bytes, static_cast<double>(bytes), t, zero, s.role};
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
      const int64_t threads = threads_of(s.traits);
      std::fill(out.begin(), out.end(), NAN);  // poison
      const sw::Timing t = sw::time_cpu(opt.warmup, opt.reps, [&] {
        transpose_on_threads(s.launch, in.data(), out.data(), rows, cols, threads);
      });
      const bool ok = sw::count_mismatches("out", out.data(), want.data(), count) == 0;
      sw::Result r{s.name, count, 2.0 * 4.0 * count, t, ok, s.role};  // read once, write once
      r.problem = "transpose";
      r.note = std::to_string(rows) + "x" + std::to_string(cols);
      r.extra = {{"threads", static_cast<double>(threads)}};
      report.add(r);
    }
  }
  return report.exit_code();
}
