// What every histogram chapter's checks share (07 and 08 through histogram_harness.h,
// and 15): the 64-bit totals a kernel counts into, and the protocol of a checked run.
#pragma once

#include <cstdint>

namespace sw {

// 64-bit totals, the type CUDA's 64-bit atomicAdd takes: no bin wraps at 2^32 values.
using HistCount = unsigned long long;
static_assert(sizeof(HistCount) == sizeof(uint64_t), "HistCount must be 64 bits");

// The protocol of every checked run, the chapters' steps and CUB alike: poison the
// output, run, check; run again WITHOUT poisoning and check again (a kernel that
// adds onto the last run's counts instead of zeroing them fails). check(first)
// compares the output with the reference; `first` says which run it follows.
template <class Poison, class Run, class Check>
bool checked_twice(Poison&& poison, Run&& run, Check&& check) {
  poison();
  run();
  const bool ok = check(true);
  run();
  return check(false) && ok;
}

}  // namespace sw
