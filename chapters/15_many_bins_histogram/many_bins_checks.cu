// Chapter 15's checks (ManyBins::verify: --verify-only, --large): a test of the packed
// counters that no input can force, then every row on awkward sizes, offsets, bin
// counts and inputs. Part of the program 15_many_bins_histogram; the steps are in its
// other files.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/device.h"
#include "common/report.h"
#include "many_bins_harness.h"
#include "packed16.cuh"

namespace ch15 {
namespace {

// A carry into a high field that holds 0xFFFF, then 1024 threads adding 1 to 7 to
// the two bins of one word.
__global__ void test_packed_counters(HistCount* hist, uint32_t* word_out, int rounds) {
  __shared__ uint32_t word[1];
  if (threadIdx.x == 0) {
    word[0] = 0;
    packed_add(word, 1, 1, 0xFFFF, 2, hist);  // high field 0xFFFF
    packed_add(word, 0, 0, 0xFFFF, 2, hist);  // low field 0xFFFF
    packed_add(word, 0, 0, 1, 2, hist);       // low wraps; its carry wraps the high field
    packed_add(word, 1, 1, 2, 2, hist);
  }
  __syncthreads();
  for (int i = 0; i < rounds; ++i)
    packed_add(word, threadIdx.x & 1, threadIdx.x & 1, 1 + threadIdx.x % 7, 2, hist);
  __syncthreads();
  if (threadIdx.x == 0) *word_out = word[0];
}

bool check_packed_counters(sw::Report& report) {
  constexpr int kThreads = 1024, kRounds = 5000;
  sw::DeviceBuffer<HistCount> hist(2);
  sw::DeviceBuffer<uint32_t> word(1);
  CUDA_CHECK(cudaMemset(hist.get(), 0, hist.bytes()));
  test_packed_counters<<<1, kThreads>>>(hist.get(), word.get(), kRounds);
  CHECK_LAUNCH();
  const std::vector<HistCount> h = sw::read(hist.get(), 2);
  const uint32_t w = sw::read(word.get());
  uint64_t want[2] = {0xFFFF + 1, 0xFFFF + 2};
  for (int t = 0; t < kThreads; ++t) want[t & 1] += uint64_t{kRounds} * (1 + t % 7);
  const uint64_t got[2] = {h[0] + (w & 0xFFFFu), h[1] + (w >> 16)};
  const bool ok = got[0] == want[0] && got[1] == want[1];
  report.check(
      ok, "packed16 counters: a carry into a full high field, then 1024 threads adding 1 to 7",
      ok ? ""
         : "bins 0 and 1: got " + std::to_string(got[0]) + " and " + std::to_string(got[1]) +
               ", want " + std::to_string(want[0]) + " and " + std::to_string(want[1]));
  return ok;
}

struct Case {
  int bits;
  int64_t n;
  ValueSpec spec;
  int64_t offset;
  std::vector<uint32_t> bins;
};

// Awkward sizes and start offsets, at bin counts on both sides of 256, 2^16 and at
// 2^20, on uniform, all-equal (long enough that narrow counters wrap in every block),
// 90%-one-value and image inputs.
std::vector<Case> sweep_cases() {
  const std::vector<uint32_t> b16 = {255, 256, 257, 65535, 65536}, b32 = {65537, 1u << 20};
  std::vector<Case> cases;
  for (int bits : {16, 32}) {
    const std::vector<uint32_t>& bins = bits == 16 ? b16 : b32;
    const uint32_t top = (1u << range_bits(bits)) - 1;
    for (int64_t n : {1, 31, 32, 33, 1000003})
      for (int64_t offset : {0, 1, 3}) cases.push_back({bits, n, {Dist::Uniform}, offset, bins});
    cases.push_back({bits, (int64_t{1} << 25) + 13, {Dist::Equal, 0}, 1, bins});
    cases.push_back({bits, (int64_t{1} << 25) + 13, {Dist::Equal, top}, 3, bins});
    cases.push_back({bits, (int64_t{1} << 24) + 5, {Dist::Mix, 7, 0.9}, 0, bins});
    cases.push_back({bits, (int64_t{1} << 24) + 5, {Dist::Image}, 1, bins});
  }
  return cases;
}

// More than 2^32 values, all equal (one bin passes 2^32) and uniform.
std::vector<Case> large_cases() {
  const int64_t n = (int64_t{1} << 32) + (int64_t{1} << 20) + 3;
  return {{16, n, {Dist::Equal, 0xFFFF}, 5, {65536, 257}},
          {16, n, {Dist::Uniform}, 0, {65536}},
          {32, n, {Dist::Equal, (1u << 20) - 1}, 1, {1u << 20}}};
}

}  // namespace

// Every step (each cluster size that fits) on every case, each row through
// verify_row: poisoned, then again onto the last run's counts.
void ManyBins::verify(const sw::bench::Session<Step>& s) {
  start(s);
  Context c{s.report, s.variant};
  if (!large) check_packed_counters(s.report);
  const std::vector<Case> cases = large ? large_cases() : sweep_cases();
  int64_t max_n = 1;
  for (const Case& k : cases) max_n = std::max(max_n, k.n);
  Input in(s.gpu, large ? "--large" : "--n", max_n, 32, 2.0);
  for (const Case& k : cases) {
    in.generate(k.bits, k.n, k.spec, s.opt.seed, k.offset);
    if (large && k.spec.dist == Dist::Equal)
      s.report.check(in.count_of(k.spec.value) == static_cast<uint64_t>(k.n) &&
                         in.count_of(k.spec.value) > 0xFFFFFFFFull,
                     "reference: value " + std::to_string(k.spec.value) + " occurs all " +
                         std::to_string(k.n) + " times, beyond 2^32");
    for (uint32_t bins : k.bins) {
      const std::vector<uint64_t> want = in.want(bins);
      const std::string at = " bins=" + std::to_string(bins) + " n=" + std::to_string(k.n) +
                             " offset=" + std::to_string(k.offset) + " " + in.note() +
                             " value_bits=" + std::to_string(k.bits);
      for (const Row& r : rows_for(c, in, bins, false, true)) {
        const sw::bench::Verdict v = verify_row(c, in, bins, want, r);
        s.report.check(v.ok, r.label() + at, v.detail);
      }
    }
  }
}

}  // namespace ch15
