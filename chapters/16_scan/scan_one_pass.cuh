// Chapter 16's one-pass steps 6 to 8, included by 16_scan.cu: tiles by ticket, each
// tile's prefix from its predecessors (chained or decoupled look-back, scan_lookback.cuh),
// with a 4-byte load per lane and row, or 16-byte loads (the header's scan_lookback).
#pragma once

#include <cstdint>

#include "common/scan_harness.h"
#include "scan_lookback.cuh"

namespace {

namespace sc = sw::scan;
using ch16::Count;
using ch16::Lookback;

// --- steps 6 to 8: one pass, tiles by ticket, a prefix from the predecessors -----------------

// chained and decoupled-lookback: one pass, a 4-byte load per lane and row; kMode
// says how the tile gets its prefix (chapter 16's lookback_prefix).
template <class T, int kRows, Lookback kMode>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    scan_one_pass(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                  Count* state) {
  ch16::single_pass<T, 1, kRows, kMode>(in, out, n, inclusive, state);
}
template <class T, Lookback kMode>
int64_t launch_one_pass(const sc::ScanCall<T>& c) {
  const auto pick = [](auto r) { return scan_one_pass<T, decltype(r)::value, kMode>; };
  return ch16::launch_single_pass<T, 1>(pick, c.in, c.out, c.n, c.inclusive, c.rows, c.block,
                                        c.state, c.stream);
}

// The kernel is the header's scan_lookback: chapters 17 and 18 call it too.
template <class T>
int64_t launch_lookback_vec(const sc::ScanCall<T>& c) {
  return ch16::launch_scan_lookback<T>(c.in, c.out, c.n, c.inclusive, c.rows, c.block, c.state,
                                       c.stream);
}

}  // namespace
