// What every histogram chapter's checks share (07 and 08 through
// common/problems/histogram.h, and 15): the 64-bit totals a kernel counts into and the
// comparison of totals with the reference (a bench::Verdict naming the first wrong
// bin). Their checks are bench::check_twice, their timed rows bench::measure
// (common/bench/protocol.h). CUDA only: include it from .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "common/bench/protocol.h"
#include "common/check.h"

namespace sw {

// 64-bit totals, the type CUDA's 64-bit atomicAdd takes: no bin wraps at 2^32 values.
using HistCount = unsigned long long;
static_assert(sizeof(HistCount) == sizeof(uint64_t), "HistCount must be 64 bits");

// `bins` totals against the reference, exactly. The detail names the first wrong bin
// and how many are wrong: "bin[7]: got 3, want 4 (12 bins wrong)".
template <class Got>
bench::Verdict compare_bins(const char* what, const Got* got, const uint64_t* want, int64_t bins) {
  bench::Verdict v;
  int64_t wrong = 0;
  for (int64_t i = 0; i < bins; ++i) {
    if (static_cast<uint64_t>(got[i]) == want[i]) continue;
    if (wrong++ == 0)
      v.detail = std::string(what) + "[" + std::to_string(i) + "]: got " +
                 std::to_string(static_cast<uint64_t>(got[i])) + ", want " +
                 std::to_string(want[i]);
  }
  v.ok = wrong == 0;
  if (wrong > 1) v.detail += " (" + std::to_string(wrong) + " bins wrong)";
  return v;
}

}  // namespace sw
