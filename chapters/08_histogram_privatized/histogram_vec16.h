// Chapter 08: what its two files share. grid_for, the grid rule of every step, is in
// 08_histogram_privatized.cu; the 16-byte steps (per-warp-vec16 to per-lane-vec16) are
// compiled apart in histogram_vec16.cu, whose code a student copy of the histogram
// track leaves out: it repeats the lab task's answer.
#pragma once

#include <cstdint>

#include "common/problems/histogram.h"

namespace ch08 {

// At least `blocks` blocks, and enough that none counts 2^32 bytes in its 32-bit
// shared counters (kMaxBytesPerBlock, 08_histogram_privatized.cu).
int64_t grid_for(int64_t n, int64_t blocks);

// lab shared-privatized: hide begin
void launch_per_warp_vec16(const sw::histogram::Job& j);
void launch_spread16_vec16(const sw::histogram::Job& j);
void launch_adaptive_vec16(const sw::histogram::Job& j);
void launch_adaptive_runs_vec16(const sw::histogram::Job& j);
void launch_per_lane_vec16(const sw::histogram::Job& j);
// lab shared-privatized: hide end

}  // namespace ch08
