// Chapter 01: CPU baselines for the tutorial's three problems.
//
// What this is:  one CPU core summing floats, counting a 256-bin byte histogram
//                and transposing a matrix. Every later chapter quotes its speedup
//                over these times ("vs CPU" in the tour).
// The lesson:    float accumulation loses small addends once the running sum is
//                large ("the big number eats the small one"): a float loop over
//                1e8 copies of 1.23 stops growing at 2^25 = 33554432. Double,
//                Kahan (compensated) and pairwise summation fix it in different ways.
// Bottleneck:    one core's load bandwidth for the sum and the histogram; cache
//                misses on the strided side of the naive transpose.
// Run:           build/chapters/01_cpu_baseline [--n 2^28] [--bytes 2^30]
//                [--rows 16384 --cols 16384] [--verify-only] [--json]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/data.h"
#include "common/report.h"
#include "common/timing.h"
#include "common/verify.h"

namespace {

constexpr int kDefaultReps = 2;    // CPU runs take up to seconds each (the naive transpose)
constexpr int kDefaultWarmup = 1;
constexpr int64_t kLessonCount = 100000000;  // 1e8 copies of 1.23
constexpr float kLessonValue = 1.23f;

// --- the kernels of this chapter: plain loops --------------------------------------

// A transpose that walks the output in order: reads jump by `cols` floats, so
// each read touches a new cache line.
void transpose_naive(const float* in, float* out, int64_t rows, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) out[c * rows + r] = in[r * cols + c];
}

// --- checks ------------------------------------------------------------------------

// Error bound of each float summation order (see common/verify.h).
int64_t float_loop_depth(int64_t n) { return n > 1 ? n - 1 : 1; }
int64_t pairwise_depth(int64_t n) { return 128 + sw::ceil_log2(n); }  // 128-value leaves
double kahan_bound(int64_t n, double abs_sum) {
  const double u = sw::kFloatUnitRoundoff;  // Higham: (2u + O(n u^2)) sum|x|
  return (2 * u + 2 * static_cast<double>(n) * u * u) * abs_sum +
         static_cast<double>(n) * std::ldexp(1.0, -53) * abs_sum;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = int64_t{1} << 28, bytes = int64_t{1} << 30, rows = 16384, cols = 16384;
  sw::Cli cli("01_cpu_baseline", "CPU baselines: float sum, byte histogram, matrix transpose.");
  cli.defaults().reps = kDefaultReps;
  cli.defaults().warmup = kDefaultWarmup;
  cli.add_int("--n", &n, 1, int64_t{1} << 32, "floats to sum");
  cli.add_int("--bytes", &bytes, 1, int64_t{1} << 34, "bytes to histogram");
  cli.add_int("--rows", &rows, 1, int64_t{1} << 20, "rows of the matrix to transpose");
  cli.add_int("--cols", &cols, 1, int64_t{1} << 20, "columns of the matrix to transpose");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  sw::Report report(opt, 0.0, "01", "sum");

  if (opt.verify_only) {
    for (int64_t size : {1, 2, 31, 32, 33, 255, 256, 257, 1000, 65537, 1000003}) {
      std::vector<float> x(size);
      sw::host_fill_floats(x.data(), size, opt.seed);
      const double ref = sw::sum_pairwise_double(x.data(), size);
      const double abs_sum = sw::sum_abs_double(x.data(), size);
      const std::string at = " n=" + std::to_string(size);
      auto c = sw::check_sum(sw::sum_float(x.data(), size), ref, abs_sum, float_loop_depth(size), size);
      report.check(c.ok, "float-loop" + at);
      c = sw::check_sum(sw::sum_pairwise_float(x.data(), size), ref, abs_sum, pairwise_depth(size), size);
      report.check(c.ok, "pairwise-float" + at);
      const double kahan_err = std::fabs(sw::sum_kahan_float(x.data(), size) - ref);
      report.check(kahan_err <= kahan_bound(size, abs_sum), "kahan-float" + at);

      std::vector<uint8_t> b(size);
      sw::host_fill_bytes(b.data(), size, opt.seed, {});
      uint64_t bins[256], want[256] = {};
      sw::histogram_cpu(b.data(), size, bins);
      for (uint8_t v : b) ++want[v];
      report.check(sw::count_mismatches("bin", bins, want, 256) == 0, "histogram" + at);
    }
    for (auto [r, c] : {std::pair<int64_t, int64_t>{1, 1}, {1, 1003}, {1003, 1}, {33, 31}, {100, 199}}) {
      std::vector<float> in(r * c), got(r * c), want(r * c);
      sw::host_fill_floats(in.data(), r * c, opt.seed);
      for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < c; ++j) want[j * r + i] = in[i * c + j];
      const std::string at = " " + std::to_string(r) + "x" + std::to_string(c);
      sw::transpose_cpu(in.data(), got.data(), r, c);
      report.check(sw::count_mismatches("out", got.data(), want.data(), r * c) == 0, "transpose-blocked" + at);
      transpose_naive(in.data(), got.data(), r, c);
      report.check(sw::count_mismatches("out", got.data(), want.data(), r * c) == 0, "transpose-naive" + at);
    }
    return report.exit_code();
  }

  // --- the accumulation lesson ---------------------------------------------------
  {
    std::vector<float> ones(kLessonCount, kLessonValue);
    const int64_t m = kLessonCount;
    const double exact_of_floats = static_cast<double>(kLessonValue) * m;  // the stored 1.23f, exactly
    auto lesson = [&](const char* variant, double value, double ms, bool ok,
                      double exact = 0) {
      if (exact == 0) exact = exact_of_floats;
      sw::Result r{variant, m, 4.0 * m, {ms, ms, 1}, ok, "lesson"};
      r.extra = {{"value", value}, {"rel_error", std::fabs(value - exact) / exact}};
      r.problem = "sum-of-1.23";
      report.add(r);
      char text[160];
      std::snprintf(text, sizeof text, "%-24s sum = %.2f, relative error %.1e", variant, value,
                    r.extra["rel_error"]);
      report.note(text);
    };
    float f = 0;
    double d = 0, dd = 0, kahan = 0, pair = 0;
    sw::Timing t = sw::time_cpu(0, 1, [&] { f = sw::sum_float(ones.data(), m); });
    // 2^25 is where 1.23 drops below half a unit in the last place: the sum stalls.
    lesson("float-loop", f, t.ms_median, f == 33554432.0f);
    t = sw::time_cpu(0, 1, [&] { d = sw::sum_double(ones.data(), m); });
    lesson("double-loop", d, t.ms_median, std::fabs(d - exact_of_floats) <= m * std::ldexp(1.0, -53) * exact_of_floats);
    t = sw::time_cpu(0, 1, [&] {
      double s = 0;
      for (int64_t i = 0; i < m; ++i) s += 1.23;  // decimal 1.23 held as a double
      dd = s;
    });
    lesson("double-data-double-loop", dd, t.ms_median, std::fabs(dd - 1.23e8) < 1.0, 1.23e8);
    t = sw::time_cpu(0, 1, [&] { kahan = sw::sum_kahan_float(ones.data(), m); });
    lesson("kahan-float", kahan, t.ms_median, std::fabs(kahan - exact_of_floats) <= kahan_bound(m, exact_of_floats));
    t = sw::time_cpu(0, 1, [&] { pair = sw::sum_pairwise_float(ones.data(), m); });
    lesson("pairwise-float", pair, t.ms_median,
           std::fabs(pair - exact_of_floats) <= sw::float_sum_bound(pairwise_depth(m), exact_of_floats, m));
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
    const double moved = 4.0 * n;
    double got_d = 0;
    float got_f = 0;
    auto add = [&](const char* variant, double got, sw::Timing t, bool ok) {
      sw::Result r{variant, n, moved, t, ok, "cpu"};
      r.extra = {{"rel_error", std::fabs(got - ref) / std::fabs(ref)}};
      report.add(r);
    };
    sw::Timing t = sw::time_cpu(opt.warmup, opt.reps, [&] { got_d = sw::sum_double(x.data(), n); });
    add("sum-double-loop", got_d, t, sw::check_sum(got_d, ref, abs_sum, 1, n).ok);
    t = sw::time_cpu(opt.warmup, opt.reps, [&] { got_f = sw::sum_float(x.data(), n); });
    add("sum-float-loop", got_f, t, sw::check_sum(got_f, ref, abs_sum, float_loop_depth(n), n).ok);
    t = sw::time_cpu(opt.warmup, opt.reps, [&] { got_f = sw::sum_kahan_float(x.data(), n); });
    add("sum-kahan-float", got_f, t, std::fabs(got_f - ref) <= kahan_bound(n, abs_sum));
    t = sw::time_cpu(opt.warmup, opt.reps, [&] { got_f = sw::sum_pairwise_float(x.data(), n); });
    add("sum-pairwise-float", got_f, t, sw::check_sum(got_f, ref, abs_sum, pairwise_depth(n), n).ok);
  }

  // --- histogram -------------------------------------------------------------------
  {
    std::vector<uint8_t> b(bytes);
    sw::host_fill_bytes(b.data(), bytes, opt.seed, {});
    uint64_t bins[256];
    const sw::Timing t = sw::time_cpu(opt.warmup, opt.reps, [&] { sw::histogram_cpu(b.data(), bytes, bins); });
    // The seed's check: count every byte back down; each bin must end at zero.
    for (int64_t i = 0; i < bytes; ++i) --bins[b[i]];
    bool zero = true;
    for (uint64_t v : bins) zero = zero && v == 0;
    sw::Result r{"histogram-cpu", bytes, static_cast<double>(bytes), t, zero, "cpu"};
    r.problem = "histogram";
    r.note = "uniform";
    report.add(r);
  }

  // --- transpose -------------------------------------------------------------------
  {
    const int64_t count = rows * cols;
    std::vector<float> in(count), out(count), want(count);
    sw::host_fill_floats(in.data(), count, opt.seed);
    sw::transpose_cpu(in.data(), want.data(), rows, cols);
    const double moved = 2.0 * 4.0 * count;  // read once, write once
    auto add = [&](const char* variant, sw::Timing t) {
      sw::Result r{variant, count, moved, t, std::equal(out.begin(), out.end(), want.begin()), "cpu"};
      r.problem = "transpose";
      r.note = std::to_string(rows) + "x" + std::to_string(cols);
      report.add(r);
      std::fill(out.begin(), out.end(), NAN);  // poison before the next variant
    };
    std::fill(out.begin(), out.end(), NAN);
    add("transpose-naive-cpu",
        sw::time_cpu(opt.warmup, opt.reps, [&] { transpose_naive(in.data(), out.data(), rows, cols); }));
    add("transpose-blocked-cpu",
        sw::time_cpu(opt.warmup, opt.reps, [&] { sw::transpose_cpu(in.data(), out.data(), rows, cols); }));
  }
  return report.exit_code();
}
