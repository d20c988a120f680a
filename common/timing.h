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

// Median (mean of the middle two for an even count) and minimum of samples in ms.
inline Timing summarize(std::vector<double> ms) {
  Timing t;
  t.reps = static_cast<int>(ms.size());
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  const size_t mid = ms.size() / 2;
  t.ms_median = ms.size() % 2 ? ms[mid] : 0.5 * (ms[mid - 1] + ms[mid]);
  t.ms_min = ms.front();
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

}  // namespace sw
