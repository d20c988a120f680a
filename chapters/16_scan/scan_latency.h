// Chapter 16's steps 9 to 12 and 15, compiled in scan_latency.cu, and 13 and 14, compiled
// in scan_prefetch.cu: lookback-vec's single pass with less latency per tile, then with
// the next tiles' loads in flight during the wait. Their launchers, named by the step
// table of 16_scan.cu, and the tile that steps 12 to 15 take when --tile-rows and --block
// are not given.
#pragma once

#include "common/problems/scan_call.h"
#include "scan_launch.cuh"

namespace ch16 {

// The kernels of steps 12 to 15 are compiled for the chapter's rows and for 6 rows, their
// own tile: 128 threads x 6 rows x 4 elements = 24 four-byte elements a thread, the tile
// of CUB's sm_90 tuning for 4-byte sums (cub/device/dispatch/tuning/tuning_scan.cuh).
using LeanRows = Choices<1, 2, 4, 6, 8>;
constexpr int kLeanRows = 6;
constexpr int kLeanBlock = 128;

template <class T>
void launch_lookback_noticket(const sw::scan::ScanCall<T>& c);
template <class T>
void launch_lookback_early(const sw::scan::ScanCall<T>& c);
template <class T>
void launch_lookback_backoff(const sw::scan::ScanCall<T>& c);
template <class T>
void launch_lookback_lean(const sw::scan::ScanCall<T>& c);
template <class T>
void launch_lookback_l2_prefetch(const sw::scan::ScanCall<T>& c);
template <class T>
void launch_lookback_prefetch(const sw::scan::ScanCall<T>& c);
template <class T>
void launch_lookback_async(const sw::scan::ScanCall<T>& c);

}  // namespace ch16
