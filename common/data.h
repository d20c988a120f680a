// Deterministic test data, the same on the host and the GPU.
//
// Element i of every array is a pure function of (seed, i): a counter-based hash,
// so the GPU fills gigabytes in parallel and a host test can recompute any element.
//
//   sw::fill_floats(d_x, n, opt.seed);            // GPU, mixed signs and magnitudes
//   sw::fill_bytes(d_b, n, opt.seed, spec);       // GPU, see ByteSpec
//   sw::host_fill_floats(x.data(), n, opt.seed);  // the same values on the host
#pragma once

#include <math.h>

#include <cstdint>
#include <string>

#if defined(__CUDACC__)
#define SW_HD __host__ __device__
#else
#define SW_HD
#endif

namespace sw {

// splitmix64's finalizer: a bijection on 64 bits with good avalanche.
SW_HD inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// 64 random bits for element i of stream `seed`.
SW_HD inline uint64_t random_bits(uint64_t seed, uint64_t i) { return mix64(mix64(seed) ^ i); }

// A uniform double in [0, 1) from the top 53 bits.
SW_HD inline double unit_double(uint64_t bits) { return (bits >> 11) * (1.0 / 9007199254740992.0); }

// Mixed signs and magnitudes, never zero: +-(1 + f) * 2^e, f in [0,1), e in [-4, 4].
SW_HD inline float float_value(uint64_t seed, uint64_t i) {
  const uint64_t b = random_bits(seed, i);
  const float mantissa = 1.0f + static_cast<float>(b & 0xFFFFFF) * (1.0f / 16777216.0f);
  const int exponent = static_cast<int>((b >> 24) % 9) - 4;
  const float v = ldexpf(mantissa, exponent);  // exact: a power-of-two scale
  return (b >> 63) ? -v : v;
}

SW_HD inline double double_value(uint64_t seed, uint64_t i) {
  return static_cast<double>(float_value(seed, i)) *
         (1.0 + unit_double(random_bits(~seed, i)) * 1e-7);
}

// Any 32-bit integer, INT_MIN and INT_MAX included.
SW_HD inline int32_t int_value(uint64_t seed, uint64_t i) {
  return static_cast<int32_t>(static_cast<uint32_t>(random_bits(seed, i) >> 32));
}

// How bytes are distributed.
enum class ByteDist {
  Uniform,  // every value equally likely
  Equal,    // every byte is `value`: the worst case for atomics
  Skewed,   // floor(256 * u^4): small values dominate, like dark pixels
  Mix,      // with probability p the byte is `value`, else uniform: p sweeps
            // from uniform (0) to all equal (1)
};

struct ByteSpec {
  ByteDist dist = ByteDist::Uniform;
  int value = 0;   // for Equal and Mix, 0..255
  double p = 0.5;  // for Mix, 0..1
};

// Parses "uniform", "equal", "skewed" or "mix"; returns false otherwise.
bool parse_byte_dist(const std::string& name, ByteDist* out);
const char* byte_dist_name(ByteDist dist);

SW_HD inline uint8_t byte_value(uint64_t seed, uint64_t i, ByteSpec spec) {
  const uint64_t b = random_bits(seed, i);
  switch (spec.dist) {
    case ByteDist::Equal:
      return static_cast<uint8_t>(spec.value);
    case ByteDist::Skewed: {
      const double u = unit_double(b);
      return static_cast<uint8_t>(256.0 * u * u * u * u);
    }
    case ByteDist::Mix:
      return unit_double(b) < spec.p ? static_cast<uint8_t>(spec.value)
                                     : static_cast<uint8_t>(b & 0xFF);
    case ByteDist::Uniform:
    default:
      return static_cast<uint8_t>(b >> 56);
  }
}

// --- GPU fills (data.cu); each checks its launch ---------------------------------
void fill_floats(float* d, int64_t n, uint64_t seed);
void fill_doubles(double* d, int64_t n, uint64_t seed);
void fill_ints(int32_t* d, int64_t n, uint64_t seed);
void fill_bytes(uint8_t* d, int64_t n, uint64_t seed, ByteSpec spec);
void fill_constant(float* d, int64_t n, float value);

// Sets every byte to 0xFF: floats and doubles become NaN, integers -1 (all ones).
// Call it on outputs before each run, so that an unwritten element cannot pass.
// It also fills the shared memory of every SM with 0xFF (a kernel that leaves it
// there), so that a step that forgets to zero its shared counters cannot pass on
// memory that happened to be zero. With STEPWISE_POISON=zero in the environment it
// writes zeros instead: the lab checker runs a failing kernel that way to tell
// "relies on zeroed memory" apart. With STEPWISE_POISON=outputs it leaves shared
// memory alone: the runs under compute-sanitizer set it, where every store of that
// kernel is checked and, under memcheck, the next kernel read zeros anyway.
void poison(void* d, size_t bytes);

// A 64-bit digest of `bytes` bytes of device memory: the sum over 8-byte words
// of mix64(word index, word), so it is independent of the order of the adds.
// The harnesses take it of an input after filling it and again after each
// checked run: a kernel that writes into its input is caught.
uint64_t device_digest(const void* d, size_t bytes);

// --- host fills (data_host.cpp), in parallel on all cores ------------------------
void host_fill_floats(float* h, int64_t n, uint64_t seed);
void host_fill_ints(int32_t* h, int64_t n, uint64_t seed);
void host_fill_bytes(uint8_t* h, int64_t n, uint64_t seed, ByteSpec spec);

}  // namespace sw
