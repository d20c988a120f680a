// Chapter 01's checks (--verify-only). Part of the program 01_cpu_baseline; the
// loops themselves are in 01_cpu_baseline.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "common/data.h"
#include "common/parallel.h"
#include "common/verify.h"
#include "cpu_baseline.h"

namespace {

using namespace ch01;

// Thread counts the sweep tries for an all-cores step: odd splits, more slices
// than values, and this host's count.
std::vector<int64_t> sweep_threads(unsigned traits) {
  const bool all_cores = (traits & kAllCores) != 0;
  std::vector<int64_t> counts = {1};
  if (all_cores) counts = {2, 3, 7};
  if (all_cores && sw::host_threads() > 3 && sw::host_threads() != 7)
    counts.push_back(sw::host_threads());
  return counts;
}

}  // namespace

// --- the correctness sweep: awkward sizes, every step, against exact answers --------

int ch01::verify(sw::Report& report, uint64_t seed) {
  // The lesson in small: 2^24 + 1 is not a float, so a float loop over 2^24 + 2
  // ones stalls at 2^24; Kahan keeps the lost part in its compensation term.
  {
    const int64_t m = (int64_t{1} << 24) + 2;
    const std::vector<float> ones(m, 1.0f);
    report.check(sum_float_loop(ones.data(), m) == 16777216.0f,
                 "float-loop stalls at 2^24 (2^24+2 ones)");
    report.check(sum_double_loop(ones.data(), m) == static_cast<double>(m),
                 "double-loop exact (2^24+2 ones)");
    report.check(std::fabs(sum_kahan_float(ones.data(), m) - m) <= 2.0,
                 "kahan-float within 2 (2^24+2 ones)");
  }
  for (int64_t size : {1, 2, 31, 32, 33, 127, 128, 129, 255, 256, 257, 1000, 65537, 1000003}) {
    std::vector<float> x(size);
    sw::host_fill_floats(x.data(), size, seed);
    const double ref = sw::sum_pairwise_double(x.data(), size);  // the reference, in double
    const double abs_sum = sw::sum_abs_double(x.data(), size);
    for (const SumStep& s : kSumSteps)
      for (int64_t threads : sweep_threads(s.traits)) {
        const double got = sum_on_threads(s.launch, x.data(), size, threads);
        const double err = std::fabs(got - ref),
                     bound = sum_bound(s.launch, size, threads, abs_sum);
        char detail[120];
        std::snprintf(detail, sizeof detail, "got %.9g, want %.9g, error %.3g > bound %.3g", got,
                      ref, err, bound);
        const bool ok = std::isfinite(got) && err <= bound;
        report.check(ok,
                     std::string(s.name) + " n=" + std::to_string(size) +
                         " threads=" + std::to_string(threads),
                     ok ? "" : detail);
      }

    std::vector<uint8_t> b(size);
    sw::host_fill_bytes(b.data(), size, seed, {sw::ByteDist::Mix, 7, 0.5});  // runs of equal bytes
    uint64_t want[256] = {};
    for (uint8_t v : b) ++want[v];
    for (const HistogramStep& s : kHistogramSteps)
      for (int64_t threads : sweep_threads(s.traits)) {
        uint64_t bins[256];
        std::fill(bins, bins + 256, ~uint64_t{0});  // poison
        s.launch(b.data(), size, bins, threads);
        report.check(sw::count_mismatches("bin", bins, want, 256) == 0,
                     std::string(s.name) + " n=" + std::to_string(size) +
                         " threads=" + std::to_string(threads));
      }
  }
  for (auto [r, c] :
       {std::pair<int64_t, int64_t>{1, 1}, {1, 1003}, {1003, 1}, {33, 31}, {70, 131}, {100, 199}}) {
    std::vector<float> in(r * c), got(r * c), want(r * c);
    sw::host_fill_floats(in.data(), r * c, seed);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) want[j * r + i] = in[i * c + j];
    for (const TransposeStep& s : kTransposeSteps)
      for (int64_t threads : sweep_threads(s.traits)) {
        std::fill(got.begin(), got.end(), NAN);  // poison
        transpose_on_threads(s.launch, in.data(), got.data(), r, c, threads);
        report.check(sw::count_mismatches("out", got.data(), want.data(), r * c) == 0,
                     std::string(s.name) + " " + std::to_string(r) + "x" + std::to_string(c) +
                         " threads=" + std::to_string(threads));
      }
  }
  return report.exit_code();
}
