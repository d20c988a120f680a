// Timing: repeat, drop the warm-up runs, report the median and the minimum.
//
//   sw::Timing t = sw::time_cpu(opt.warmup, opt.reps, [&] { work(); });
//
// GPU rows are timed with CUDA events by sw::bench::measure (common/bench/protocol.h).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace sw {

struct Timing {
  double ms_median = 0;
  double ms_min = 0;
  int reps = 0;
};

// The median of samples (the mean of the middle two for an even count; 0 for none).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

// Median and minimum of samples in ms.
inline Timing summarize(std::vector<double> ms) {
  Timing t;
  t.reps = static_cast<int>(ms.size());
  if (ms.empty()) return t;
  t.ms_median = median(ms);
  t.ms_min = *std::min_element(ms.begin(), ms.end());
  return t;
}

// Host work timed with the steady clock.
template <class Work>
Timing time_cpu(int warmup, int reps, Work&& work) {
  for (int i = 0; i < warmup; ++i) work();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    work();
    const auto stop = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return summarize(ms);
}

// Decimal gigabytes per second: bytes / 1e9 / seconds.
inline double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

// Decimal teraflops per second: flops / 1e12 / seconds.
inline double tflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e9) : 0.0; }

}  // namespace sw
