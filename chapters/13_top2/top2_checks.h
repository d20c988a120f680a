// What 13_top2.cu and its checks (top2_checks.cu) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/device.h"
#include "common/report.h"

namespace ch13 {

// The two highest-ranked elements seen so far: keys and indices. An empty slot has
// index kNoIndex, never a sentinel key (INT_MIN is an ordinary value); i2 < 0
// whenever i1 < 0, and keys of empty slots are never read.
struct Top2 {
  int32_t k1, k2;
  int64_t i1, i2;
};
constexpr int64_t kNoIndex = -1;

inline bool same(const Top2& a, const Top2& b) {
  return a.i1 == b.i1 && a.i2 == b.i2 && (a.i1 < 0 || a.k1 == b.k1) && (a.i2 < 0 || a.k2 == b.k2);
}

// --- in 13_top2.cu ---

struct Answer {
  const char* name;
  Top2 got;
  bool input_kept;  // d_x is as it was before the run
};
// Every row of the step table (CUB and the steps) on d_x (device, n >= 2), each
// on a poisoned result.
std::vector<Answer> run_every_step(const int32_t* d_x, int64_t n);
Top2 top2_serial(const int32_t* x, int64_t n);  // the CPU baseline, one core
double workspace_bytes();                       // device memory the versions use besides x

// --- in top2_checks.cu ---

Top2 top2_reference(const int32_t* x, int64_t n);  // on all cores
std::string describe(const Top2& t);               // "(k1 at i1, k2 at i2)"
// --verify-only: 9 sizes x 11 input patterns, a misaligned start, and the seed's
// INT_MIN sentinel (which must fail).
int verify(sw::Report& report, uint64_t seed);
// --large: 2^31 + 2^20 + 3 elements, random with INT_MAX planted, and a ramp.
int verify_large(sw::Report& report, const sw::Gpu& gpu, uint64_t seed);

}  // namespace ch13
