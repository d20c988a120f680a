// What 13_top2.cu and its checks (top2_checks.cu) share.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/bench/protocol.h"
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

// One row of the step table, run once on a poisoned result and checked
// (sw::bench::check_once, Top2Data): its answer against the reference, x unchanged.
struct Answer {
  const char* name;
  bool ok;
  std::string detail;  // why not: "got (...), want (...)" or "input changed: ..."
};
// Every row of the step table (CUB and the steps) on d_x (device, n >= 2) against
// `want`.
std::vector<Answer> run_every_step(const int32_t* d_x, int64_t n, const Top2& want);
Top2 top2_serial(const int32_t* x, int64_t n);  // the CPU baseline, one core
double workspace_bytes();                       // device memory the versions use besides x

// --- in top2_checks.cu ---

Top2 top2_reference(const int32_t* x, int64_t n);  // on all cores
std::string describe(const Top2& t);               // "(k1 at i1, k2 at i2)"

// The benchmark's values: uniform int32 on the GPU and the same on the host, their
// answer, and the seed they came from.
struct Values {
  explicit Values(int64_t count) : n(count), d(count), h(new int32_t[count]) {}
  void generate(uint64_t from);  // new values from `from`, and their answer
  int64_t n;
  sw::DeviceBuffer<int32_t> d;
  std::unique_ptr<int32_t[]> h;
  Top2 want{};
  uint64_t seed = 0;
};

// One version's run as sw::bench::measure and check_once see it
// (common/bench/protocol.h): the answer to poison (*out, on the device), the answer
// against *want, x (device, n elements) against `digest` when check_input, and, when
// `values` is set, new values from a seed (Values::generate; without, reseed is false).
struct Top2Data {
  Top2* out;
  const Top2* want;
  const int32_t* x = nullptr;
  int64_t n = 0;
  bool check_input = false;
  uint64_t digest = 0;
  Values* values = nullptr;
  void poison() const;
  sw::bench::Verdict check() const;
  bool reseed(uint64_t from) const;
  uint64_t seed() const;
};
// The benchmark's data: v's values and answer, x not checked (the --verify-only runs check it).
inline Top2Data values_data(Values& v, Top2* out) {
  return {out, &v.want, v.d.get(), v.n, false, 0, &v};
}

// --verify-only: 9 sizes x 11 input patterns, a misaligned start, and the seed's
// INT_MIN sentinel (which must fail).
int verify(sw::Report& report, uint64_t seed);
// --large: 2^31 + 2^20 + 3 elements, random with INT_MAX planted, and a ramp.
int verify_large(sw::Report& report, const sw::Gpu& gpu, uint64_t seed);

}  // namespace ch13
