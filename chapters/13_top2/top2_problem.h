// Chapter 13's problem: the top-2 type, the device memory the versions write
// (Buffers), the benchmark's values (Values), what the measurement protocol checks
// (Top2Data), the step table's type (Step) and the problem that sw::bench::run runs
// (Top2Problem: its --n and --large, its checks and its rows). Defined in
// top2_problem.cu (the data and the rows) and top2_checks.cu (--verify-only, --large);
// the versions are in 13_top2.cu, the vendor's in top2_cub.cu.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/bench/program.h"
#include "common/bench/protocol.h"
#include "common/cli.h"
#include "common/device.h"

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

Top2 top2_reference(const int32_t* x, int64_t n);  // on all cores
Top2 top2_serial(const int32_t* x, int64_t n);     // the CPU baseline, one core
std::string describe(const Top2& t);               // "(k1 at i1, k2 at i2)"

// First-pass results the buffer holds: one per resident thread, what thread-pairs writes.
int64_t partial_capacity();
double workspace_bytes();  // device memory the versions use besides x

// The device memory the versions write: the first pass's results and the answer.
struct Buffers {
  sw::DeviceBuffer<Top2> partials{partial_capacity()}, out{1};
  sw::DeviceBuffer<uint8_t> cub_temp;  // CUB's temporary storage, grown on first use
};

// The benchmark's values: uniform int32 on the GPU and the same on the host, their
// answer, and the seed they came from.
struct Values {
  explicit Values(int64_t n) : n(n), d(n), h(new int32_t[n]) {}
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
  std::vector<sw::bench::Buffer> outputs() const { return {{out, sizeof(Top2)}}; }
};

// A step: puts the answer in b.out; returns the first pass's blocks (0: the library's own).
using Step = sw::bench::Step<int64_t (*)(const int32_t* x, int64_t n, Buffers& b)>;
// The vendor row (top2_cub.cu): cub::DeviceReduce::Reduce with the steps' merge.
int64_t launch_cub(const int32_t* x, int64_t n, Buffers& b);

// --large's size: past 2^31, not a multiple of any block or vector width.
constexpr int64_t kLargeN = (int64_t{1} << 31) + (int64_t{1} << 20) + 3;

struct Top2Problem {
  using Step = ch13::Step;
  static constexpr const char* kName = "top2";
  // Every check is check_steps's check_once, or a harness_check (the CPU loop, the sentinel).
  static constexpr bool kExchangesOutputs = true;
  Step vendor;                   // cub-reduce-top2: measured and checked whatever --variant says
  int64_t n = int64_t{1} << 28;  // 1 GiB of int32, far beyond L2
  bool large = false;
  void add_options(sw::Cli& cli, const sw::bench::Program<Step>&);
  // --n does not apply with --large (exit 2, before the GPU starts).
  void validate(const sw::bench::Request<Step>& asked) const {
    if (large && asked.cli.was_given("--n"))
      asked.cli.reject("--n does not apply with --large (it checks " + std::to_string(kLargeN) +
                       " elements)");
  }
  // 9 sizes (or --n) x 11 input patterns, a misaligned start, and the seed's INT_MIN
  // sentinel (which must fail); with --large, check_large.
  void verify(const sw::bench::Session<Step>& s);
  // At --n: the vendor and the chosen steps, with every step the CPU rows; with
  // --large (no --verify-only needed), check_large.
  void bench(const sw::bench::Session<Step>& s);
  // --large: 2^31 + 2^20 + 3 elements, random with INT_MAX planted, and a ramp.
  void check_large(const sw::bench::Session<Step>& s) const;
};

}  // namespace ch13
