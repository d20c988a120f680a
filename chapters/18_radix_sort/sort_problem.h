// Chapter 18's problem: what 18_radix_sort.cu and sort_problem.cu share: the inputs,
// what a launcher gets (SortCall) and the buffers every sort writes into, the
// reference and the checks, CUB's sort, and SortProblem: the options, the
// --verify-only checks and the default run's rows (sw::bench::run runs it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/bench/program.h"
#include "common/bench/step.h"
#include "common/data.h"
#include "common/device.h"
#include "common/problems/scan.h"

namespace ch18 {

using Count = unsigned long long;
constexpr int kDigitBits = 8;
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
  const uint32_t* values_in;                                // nullptr: keys only
  uint32_t *keys_out, *values_out, *keys_tmp, *values_tmp;  // values_tmp: in keys_tmp's
  // buffer, 16-byte aligned after its n keys; step 10 reads and writes it as n (key, value) pairs
  int64_t n;
  sw::scan::Tile tile;
  Count* scratch;    // 2 x 256 x (n / kMinTile + 1) words: the three kernels' counts and
                     // offsets, or steps 3 to 5's second set of status words
  Count* digits;     // 2 x 4 x 256 words: onesweep's histograms and digit bases
  Count* state;      // 256 x (n / kMinTile + 1) + 1 words: a ticket and the status words
  int64_t* tickets;  // the launcher writes the tickets of its last launch
  cudaStream_t stream;
};
// A step's own tile (rows and block; 0: the default run's tuned tile, or --tile-rows and
// --block). The step table's type: each launcher holds its <<<>>>s.
struct OwnTile {
  int rows = 0, block = 0;
  std::vector<int> rows_compiled = {};    // not empty: the only rows it takes,
  std::vector<int> blocks_compiled = {};  // and blocks (empty: `block` only)
};
using Step = sw::bench::Step<void (*)(const SortCall&), OwnTile>;

// Pass p reads keys_in (p = 0), tmp (odd p) or out, and writes tmp (even p) or out:
// after four passes the sorted keys are in out.
struct PassBuffers {
  const uint32_t *keys_in, *values_in;
  uint32_t *keys_out, *values_out;
};
inline PassBuffers pass_buffers(const SortCall& c, int p) {
  const uint32_t* ki = p == 0 ? c.keys_in : p % 2 ? c.keys_tmp : c.keys_out;
  const uint32_t* vi = p == 0 ? c.values_in : p % 2 ? c.values_tmp : c.values_out;
  return {ki, vi, p % 2 ? c.keys_out : c.keys_tmp, p % 2 ? c.values_out : c.values_tmp};
}

// One input on the device and every buffer a sort writes.
struct SortData {
  int64_t n;
  bool pairs;
  Keys pattern;
  mutable uint64_t seed, keys_digest = 0, values_digest = 0;  // of the input (reseed changes it)
  mutable int64_t tickets = 0;  // what the last launcher said its kernels must draw
  sw::DeviceBuffer<uint32_t> keys_in, values_in, keys_out, values_out;
  sw::DeviceBuffer<uint32_t> tmp;  // keys_tmp, then values_tmp (pairs) at values_tmp_at()
  // The 16-byte aligned word where values_tmp starts, which the vector loads of values need
  // (tmp + n would be misaligned for an n that is not a multiple of 4).
  int64_t values_tmp_at() const { return sw::ceil_div(n, int64_t{4}) * 4; }
  sw::DeviceBuffer<Count> scratch, digits, state;

  SortData(int64_t n, bool with_values, Keys k, uint64_t s);
  SortCall call(sw::scan::Tile t, cudaStream_t stream = nullptr) const;
  void reseed(uint64_t s) const;  // new keys (and values) from another seed
  void poison() const;            // and tickets = 0
};

// Device memory per key of SortData (pairs: twice the key buffers).
constexpr double bytes_per_key(bool pairs) {
  return (pairs ? 24.0 : 12.0) + 8.0 * 3 * kDigits / kMinTile;
}

// The sorted input as (key << 32 | index), on all cores: the stable order.
std::vector<uint64_t> reference_sort(Keys pattern, uint64_t seed, int64_t n);

// The output (keys, and values when pairs) against the reference, the tickets of
// the last launch, and the input unchanged.
sw::bench::Verdict check_sort(const SortData& d, const std::vector<uint64_t>& ref);

// cub::DeviceRadixSort::SortKeys or SortPairs on the data, temporary storage
// allocated here, outside any timing. operator() is the row's launcher: it calls CUB.
class CubSort {
 public:
  explicit CubSort(const SortData& d);
  void operator()(cudaStream_t stream = nullptr) const;

 private:
  const SortData& d_;
  size_t bytes_ = 0;  // set by the constructor's size query, before temp_ exists
  sw::DeviceBuffer<unsigned char> temp_;
};

// The problem: random keys (and pairs), CUB and each step at 2^20, 2^22, ... up to --n
// with every step, at --n alone with --variant; --verify-only: every step on every
// pattern of the awkward sizes (or --n, or --large's 2^31 + 17).
struct SortProblem {
  using Step = ch18::Step;
  static constexpr const char* kName = "sort-keys";
  static constexpr bool kExchangesOutputs = true;         // every check is verify's check_once
  static constexpr std::string_view kSwept = "onesweep";  // the step the default run sweeps
  sw::scan::TileChoices tiles;                            // the kernels' (18_radix_sort.cu)
  int default_rows;                                       // the tile's rows without --tile-rows
  int64_t n = sw::scan::kDefaultN;
  std::string sort = "both", rows, block;
  bool large = false;

  void add_options(sw::Cli& cli, const sw::bench::Program<Step>& program);
  // --n at most kMaxKeys; --large with --verify-only alone; --tile-rows and --block among
  // what the step --variant names is compiled for (exit 2, before the GPU starts).
  void validate(const sw::bench::Request<Step>& asked) const {
    sw::scan::check_large(asked.cli, asked.opt.verify_only);
    if (n > kMaxKeys)
      asked.cli.reject("--n " + std::to_string(n) +
                       ": a value is its key's u32 index; valid range: 1 to " +
                       std::to_string(kMaxKeys));
    if (asked.variant != "all")
      for (const Step& st : asked.steps) check_compiled(asked.cli, st);
  }
  // A step compiled for some tiles only (OwnTile::rows_compiled, blocks_compiled) refuses
  // any other.
  void check_compiled(const sw::Cli& cli, const Step& st) const {
    if (st.more.rows_compiled.empty()) return;
    const auto list = [](const std::vector<int>& v) {
      std::string out;
      for (int x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
      return out;
    };
    const auto has = [](const std::vector<int>& v, const std::string& x) {
      return std::find(v.begin(), v.end(), std::stoi(x)) != v.end();
    };
    const std::string name = st.name;
    const std::vector<int> blocks = blocks_compiled(st);
    if (!block.empty() && !has(blocks, block))
      cli.reject("--block " + block + ": the step " + name + " is compiled for " + list(blocks));
    if (!rows.empty() && !has(st.more.rows_compiled, rows))
      cli.reject("--tile-rows " + rows + ": the step " + name + " is compiled for " +
                 list(st.more.rows_compiled));
  }
  // A step's tile: --tile-rows and --block where given, else its own, else `tuned`; a step
  // compiled for some tiles only takes its own when the asked one is not among them (every
  // step runs; the row's parameters say which tile ran; --variant names it: exit 2 instead).
  sw::scan::Tile tile_of(const Step& st, sw::scan::Tile tuned) const {
    const sw::scan::Tile t =
        sw::scan::pick_tile(rows, block, st.more.rows ? st.more.rows : tuned.rows, tiles,
                            st.more.rows ? st.more.block : tuned.block);
    return compiled_for(st, t) ? t : sw::scan::Tile{st.more.rows, st.more.block};
  }
  static std::vector<int> blocks_compiled(const Step& st) {
    return st.more.blocks_compiled.empty() ? std::vector<int>{st.more.block}
                                           : st.more.blocks_compiled;
  }
  static bool compiled_for(const Step& st, sw::scan::Tile t) {
    const std::vector<int>& rows = st.more.rows_compiled;
    const std::vector<int> blocks = blocks_compiled(st);
    return rows.empty() || (std::find(blocks.begin(), blocks.end(), t.block) != blocks.end() &&
                            std::find(rows.begin(), rows.end(), t.rows) != rows.end());
  }
  void verify(const sw::bench::Session<Step>& s) const;
  void bench(const sw::bench::Session<Step>& s) const;
};

}  // namespace ch18
