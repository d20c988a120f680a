#include "data.h"
#include "parallel.h"

namespace sw {

// The names of ByteDist's values, in the enum's order.
constexpr const char* kByteDistNames[] = {"uniform", "equal", "skewed", "mix"};
constexpr int kByteDists = static_cast<int>(sizeof kByteDistNames / sizeof kByteDistNames[0]);
static_assert(static_cast<int>(ByteDist::Mix) == kByteDists - 1, "a name for every ByteDist");

bool parse_byte_dist(const std::string& name, ByteDist* out) {
  for (int d = 0; d < kByteDists; ++d) {
    if (name == kByteDistNames[d]) {
      *out = static_cast<ByteDist>(d);
      return true;
    }
  }
  return false;
}

const char* byte_dist_name(ByteDist dist) {
  const int d = static_cast<int>(dist);
  return d >= 0 && d < kByteDists ? kByteDistNames[d] : "?";
}

void host_fill_floats(float* h, int64_t n, uint64_t seed) {
  parallel_for(n, [=](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) h[i] = float_value(seed, i);
  });
}

void host_fill_ints(int32_t* h, int64_t n, uint64_t seed) {
  parallel_for(n, [=](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) h[i] = int_value(seed, i);
  });
}

void host_fill_bytes(uint8_t* h, int64_t n, uint64_t seed, ByteSpec spec) {
  parallel_for(n, [=](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) h[i] = byte_value(seed, i, spec);
  });
}

}  // namespace sw
