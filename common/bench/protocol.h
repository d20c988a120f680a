// The measurement protocol, written once: sw::bench::measure() measures every timed
// GPU row of every chapter (and the copy ceiling), in four parts:
//
//   1. restore, poison every output, run once, check against the reference;
//   2. time: opt.warmup runs, then opt.reps runs, each between a pair of CUDA
//      events; the row's time is the median, per call;
//   3. check the result of the last timed run again (and, for a row that asks
//      for it, that its bits are the first run's: a fixed order of additions);
//      A compute-bound row (Row::flops > 0) also reads the SM clock once per timed run,
//      once it is launched (common/gpu_sensors.h), and keeps the median (extra
//      sm_clock_mhz); then its power: the run repeated for a quarter second, the GPU's
//      energy counter read around it (extra power_w, power_window_s its length,
//      power_clock_mhz the median clock meanwhile, which the table prints: the runs'
//      own readings do not show the power limit), or, on a GPU without
//      the counter, the median of one power reading per timed run (power_window_s: 0,
//      instantaneous; 1, the last second);
//   4. with --graded-timing (the lab grader's timing), part 2 instead gives every
//      run new input contents from another seed, poisons its outputs and checks
//      it, switches persisting L2 lines off, and ends each timed window with the
//      device idle; the row records the wrong runs and any work the events did
//      not see (extra graded_wrong, graded_gap_ms, graded_gaps). A vendor row (the
//      library's code, which the grader does not grade) is timed as in part 2 and
//      says so (extra graded_as_usual): for chapter 18, new keys for every run would
//      mean a host sort of them for every run.
//
// A problem (the reduction's SumData, the scan's RowData, ...) describes its data
// to measure() through an object with four members, and a fifth if it needs it:
//
//   void poison() const;              every output a call may write
//   Verdict check() const;            the outputs of the last call against the reference
//   bool reseed(uint64_t seed) const; new input contents and their reference from
//                                     `seed` (false: the data cannot change, e.g. a file)
//   uint64_t seed() const;            the seed of the current contents
//   void restore() const;             (optional) before every run, outside the events:
//                                     writes again an input that the step overwrites
//   std::vector<Buffer> outputs() const;   (a problem with kExchangesOutputs) every buffer
//                                     its check reads that a run writes, in a fixed order
//
// --dump-outputs and --check-outputs (common/bench/outputs.h, the lab grader's boundary)
// act in check_once and check_twice: after each checked run the outputs() are written to
// the folder, or, with --check-outputs, the run does not launch the step and the folder's
// bytes are put into the poisoned outputs before the check. measure() refuses both.
//
// A run is row.calls calls of launch(args...), the step's launcher and what it gets:
//
//   const sw::bench::Row row{"sequential", n, bytes};
//   sw::Result r = sw::bench::measure(opt, row, data, launch_sequential, sum);
//
// measure() calls the launcher itself, and the launcher holds the <<<>>>. A run
// of more than one launcher (a CUDA graph, two launchers) is a lambda with no
// arguments.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/bench/outputs.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/gpu_sensors.h"
#include "common/report.h"
#include "common/timing.h"

namespace sw::bench {

// One check's outcome.
struct Verdict {
  bool ok = true;
  std::string detail;      // why not, naming the first wrong element ("out[7]: got 3, want 4")
  double rel_error = NAN;  // floating-point problems: the error against the reference (NaN: none)
  uint64_t bits = 0;       // a fingerprint of the output, compared when Row::same_bits
};

// An output that a check reads, for the exchange of outputs (common/bench/outputs.h):
// where it is (device memory, or host memory: a finish on the host, a count the launcher
// states) and its bytes.
struct Buffer {
  void* data;
  int64_t bytes;
};

// What measure() reports besides the time.
struct Row {
  std::string variant;     // the row's name: the step's, "cub", ...
  int64_t n = 0;           // the problem size in elements
  double bytes = 0;        // the bytes one call must move
  int calls = 1;           // calls of the launcher in one run, back to back; the time is per call
  bool same_bits = false;  // every run must give the first run's bits (Verdict::bits)
  std::string role = "step";
  double flops = 0;  // compute-bound work: the floating-point operations one call must do (0: none)
};

// Data whose result nobody checks: the timing of an empty kernel, of a copy that
// is the ceiling. Its check always passes, so use it for nothing else.
struct Unchecked {
  void poison() const {}
  Verdict check() const { return {}; }
  bool reseed(uint64_t) const { return false; }
  uint64_t seed() const { return 0; }
};

// --- graded timing: what counts as work the events did not see ---------------------------

// A host-to-idle time longer than the events' by more than this (plus kGapShare of
// the event time) in every timed run means work the events did not see: another
// stream, a host thread. The smallest gap of the runs is compared, so a host thread
// that the scheduler delays in some runs (a loaded grading machine) is no gap, while
// work hidden from the events shows in every run.
constexpr double kGapFloorMs = 0.1;
constexpr double kGapShare = 0.1;

// The seed of graded run k: new input contents for every run.
inline uint64_t graded_seed(uint64_t seed, int k) {
  return seed + 1000003ull * static_cast<uint64_t>(k + 1);
}

namespace detail {
template <class Data, class = void>
struct HasRestore : std::false_type {};
template <class Data>
struct HasRestore<Data, std::void_t<decltype(std::declval<const Data&>().restore())>>
    : std::true_type {};
}  // namespace detail

// Data::restore(), where the data have one.
template <class Data>
void restore(const Data& data) {
  if constexpr (detail::HasRestore<Data>::value) data.restore();
}

namespace detail {
template <class Data, class = void>
struct HasOutputs : std::false_type {};
template <class Data>
struct HasOutputs<Data, std::void_t<decltype(std::declval<const Data&>().outputs())>>
    : std::true_type {};
}  // namespace detail

// The exchange of the run that just ended: its outputs written to the folder
// (--dump-outputs), or the folder's bytes put into them (--check-outputs). "" or why the
// run cannot be judged.
template <class Data>
std::string exchange_outputs(const Data& data) {
  Exchange& x = exchange();
  if (x.mode() == Exchange::Mode::kOff) return "";
  if constexpr (!detail::HasOutputs<Data>::value) {
    return "this check's data name no outputs to exchange";
  } else {
    const std::vector<Buffer> outs = data.outputs();
    std::vector<std::vector<unsigned char>> host(outs.size());
    std::vector<HostBytes> parts;
    for (size_t i = 0; i < outs.size(); ++i) {
      host[i].resize(static_cast<size_t>(outs[i].bytes));
      if (x.mode() == Exchange::Mode::kDump && outs[i].bytes > 0)
        CUDA_CHECK(cudaMemcpy(host[i].data(), outs[i].data, host[i].size(), cudaMemcpyDefault));
      parts.push_back({host[i].data(), outs[i].bytes});
    }
    const std::string why = x.run(parts);
    if (why.empty() && x.mode() == Exchange::Mode::kCheck)
      for (size_t i = 0; i < outs.size(); ++i)
        if (outs[i].bytes > 0)
          CUDA_CHECK(cudaMemcpy(outs[i].data, host[i].data(), host[i].size(), cudaMemcpyDefault));
    return why;
  }
}

// One checked run after the poison: the launch (with --check-outputs, the dumped bytes in
// its place), then the exchange. "" or why the run cannot be judged.
template <class Data, class Launch, class... Args>
std::string checked_run(const Data& data, Launch&& launch, const Args&... args) {
  if (exchange().mode() != Exchange::Mode::kCheck) launch(args...);
  CUDA_CHECK(cudaDeviceSynchronize());
  return exchange_outputs(data);
}

// A check of --verify-only, exchange().repeats() times (--repeat, common/bench/outputs.h): the
// first repeat's verdict when all pass, else the first failing one's, its detail naming the
// repeat, the count that failed and a later repeat that failed otherwise (repeat_detail).
template <class OneCheck>
Verdict repeated(OneCheck&& one_check) {
  const Verdict first = one_check();
  const int n = exchange().repeats();
  if (n == 1) return first;
  std::vector<RepeatOutcome> outcomes{{first.ok, first.detail}};
  Verdict failed = first;
  for (int k = 1; k < n; ++k) {
    const Verdict v = one_check();
    outcomes.push_back({v.ok, v.detail});
    if (failed.ok && !v.ok) failed = v;
  }
  if (failed.ok) return first;
  failed.detail = repeat_detail(outcomes);
  return failed;
}

// Part 1 alone, for the checks of --verify-only: restore, poison, one call, check (each
// repeat of --repeat).
template <class Data, class Launch, class... Args>
Verdict check_once(const Data& data, Launch&& launch, const Args&... args) {
  return repeated([&]() -> Verdict {
    restore(data);
    data.poison();
    const std::string why = checked_run(data, launch, args...);
    if (!why.empty()) return {false, why};
    return data.check();
  });
}

// check_once, then one more call WITHOUT poisoning, checked again: for outputs a
// kernel accumulates into (a histogram that adds onto the last run's counts instead
// of zeroing them passes check_once and fails here). In measure() the warm-up and
// timed runs are that second call. Both runs are exchanged (two runs of the dump);
// with --repeat, the pair is repeated.
template <class Data, class Launch, class... Args>
Verdict check_twice(const Data& data, Launch&& launch, const Args&... args) {
  return repeated([&]() -> Verdict {
    restore(data);
    data.poison();
    const std::string why = checked_run(data, launch, args...);
    Verdict first = data.check();
    if (!why.empty()) first = {false, why};
    const std::string why_again = checked_run(data, launch, args...);
    Verdict again = data.check();
    if (!why_again.empty()) again = {false, why_again};
    if (!first.ok) return first;
    if (!again.ok) again.detail = "the second run, not poisoned: " + again.detail;
    return again;
  });
}

// The whole protocol (see the top of this file). A failed check leaves its detail
// in Result::detail, which the report prints beside the row.
template <class Data, class Launch, class... Args>
Result measure(const CommonOptions& opt, const Row& row, const Data& data, Launch&& launch,
               const Args&... args) {
  if (exchange().mode() != Exchange::Mode::kOff) {  // only --verify-only's checks exchange
    Result refused{row.variant, row.n, row.bytes, {}, false, row.role};
    refused.detail = "not measured with --dump-outputs or --check-outputs";
    return refused;
  }
  // 1. one checked call
  restore(data);
  data.poison();
  launch(args...);
  CUDA_CHECK(cudaDeviceSynchronize());
  const Verdict first = data.check();
  Verdict last = first;
  Result r{row.variant, row.n, row.bytes, {}, first.ok, row.role};
  r.flops = row.flops;

  // 2. (4.) the timed runs
  const bool graded = opt.graded_timing && row.role != "vendor";
  const uint64_t seed = data.seed();
  if (graded && cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0) != cudaSuccess)
    cudaGetLastError();  // none before sm_80
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms, gaps, mhz, watts;
  double power_window_s = NAN;  // of the power readings (gpu_sensors.h)
  int wrong = 0;
  // The clock and power of a compute-bound row, read while each timed run is on the GPU
  // (between the stop event's record and its wait). Not with --graded-timing: the host's
  // time of that wait is what the graded gap test compares.
  const bool sensors = row.flops > 0 && !graded;
  for (int k = 0; k < opt.warmup + opt.reps; ++k) {
    if (graded) data.reseed(graded_seed(seed, k));  // new contents for every run
    restore(data);
    if (graded) {  // poisoned outputs, no L2 lines kept, the device idle
      data.poison();
      if (cudaCtxResetPersistingL2Cache() != cudaSuccess) cudaGetLastError();
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    const auto t0 = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaEventRecord(start));
    for (int c = 0; c < row.calls; ++c) launch(args...);
    CUDA_CHECK(cudaEventRecord(stop));
    if (sensors && k >= opt.warmup) {
      const SensorReading now = read_sensors();
      if (std::isfinite(now.sm_clock_mhz)) mhz.push_back(now.sm_clock_mhz);
      if (std::isfinite(now.power_w)) {
        watts.push_back(now.power_w);
        power_window_s = now.power_window_s;
      }
    }
    CUDA_CHECK(graded ? cudaDeviceSynchronize() : cudaEventSynchronize(stop));
    const auto t1 = std::chrono::steady_clock::now();
    float elapsed = 0;
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
    if (graded) {  // every run checked; the first wrong one names the error
      const Verdict v = data.check();
      wrong += !v.ok;
      if (!v.ok && last.ok) last = v;
    }
    if (k < opt.warmup) continue;
    ms.push_back(elapsed / row.calls);
    gaps.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() - elapsed);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  if (sensors) {  // the power over a window long enough for the energy counter
    const PowerWindow p = power_window([&] {
      restore(data);
      for (int c = 0; c < row.calls; ++c) launch(args...);
    });
    if (std::isfinite(p.power_w)) {
      watts = {p.power_w};
      power_window_s = p.seconds;
    }
    if (std::isfinite(p.sm_clock_mhz)) r.extra["power_clock_mhz"] = p.sm_clock_mhz;
  }
  r.timing = summarize(ms);
  if (!mhz.empty()) r.extra["sm_clock_mhz"] = median(mhz);
  if (!watts.empty()) r.extra["power_w"] = median(watts);
  if (std::isfinite(power_window_s)) r.extra["power_window_s"] = power_window_s;

  // 3. the last run checked again, or (4.) the graded verdict
  if (graded) {
    data.reseed(seed);
    const double gap_ms = gaps.empty() ? 0.0 : *std::min_element(gaps.begin(), gaps.end());
    const bool gap = gap_ms > kGapFloorMs + kGapShare * r.timing.ms_median * row.calls;
    r.extra["graded_wrong"] = wrong;
    r.extra["graded_gap_ms"] = gap_ms;
    r.extra["graded_gaps"] = gap ? 1.0 : 0.0;
    r.ok = first.ok && wrong == 0 && !gap;
  } else {
    if (opt.graded_timing) r.extra["graded_as_usual"] = 1;  // a vendor row: says so
    last = data.check();
    r.ok = first.ok && last.ok && (!row.same_bits || last.bits == first.bits);
    if (first.ok && last.ok && !r.ok) last.detail = "the last timed run gave other bits";
  }
  if (!first.ok)
    r.detail = first.detail;
  else if (!r.ok)
    r.detail = last.detail.empty() ? "work the events did not see (graded_gaps)"
                                   : "a timed run: " + last.detail;
  if (std::isfinite(last.rel_error)) r.extra["rel_error"] = last.rel_error;
  return r;
}

}  // namespace sw::bench
