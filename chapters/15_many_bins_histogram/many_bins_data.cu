// Chapter 15's inputs (on the GPU) and its CPU reference (on all cores).
#include <cmath>
#include <cstdio>
#include <mutex>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/parallel.h"
#include "common/report.h"
#include "many_bins_data.h"

namespace ch15 {
namespace {

constexpr int kFillThreads = 256;
constexpr int kFillBlocksPerSm = 8;
constexpr int64_t kHostGrain = int64_t{1}
                               << 22;  // values worth a host thread (and its table of counts)

// Value i of the input, in [0, 2^range) for range = 16 or 20.
__device__ uint32_t value_at(uint64_t seed, int64_t i, int range, ValueSpec spec) {
  const uint32_t mask = (1u << range) - 1;
  const uint64_t bits = sw::random_bits(seed, static_cast<uint64_t>(i));
  switch (spec.dist) {
    case Dist::Equal:
      return spec.value & mask;
    case Dist::Mix:
      return sw::unit_double(bits) < spec.p
                 ? (spec.value & mask)
                 : static_cast<uint32_t>(sw::random_bits(~seed, i)) & mask;
    case Dist::Image: {
      // Smooth: two waves and two ramps, between 5% and 85% of the range; then
      // noise of +-range/256 (+-256 of 2^16), like a sensor's.
      const float fx = static_cast<float>(i % kImageWidth) / kImageWidth;
      const float fy = static_cast<float>((i / kImageWidth) % kImageWidth) / kImageWidth;
      const float smooth = 0.45f +
                           0.25f * sinf(6.2831853f * 3.0f * fx) * cosf(6.2831853f * 2.0f * fy) +
                           0.2f * (fx - 0.5f) + 0.1f * (fy - 0.5f);
      const int64_t noise_span = int64_t{1} << (range - 8);  // range / 256
      const int64_t noise =
          static_cast<int64_t>(bits % static_cast<uint64_t>(2 * noise_span + 1)) - noise_span;
      const int64_t v = static_cast<int64_t>(smooth * static_cast<float>(mask + 1)) + noise;
      return static_cast<uint32_t>(v < 0 ? 0 : (v > mask ? mask : v));
    }
    case Dist::Uniform:
    default:
      return static_cast<uint32_t>(bits >> (64 - range));
  }
}

template <class T>
__global__ void fill_values_kernel(T* out, int64_t n, uint64_t seed, int range, ValueSpec spec) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = static_cast<T>(value_at(seed, i, range, spec));
}

template <class T>
void count_range(const T* v, int64_t begin, int64_t end, uint64_t* counts) {
  for (int64_t i = begin; i < end; ++i) ++counts[v[i]];
}

}  // namespace

std::string spec_note(const ValueSpec& spec) {
  switch (spec.dist) {
    case Dist::Equal:
      return sw::print_text("equal-%u", spec.value);
    case Dist::Mix:
      return sw::print_text("mix-%.2f", spec.p);
    case Dist::Image:
      return "image";
    default:
      return "uniform";
  }
}

void fill_values(void* d, int value_bits, int64_t n, uint64_t seed, const ValueSpec& spec) {
  if (n <= 0) return;
  const int blocks = sw::sm_count() * kFillBlocksPerSm;
  const int range = range_bits(value_bits);
  if (value_bits == 16)
    fill_values_kernel<<<blocks, kFillThreads>>>(static_cast<uint16_t*>(d), n, seed, range, spec);
  else
    fill_values_kernel<<<blocks, kFillThreads>>>(static_cast<uint32_t*>(d), n, seed, range, spec);
  CHECK_LAUNCH();
}

std::vector<uint64_t> count_values(const void* host_values, int value_bits, int64_t n) {
  const size_t range = size_t{1} << range_bits(value_bits);
  std::vector<uint64_t> total(range, 0);
  std::mutex m;
  sw::parallel_for(
      n,
      [&](int64_t begin, int64_t end) {
        std::vector<uint64_t> part(range, 0);
        if (value_bits == 16)
          count_range(static_cast<const uint16_t*>(host_values), begin, end, part.data());
        else
          count_range(static_cast<const uint32_t*>(host_values), begin, end, part.data());
        std::lock_guard<std::mutex> lock(m);
        for (size_t v = 0; v < range; ++v) total[v] += part[v];
      },
      kHostGrain);
  return total;
}

std::vector<uint64_t> fold_bins(const std::vector<uint64_t>& counts, int value_bits,
                                uint32_t bins) {
  std::vector<uint64_t> hist(bins, 0);
  for (size_t v = 0; v < counts.size(); ++v)
    hist[bin_of(static_cast<uint32_t>(v), bins, value_bits)] += counts[v];
  return hist;
}

}  // namespace ch15
