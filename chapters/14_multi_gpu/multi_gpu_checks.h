// Chapter 14's checks: every result against the CPU reference, with the error bound
// float arithmetic allows, and --verify-only's sweep of both parts over 1 .. K GPUs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "all_reduce.h"
#include "common/report.h"
#include "machine.h"
#include "sharded_sum.h"

namespace ch14 {

// An all-reduce is run this many times by the checks: the same bits every time.
constexpr int kRepeatRuns = 5;

// Part 1: every result of one run against the reference (sw::check_sum with the
// sum's depth); "" or what went wrong.
std::string check_shard_results(const std::vector<double>& got, const Ref& ref, int64_t depth,
                                int64_t n);

// Part 2: every GPU's output against the exact sum of the K inputs, element by element.
struct VectorCheck {
  int64_t wrong = 0;
  uint64_t hash = 0;  // of every output's bits, for the bitwise comparison of two runs
  std::string first;  // the first wrong element, described
};
VectorCheck check_outputs(const Vectors& v, Data d, uint64_t seed);
// The same for any outputs: each one the sum of the k inputs vector_seed(seed, 0 .. k-1).
struct Output {
  int gpu;            // the device it lives on
  int rank;           // whose output: its GPU in one process, its rank across processes
  const float* recv;  // n floats
};
VectorCheck check_vectors(const std::vector<Output>& outs, int k, int64_t n, Data d, uint64_t seed);
// One poisoned run of an all-reduce, checked.
VectorCheck run_checked(Machine& m, const Vectors& v, const Step<const Vectors>& a, Data d,
                        uint64_t seed);

// --verify-only: Part 1 and Part 2 on 1 .. K GPUs.
void verify_sharded_sum(Machine& m, sw::Report& report, uint64_t seed);
void verify_all_reduce(Machine& m, sw::Report& report, uint64_t seed);

}  // namespace ch14
