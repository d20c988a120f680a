// The measurement protocol, written once. Every timed GPU row of every chapter
// is measured by sw::bench::measure():
//
//   1. poison every output, run once, check against the reference;
//   2. time: warm-up runs, then opt.reps runs, each between a pair of CUDA events
//      (time_gpu); the row's time is the median, per call;
//   3. check the result of the last timed run again (and, for a row that asks for
//      it, that its bits are the first run's: a fixed order of additions).
//
// With --graded-timing (the lab grader's timing, sw::time_graded) step 2 gives
// every call new input contents from another seed, poisons its outputs and checks
// it, and ends each timed window with the device idle; the row records the wrong
// calls and any work the events did not see (graded_wrong, graded_gaps).
//
// A problem (the reduction's Input, the scan's ScanData, ...) describes its data
// to measure() through an object with four members:
//
//   void poison() const;              every output a call may write
//   Verdict check() const;            the outputs of the last call against the reference
//   bool reseed(uint64_t seed) const; new input contents and their reference from
//                                     `seed` (false: the data cannot change, e.g. a file)
//   uint64_t seed() const;            the seed of the current contents
//
//   const sw::bench::Row row{"sequential", n, bytes};
//   sw::Result r = sw::bench::measure(opt, row, data, [&] { launch_sequential(sum); });
//
// The timed callable is the step's launcher call, nothing in between: the
// launcher holds the <<<>>> (time_gpu -> the callable -> launch_<step> -> <<<>>>).
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "common/check.h"
#include "common/cli.h"
#include "common/gpu_timer.h"
#include "common/report.h"

namespace sw::bench {

// One check's outcome.
struct Verdict {
  bool ok = true;
  std::string detail;      // why not, naming the first wrong element ("out[7]: got 3, want 4")
  double rel_error = NAN;  // floating-point problems: the error against the reference (NaN: none)
  uint64_t bits = 0;       // a fingerprint of the output, compared when Row::same_bits
};

// What measure() reports besides the time.
struct Row {
  std::string variant;     // the row's name: the step's, "cub", ...
  int64_t n = 0;           // the problem size in elements
  double bytes = 0;        // the bytes one call must move
  int calls = 1;           // calls of the step in one timed run, back to back; the time is per call
  bool same_bits = false;  // every run must give the first run's bits (Verdict::bits)
  std::string role = "step";
};

// A timing of `calls` calls as the time of one.
inline Timing per_call(Timing t, int calls) {
  t.ms_median /= calls;
  t.ms_min /= calls;
  return t;
}

// Step 1 alone, for the checks of --verify-only: `before`, poison, one run, check.
template <class Data, class Run, class Before>
Verdict check_once(const Data& data, Run&& run, Before&& before) {
  before();
  data.poison();
  run();
  CUDA_CHECK(cudaDeviceSynchronize());
  return data.check();
}
template <class Data, class Run>
Verdict check_once(const Data& data, Run&& run) {
  return check_once(data, run, [] {});
}

// The whole protocol (see the top of this file). `before` runs before every run,
// warm-up and timed, outside the events: it restores an input that a step
// overwrites. A failed check leaves its detail in Result::detail, which the report
// prints beside the row.
template <class Data, class Run, class Before>
Result measure(const CommonOptions& opt, const Row& row, const Data& data, Run&& run,
               Before&& before) {
  const Verdict first = check_once(data, run, before);
  Result r{row.variant, row.n, row.bytes, {}, first.ok, row.role};
  Verdict last = first;
  if (opt.graded_timing) {  // new contents, poisoned outputs and a check for every call
    const uint64_t seed = data.seed();
    const GradedTiming g = time_graded(
        opt, run,
        [&](int k) {
          data.reseed(graded_seed(seed, k));
          before();
          data.poison();
        },
        [&](int) {
          const Verdict v = data.check();
          if (!v.ok && last.ok) last = v;  // the first wrong call names the error
          return v.ok;
        });
    data.reseed(seed);
    r.timing = per_call(g.timing, row.calls);
    note_graded(g, &r.extra, &r.ok);
  } else {
    r.timing = per_call(time_gpu(opt, run, before), row.calls);
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

template <class Data, class Run>
Result measure(const CommonOptions& opt, const Row& row, const Data& data, Run&& run) {
  return measure(opt, row, data, run, [] {});
}

}  // namespace sw::bench
