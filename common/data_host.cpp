#include "data.h"
#include "parallel.h"

namespace sw {

bool parse_byte_dist(const std::string& name, ByteDist* out) {
  if (name == "uniform")
    *out = ByteDist::Uniform;
  else if (name == "equal")
    *out = ByteDist::Equal;
  else if (name == "skewed")
    *out = ByteDist::Skewed;
  else if (name == "mix")
    *out = ByteDist::Mix;
  else
    return false;
  return true;
}

const char* byte_dist_name(ByteDist dist) {
  switch (dist) {
    case ByteDist::Uniform:
      return "uniform";
    case ByteDist::Equal:
      return "equal";
    case ByteDist::Skewed:
      return "skewed";
    case ByteDist::Mix:
      return "mix";
  }
  return "?";
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
