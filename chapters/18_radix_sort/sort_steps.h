// Chapter 18's steps 4 and 5, compiled in sort_match.cu: onesweep-early (step 3,
// sort_early.cuh) with less work a key, then with a faster histogram pass. Their
// launchers, named by the step table of 18_radix_sort.cu, and the tile they take when
// --tile-rows and --block are not given.
#pragma once

#include <vector>

#include "sort_problem.h"

namespace ch18 {

// CUB's sm_90 onesweep tile for 4-byte keys: 384 threads x 19 or 20 keys (its 64-bit and
// 32-bit offsets; cub/device/dispatch/tuning/tuning_radix_sort.cuh); its pairs take 17.
constexpr int kMatchRows = 20;
constexpr int kMatchBlock = 384;

void launch_onesweep_match(const SortCall& c);
void launch_onesweep_hist(const SortCall& c);

// Steps 8 and 9 (sort_lean.cu): compiled for one block size, 384 threads (CUB's), and for the
// blocks an SM its __launch_bounds__ asks for: three for keys (56 registers, CUB's count),
// two for pairs (their keys and values in registers), but three at 16 rows. Its own tile is
// 24 rows.
constexpr int kLeanBlock = 384;
constexpr int kLeanRows = 24;
inline const std::vector<int> kLeanRowsCompiled = {16, 20, 24};  // sort_lean.cu's LeanRows
constexpr int lean_threads_per_sm(bool pairs, int rows) {
  return pairs && rows > 16 ? 2 * kLeanBlock : 3 * kLeanBlock;
}
void launch_onesweep_lean(const SortCall& c);
void launch_onesweep_lean_hist(const SortCall& c);

}  // namespace ch18
