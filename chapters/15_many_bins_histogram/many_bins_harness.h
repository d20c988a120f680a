// Chapter 15's problem, ManyBins (sw::bench::run's Problem): its options, one input of
// 16- or 32-bit values with the CPU's count of every value, the rows that run on it at
// a bin count (CUB, then each step that fits the job, a cluster step at each cluster
// size that fits), and a row's measured run (many_bins_harness.cu) or check
// (verify_row; the checks themselves are in many_bins_checks.cu). It stands on common/:
// CUB at any width and bin count (sw::histogram::CubHistogramEven, common/problems/histogram.h),
// the one measurement protocol (sw::bench::measure and check_once,
// common/bench/protocol.h) and the 64-bit totals (sw::HistCount, histogram_check.h).
//
//   return sw::bench::run(argc, argv, program, ch15::ManyBins{});  // the chapter's main
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/bench/program.h"
#include "common/bench/protocol.h"
#include "common/cli.h"
#include "common/device.h"
#include "common/report.h"
#include "counting.cuh"
#include "many_bins_data.h"

namespace ch15 {

constexpr int64_t kMaxOffset =
    7;  // --offset: start this many values past a 256-byte aligned address
// The headline bin counts: 16-bit values up to kHeadlineSmall bins, 32-bit ones beyond.
constexpr uint32_t kHeadlineSmall = 65536, kHeadlineLarge = 1u << 20;

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

// What the rows share: the report, the steps' workspace and output, and CUB (made on
// its first row). Made and destroyed in many_bins_harness.cu, where CubLines is complete.
struct Context {
  Context(sw::Report& r, std::string variant);
  ~Context();
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
    return name() + (step && step->more.clusters ? " cluster=" + std::to_string(cluster) : "");
  }
};

// The rows that run on this input at this bin count: CUB (with_cub, up to its
// largest input), then every step that fits, a cluster step at every cluster size
// that fits (all_sizes) or at the smallest.
std::vector<Row> rows_for(Context& c, const Input& in, uint32_t bins, bool with_cub,
                          bool all_sizes);

// --verify-only's check of one row: a poisoned run (sw::bench::check_once), then one
// more, not poisoned (a kernel that adds onto the last run's counts fails); both must
// leave exactly `want` (the detail names the first wrong bin).
sw::bench::Verdict verify_row(Context& c, Input& in, uint32_t bins,
                              const std::vector<uint64_t>& want, const Row& r);

// The problem: the options below, --verify-only's checks (verify, many_bins_checks.cu)
// or the measured rows (bench): without --bins, --dist, --value and --p the headline
// inputs with every cluster size, the regime map and the p-sweep; with them that one input.
struct ManyBins {
  using Step = ch15::Step;
  static constexpr const char* kName = "histogram";
  int64_t n = int64_t{1} << 28;
  int64_t bins = kHeadlineSmall, value = 0, offset = 0;
  std::string dist = "uniform";
  double p = 0.9;
  bool large = false;

  void add_options(sw::Cli& cli, const sw::bench::Program<Step>& program);
  // An option that does not apply to this run: exit 2, one line naming it (before the
  // GPU starts).
  void validate(const sw::bench::Request<Step>& asked) const;
  void verify(const sw::bench::Session<Step>& s);
  void bench(const sw::bench::Session<Step>& s);
  // The cluster steps reported as skipped where the GPU has no clusters.
  void start(const sw::bench::Session<Step>& s) const;
};

}  // namespace ch15
