// Chapter 15's harness: one input of 16- or 32-bit values with the CPU's count of
// every value, the rows that run on it at a bin count (CUB, then each step that fits
// the job, a cluster step at each cluster size that fits), and a row's checked,
// measured run. It stands on common/: CUB at any width and bin count
// (sw::histogram::CubHistogramEven, histogram_harness.h), the one measurement protocol
// (sw::bench::measure, common/bench/protocol.h), --verify-only's check
// (sw::checked_twice) and the 64-bit totals (sw::HistCount, histogram_check.h).
//
//   ch15::Input in(gpu, "--n", n, 32, 2.0);   // room for n 32-bit values
//   in.generate(16, n, {ch15::Dist::Uniform}, seed, 0);
//   ch15::bench_all(c, opt, in, 65536, "step", true);  // every row, reported
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/bench/protocol.h"
#include "common/cli.h"
#include "common/device.h"
#include "common/report.h"
#include "counting.cuh"
#include "many_bins_data.h"

namespace ch15 {

constexpr int64_t kMaxOffset =
    7;  // --offset: start this many values past a 256-byte aligned address

// The step table for `value_bits`-bit values (the chapter file's).
const std::vector<Step>& steps_for(int value_bits);

// One input on the device (at `offset` values past an aligned address), its copy on
// the host and the CPU's count of every value.
class Input {
 public:
  // Room for max_n values of max_bits bits, and extra_per_value bytes of scratch per
  // value; exits 2 when that does not fit in device memory (`option` names the size).
  Input(const sw::Gpu& gpu, const std::string& option, int64_t max_n, int max_bits,
        double extra_per_value);
  void generate(int value_bits, int64_t n, const ValueSpec& spec, uint64_t seed, int64_t offset);
  // New values from another seed, and their counts (--graded-timing): the same width,
  // size, distribution and offset, so the values stay at the same address.
  void reseed(uint64_t seed) { generate(bits_, n_, spec_, seed, offset_); }
  uint64_t seed() const { return seed_; }

  const void* device() const { return device_.get() + offset_ * (bits_ / 8); }
  template <class T>
  const T* values() const {
    return static_cast<const T*>(device());
  }
  std::vector<uint64_t> want(uint32_t bins) const { return fold_bins(counts_, bits_, bins); }
  int bits() const { return bits_; }
  int64_t n() const { return n_; }
  int64_t offset() const { return offset_; }
  std::string note() const { return spec_note(spec_); }
  uint64_t count_of(uint32_t value) const { return counts_[value]; }

 private:
  int64_t capacity_;
  sw::DeviceBuffer<uint8_t> device_;
  std::unique_ptr<uint8_t[]> host_;
  std::vector<uint64_t> counts_;
  int bits_ = 16;
  int64_t n_ = 0, offset_ = 0;
  ValueSpec spec_;
  uint64_t seed_ = 0;
};

struct CubLines;  // CUB at each value width (many_bins_harness.cu)

// What the rows share: the options, the report, the steps' workspace and output,
// and CUB (made on its first row). Made and destroyed in many_bins_harness.cu, where
// CubLines is complete.
struct Context {
  Context(const sw::CommonOptions& o, sw::Report& r, std::string variant);
  ~Context();
  const sw::CommonOptions& opt;
  sw::Report& report;
  std::string only = "all";  // --variant: run this row only ("all": every one)
  Workspace ws;
  sw::DeviceBuffer<HistCount> hist{int64_t{1} << 20};
  std::unique_ptr<CubLines> cub;
};

// One row: a step at one cluster size (0 for the others), or CUB (step == nullptr).
struct Row {
  const Step* step;
  int cluster;
  std::string name() const { return step ? step->name : "cub"; }
  std::string label() const {
    return name() + (step && step->clusters ? " cluster=" + std::to_string(cluster) : "");
  }
};

// The rows that run on this input at this bin count: CUB (with_cub, up to its
// largest input), then every step that fits, a cluster step at every cluster size
// that fits (all_sizes) or at the smallest.
std::vector<Row> rows_for(Context& c, const Input& in, uint32_t bins, bool with_cub,
                          bool all_sizes);

// --verify-only's check of one row: sw::checked_twice, both runs must leave exactly
// `want` (the detail names the first wrong bin).
sw::bench::Verdict run_and_check(Context& c, Input& in, uint32_t bins,
                                 const std::vector<uint64_t>& want, const Row& r);

// Every row at this bin count, measured by sw::bench::measure and reported (role
// "step" or "sweep"; CUB's rows are "vendor" where the steps' are "step"). `extra`
// adds the sweep's p. With --graded-timing the input is reseeded for every call and
// restored after each row.
void bench_all(Context& c, const sw::CommonOptions& opt, Input& in, uint32_t bins,
               const std::string& role, bool all_sizes,
               const std::map<std::string, double>& extra = {});

// --verify-only: the correctness sweep, or with `large` the checks above 2^32 values
// (many_bins_checks.cu). Returns the exit code.
int verify(Context& c, const sw::Gpu& gpu, bool large);

}  // namespace ch15
