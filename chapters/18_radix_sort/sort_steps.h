// Chapter 18's steps 4 and 5, compiled in sort_match.cu: onesweep-early (step 3,
// sort_early.cuh) with less work a key, then with a faster histogram pass. Their
// launchers, named by the step table of 18_radix_sort.cu, and the tile they take when
// --tile-rows and --block are not given.
#pragma once

#include "sort_problem.h"

namespace ch18 {

// CUB's sm_90 onesweep tile for 4-byte keys: 384 threads x 19 or 20 keys (its 64-bit and
// 32-bit offsets; cub/device/dispatch/tuning/tuning_radix_sort.cuh); its pairs take 17.
constexpr int kMatchRows = 20;
constexpr int kMatchBlock = 384;

void launch_onesweep_match(const SortCall& c);
void launch_onesweep_hist(const SortCall& c);

}  // namespace ch18
