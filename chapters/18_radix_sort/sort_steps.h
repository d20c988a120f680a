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
// Steps 4 and 5 are compiled for this tile only (sort_match.cu).
constexpr int kMatchRows = 20;
constexpr int kMatchBlock = 384;

void launch_onesweep_match(const SortCall& c);
void launch_onesweep_hist(const SortCall& c);

// Steps 8 and 9 (sort_lean.cu): compiled for blocks of 384 threads (CUB's) or 512 and for
// 16, 20 or 24 rows, each for the blocks an SM its __launch_bounds__ asks for: 3 of 384 for
// keys (56 registers, CUB's count) and 2 of 512 (64 registers); pairs, whose keys and
// values stay in registers, 2 of 384, or 3 at 16 rows, and 2 of 512 (64 registers: 32
// warps). Their own tile is 24 x 384.
constexpr int kLeanBlock = 384;
constexpr int kLeanRows = 24;
inline const std::vector<int> kLeanRowsCompiled = {16, 20, 24};  // sort_lean.cu's LeanRows
inline const std::vector<int> kLeanBlocksCompiled = {384, 512};  // and LeanBlocks
constexpr int lean_threads_per_sm(bool pairs, int rows, int block) {
  return block == 512 ? 2 * block : pairs && rows > 16 ? 2 * block : 3 * block;
}
void launch_onesweep_lean(const SortCall& c);
void launch_onesweep_lean_hist(const SortCall& c);
// Step 10 (sort_lean.cu): step 9's tile with pairs packed in the scratch buffer; its pairs
// kernels are compiled for blocks of 384 and 20 or 24 rows, its own tile 24 x 384.
inline const std::vector<int> kPackedRowsCompiled = {20, 24};  // sort_lean.cu's PackedRows
void launch_onesweep_packed(const SortCall& c);

}  // namespace ch18
