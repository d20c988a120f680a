// Chapter 15's inputs and its CPU reference.
//
// Values are 16-bit (uint16_t, in [0, 2^16)) or 32-bit (uint32_t, in [0, 2^20)):
// the range R is 2^16 or 2^20, and a value v falls in bin v * B / R, computed
// exactly in 64 bits: what cub::DeviceHistogram::HistogramEven does with B + 1
// levels evenly spaced from 0 to R.
//
//   ch15::fill_values(d, 16, n, seed, {ch15::Dist::Mix, 0, 0.9});  // GPU: n uint16_t values
//   std::vector<uint64_t> counts = ch15::count_values(h, 16, n);    // host: one count per value
//   std::vector<uint64_t> want = ch15::fold_bins(counts, 16, bins); // the histogram
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ch15 {

// log2 of the value range: 16 for 16-bit values, 20 for 32-bit ones.
constexpr int range_bits(int value_bits) { return value_bits == 16 ? 16 : 20; }

// The bin of value v among `bins` equal bins of [0, 2^range_bits).
inline uint32_t bin_of(uint32_t v, uint32_t bins, int value_bits) {
  return static_cast<uint32_t>((uint64_t{v} * bins) >> range_bits(value_bits));
}

enum class Dist {
  Uniform,  // every value equally likely
  Equal,    // every value is `value`: the worst case for atomics
  Mix,      // `value` with probability p, else uniform: p = 0.9 is "90% one value"
  Image,    // a 16384-pixel-wide image: smooth gradients and waves plus a little noise
};

struct ValueSpec {
  Dist dist = Dist::Uniform;
  uint32_t value = 0;  // Equal and Mix: the repeated value (below 2^16, so it fits either width)
  double p = 0.9;      // Mix
};

constexpr int kImageWidth = 16384;

// "uniform", "equal-0", "mix-0.90", "image": the rows' input name.
std::string spec_note(const ValueSpec& spec);

// Fills n values (value_bits 16 or 32) at d on the GPU; element i is a pure
// function of (seed, i).
void fill_values(void* d, int value_bits, int64_t n, uint64_t seed, const ValueSpec& spec);

// The CPU reference, on all cores: how often each value occurs (2^range_bits counts).
std::vector<uint64_t> count_values(const void* host_values, int value_bits, int64_t n);

// The histogram with `bins` bins from the counts of each value.
std::vector<uint64_t> fold_bins(const std::vector<uint64_t>& counts, int value_bits, uint32_t bins);

}  // namespace ch15
