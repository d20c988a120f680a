// GPU timing with CUDA events.
//
//   sw::Timing t = sw::time_gpu(opt, [&] { kernel<<<g, b>>>(...); CHECK_LAUNCH(); });
//
// `before` (optional) runs before every run, warm-up and timed alike, outside
// the timed region: use it to restore an input that the kernel overwrites.
// time_graded (below) is the lab grader's stricter form (--graded-timing).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "check.h"
#include "cli.h"
#include "timing.h"

namespace sw {

template <class Run, class Before>
Timing time_gpu(const CommonOptions& opt, Run&& run, Before&& before) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < opt.warmup; ++i) {
    before();
    run();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int i = 0; i < opt.reps; ++i) {
    before();
    CUDA_CHECK(cudaEventRecord(start));
    run();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float elapsed = 0;
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
    ms.push_back(elapsed);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return summarize(ms);
}

template <class Run>
Timing time_gpu(const CommonOptions& opt, Run&& run) {
  return time_gpu(opt, run, [] {});
}

// --- the lab grader's timing (--graded-timing) ---------------------------------------------

struct GradedTiming {
  Timing timing;
  int wrong = 0;      // calls (warm-up included) whose result failed its check
  double gap_ms = 0;  // the smallest, over the timed calls, of host time to idle minus event time
  bool gap = false;   // the gap is larger than launch overheads explain
};

// A host-to-idle time longer than the events' by more than this (plus kGapShare of
// the event time) in every timed call means work the events did not see: another
// stream, a host thread. The smallest gap of the calls is compared, so a host thread
// that the scheduler delays in some calls (a loaded grading machine) is no gap, while
// work hidden from the events shows in every call.
constexpr double kGapFloorMs = 0.1;
constexpr double kGapShare = 0.1;

// The seed of graded call k: new input contents for every call.
inline uint64_t graded_seed(uint64_t seed, int k) {
  return seed + 1000003ull * static_cast<uint64_t>(k + 1);
}

// Times run() as time_gpu does, for a grader that trusts nothing of it:
//  - refresh(k) gives call k new input contents and poisons its outputs, and after
//    the call check(k) must pass: no call can reuse an earlier one's work, and
//    every timed result is verified, not only the last;
//  - the window ends with the device idle (cudaDeviceSynchronize inside it), and
//    the host's time to idle is compared with the events' time: a gap is work the
//    stream's events did not see;
//  - persisting L2 lines are switched off and reset before every call, so no
//    access-policy window set up elsewhere keeps the input in L2.
template <class Run, class Refresh, class Check>
GradedTiming time_graded(const CommonOptions& opt, Run&& run, Refresh&& refresh, Check&& check) {
  if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0) != cudaSuccess)
    cudaGetLastError();  // none before sm_80
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  GradedTiming g;
  std::vector<double> ms, gaps;
  for (int k = 0; k < opt.warmup + opt.reps; ++k) {
    refresh(k);
    if (cudaCtxResetPersistingL2Cache() != cudaSuccess) cudaGetLastError();
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaEventRecord(start));
    run();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto t1 = std::chrono::steady_clock::now();
    float elapsed = 0;
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
    if (!check(k)) ++g.wrong;
    if (k >= opt.warmup) {
      ms.push_back(elapsed);
      gaps.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() - elapsed);
    }
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  g.timing = summarize(ms);
  g.gap_ms = gaps.empty() ? 0.0 : *std::min_element(gaps.begin(), gaps.end());
  g.gap = g.gap_ms > kGapFloorMs + kGapShare * g.timing.ms_median;
  return g;
}

// What a graded timing adds to a result row: extra graded_wrong, graded_gap_ms and
// graded_gaps, and ok cleared when a call was wrong or the window missed work.
inline void note_graded(const GradedTiming& g, std::map<std::string, double>* extra, bool* ok) {
  (*extra)["graded_wrong"] = g.wrong;
  (*extra)["graded_gap_ms"] = g.gap_ms;
  (*extra)["graded_gaps"] = g.gap ? 1.0 : 0.0;
  *ok = *ok && g.wrong == 0 && !g.gap;
}

}  // namespace sw
