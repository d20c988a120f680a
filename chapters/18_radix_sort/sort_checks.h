// What 18_radix_sort.cu and its checks (sort_checks.cu) share: the inputs, the
// buffers every sort writes into, the reference and the checks, CUB's sort, one
// row's measurement and the --verify-only sweep.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/data.h"
#include "common/device.h"
#include "common/scan_harness.h"

namespace ch18 {

using Count = unsigned long long;
constexpr int kDigits = 256;        // 8-bit digits
constexpr int kPasses = 4;          // of a 32-bit key
constexpr int64_t kMinTile = 2048;  // the smallest tile: 256 threads x 8 keys
// Keys are u32, values their index in the input (u32): n is at most 2^32 - 1, and a
// pair's value names where its key came from, which makes every check exact.
constexpr int64_t kMaxKeys = (int64_t{1} << 32) - 1;

// The inputs: any u32; one key repeated; ascending and descending over the whole
// range (every pass moves them); 16 distinct keys, every digit of a key the same.
enum class Keys { kRandom, kEqual, kSorted, kReverse, kFew };
const std::vector<Keys> kAllKeys = {Keys::kRandom, Keys::kEqual, Keys::kSorted, Keys::kReverse,
                                    Keys::kFew};
// Their names, in the enum's order.
constexpr const char* kKeysNames[] = {"random", "all-equal", "sorted", "reverse-sorted",
                                      "16-distinct"};
static_assert(sizeof kKeysNames / sizeof kKeysNames[0] == static_cast<size_t>(Keys::kFew) + 1,
              "a name for every Keys");
inline const char* keys_name(Keys k) { return kKeysNames[static_cast<int>(k)]; }

SW_HD inline uint32_t key_value(Keys pattern, uint64_t seed, int64_t i, int64_t n) {
  const uint32_t sorted = static_cast<uint32_t>(static_cast<uint64_t>(i) * 0xFFFFFFFFull /
                                                static_cast<uint64_t>(n > 1 ? n - 1 : 1));
  const uint32_t r = static_cast<uint32_t>(sw::random_bits(seed, static_cast<uint64_t>(i)) >> 32);
  switch (pattern) {
    case Keys::kEqual:
      return 0x5bd1e995u;
    case Keys::kSorted:
      return sorted;
    case Keys::kReverse:
      return ~sorted;
    case Keys::kFew:
      return (r % 16) * 0x01010101u;
    default:
      return r;
  }
}

// What a launcher gets: one whole sort of keys_in (and values_in, when pairs) into
// keys_out (values_out), on `stream`.
struct SortCall {
  const uint32_t* keys_in;
  const uint32_t* values_in;  // nullptr: keys only
  uint32_t *keys_out, *values_out, *keys_tmp, *values_tmp;
  int64_t n;
  sw::scan::Tile tile;
  Count* scratch;  // 2 x 256 x (n / kMinTile + 1) words: the three kernels' counts and offsets
  Count* digits;   // 2 x 4 x 256 words: onesweep's histograms and digit bases
  Count* state;    // 256 x (n / kMinTile + 1) + 1 words: a ticket and the status words
  cudaStream_t stream;
};
using SortLaunch = int64_t (*)(const SortCall&);  // returns the tickets of its last launch

struct Step {
  const char* name;
  SortLaunch launch;
};

// One input on the device and every buffer a sort writes.
struct SortData {
  int64_t n;
  bool pairs;
  Keys pattern;
  mutable uint64_t seed, keys_digest = 0, values_digest = 0;  // of the input (reseed changes it)
  sw::DeviceBuffer<uint32_t> keys_in, values_in, keys_out, values_out, keys_tmp, values_tmp;
  sw::DeviceBuffer<Count> scratch, digits, state;

  SortData(int64_t size, bool with_values, Keys k, uint64_t s);
  SortCall call(sw::scan::Tile t, cudaStream_t stream = nullptr) const;
  void reseed(uint64_t s) const;  // new keys (and values) from another seed
  void poison() const;
};

// Device memory per key of SortData (pairs: twice the key buffers).
constexpr double bytes_per_key(bool pairs) {
  return (pairs ? 24.0 : 12.0) + 8.0 * 3 * kDigits / kMinTile;
}

// The sorted input as (key << 32 | index), on all cores: the stable order.
std::vector<uint64_t> reference_sort(Keys pattern, uint64_t seed, int64_t n);

// The output (keys, and values when pairs) against the reference, the tickets of
// the last launch, and the input unchanged.
sw::bench::Verdict check_sort(const SortData& d, const std::vector<uint64_t>& ref, int64_t tickets);

// One row: the step, or CUB (step == nullptr), on d against ref. Bytes: one read and
// one write of every key (and value); extra gkeys_s: keys (or pairs) per ns.
sw::Result measure(const sw::CommonOptions& opt, const Step* step, const SortData& d,
                   const std::vector<uint64_t>& ref, sw::scan::Tile t);

// --verify-only at one size: every step on every pattern, keys and (or) pairs, at
// tile `t`: one PASS/FAIL line each.
void verify(sw::Report& report, const std::vector<Step>& steps, int64_t n,
            const std::vector<Keys>& patterns, const std::vector<bool>& kinds, sw::scan::Tile t,
            uint64_t seed);

// cub::DeviceRadixSort::SortKeys or SortPairs on the data, temporary storage
// allocated here, outside any timing. operator() is the row's launcher: it calls CUB.
class CubSort {
 public:
  explicit CubSort(const SortData& d);
  void operator()(cudaStream_t stream = nullptr) const;

 private:
  const SortData& d_;
  mutable size_t bytes_ = 0;  // set by the constructor's call, before temp_ exists
  sw::DeviceBuffer<unsigned char> temp_;
};

}  // namespace ch18
