// Chapter 18: LSD radix sort of 32-bit keys and key-value pairs, 8-bit digits.
//
// What changed:  a radix sort is, per digit, a histogram (chapter 08), a scan
//                (chapter 16) and a scatter. The scatter must be stable: keys with
//                the same digit keep their order, or the digits sorted by earlier
//                passes are lost. A tile's keys (row r of a warp: 32 consecutive
//                keys, one a lane) are ranked in index order: eight __ballot_sync
//                give each lane the lanes with its digit, __popc of those below it
//                its place in the row, and a counter per digit in shared memory the
//                rows before (rank_in_warp); the warps then add up per digit.
//   three-kernel  per digit: each tile counts its digits into a 256 x tiles matrix,
//                 chapter 16's look-back scan turns it into offsets (digit-major: all
//                 of digit 0 first), each tile is read again and every key written
//                 straight to its offset plus its rank: scattered 4-byte stores.
//   onesweep      one histogram pass for all four digits (Adinets and Merrill, 2022),
//                 then per digit one kernel: a ticket, the ranks, each thread one
//                 digit's look-back over the earlier tiles (chapter 16's status words),
//                 the tile reordered by digit in shared memory, then written out in
//                 runs. The default run sweeps its tile.
//                cub::DeviceRadixSort in the same run; GKey/s (extra gkeys_s) next to
//                the GB/s of one read and one write of every key (and value).
// Bottleneck:    DRAM: four passes read and write every key (and value).
// Steps:         three-kernel, onesweep
// Run:           build/chapters/18_radix_sort [--n 2^28] [--sort keys|pairs] [--variant onesweep]
//                [--tile-rows 16 --block 256] [--verify-only [--large]] [--json]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "chapters/16_scan/scan_lookback.cuh"  // chapter 16's scan, ticket and status words
#include "common/parallel.h"
#include "common/scan_harness.h"
#include "common/timing.h"
#include "sort_checks.h"

namespace {

namespace sc = sw::scan;
using ch18::Count;
using ch18::kDigits;
using ch18::kPasses;

using SortRows = ch16::Choices<8, 16, 24>;             // keys per thread (--tile-rows)
const std::vector<int> kSortBlocks = {256, 384, 512};  // --block: at least one thread per digit
constexpr int kMaxSortBlock = 512;
constexpr int kMaxSortWarps = kMaxSortBlock / sw::kWarp;
constexpr int kDefaultRows = 16, kDefaultBlock = 256;
constexpr int kDigitBits = 8;

__device__ __forceinline__ unsigned digit_of(uint32_t key, int shift) {
  return (key >> shift) & (kDigits - 1);
}

// --- ranking a tile: the heart of a stable scatter ---------------------------------------

// This lane's key among the warp's keys with the same digit, in index order: the
// keys of earlier rows first (counts[digit]: the warp's running count), then the
// lanes below in this row. All 32 lanes call it; counts is this warp's row of counters.
__device__ __forceinline__ unsigned rank_in_warp(unsigned digit, unsigned* counts) {
  // lab digit-scatter: begin
  const int lane = threadIdx.x % sw::kWarp;
  unsigned same = sw::kFullMask;  // the lanes whose digit equals mine, bit by bit
#pragma unroll
  for (int b = 0; b < kDigitBits; ++b) {
    const unsigned ones = __ballot_sync(sw::kFullMask, digit >> b & 1);
    same &= digit >> b & 1 ? ones : ~ones;
  }
  const int leader = __ffs(same) - 1;
  const unsigned below = __popc(same & ((1u << lane) - 1));
  unsigned base = 0;
  if (lane == leader) {
    base = counts[digit];
    counts[digit] = base + __popc(same);
  }
  base = __shfl_sync(sw::kFullMask, base, leader);
  __syncwarp();
  return base + below;
  // lab digit-scatter: end
}

// A tile: block x kRows keys; row r of warp w holds keys [(w * kRows + r) * 32, +32)
// of the tile, one a lane (coalesced 4-byte loads, in the keys' order). Keys past n
// read as 0xFFFFFFFF: digit 255, ranked after every real key of the tile.
template <int kRows>
__device__ __forceinline__ int64_t key_index(int64_t tile, int r) {
  const int warp = threadIdx.x / sw::kWarp, lane = threadIdx.x % sw::kWarp;
  return tile * blockDim.x * kRows + (int64_t{warp} * kRows + r) * sw::kWarp + lane;
}

template <int kRows, bool kPairs>
__device__ __forceinline__ void load_tile(const uint32_t* __restrict__ keys,
                                          const uint32_t* __restrict__ values, int64_t n,
                                          int64_t tile, uint32_t (&key)[kRows],
                                          uint32_t (&value)[kRows]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t i = key_index<kRows>(tile, r);
    key[r] = i < n ? keys[i] : 0xFFFFFFFFu;
    if (kPairs) value[r] = i < n ? values[i] : 0u;
  }
}

// Ranks every key of the tile among the tile's keys of its digit, in index order.
// Returns, in thread d < 256, how many of the tile's keys (before n) have digit d.
template <int kRows>
__device__ __forceinline__ unsigned rank_tile(const uint32_t (&key)[kRows], int64_t n, int64_t tile,
                                              int shift, unsigned (&rank)[kRows]) {
  __shared__ unsigned counts[kMaxSortWarps][kDigits];  // per warp, per digit
  const int warp = threadIdx.x / sw::kWarp, lane = threadIdx.x % sw::kWarp;
  for (int d = lane; d < kDigits; d += sw::kWarp) counts[warp][d] = 0;
  __syncwarp();
#pragma unroll
  for (int r = 0; r < kRows; ++r) rank[r] = rank_in_warp(digit_of(key[r], shift), counts[warp]);
  __syncthreads();
  unsigned total = 0;  // the warps' counts of my digit become offsets, warp by warp
  if (threadIdx.x < kDigits) {
    for (int w = 0; w < static_cast<int>(blockDim.x / sw::kWarp); ++w) {
      const unsigned c = counts[w][threadIdx.x];
      counts[w][threadIdx.x] = total;
      total += c;
    }
    const int64_t end = (tile + 1) * blockDim.x * kRows;
    if (threadIdx.x == kDigits - 1 && end > n)
      total -= static_cast<unsigned>(end - n);  // the padding
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRows; ++r) rank[r] += counts[warp][digit_of(key[r], shift)];
  return total;
}

// --- what both steps share ----------------------------------------------------------------

// Pass p reads keys_in (p = 0), tmp (odd p) or out, and writes tmp (even p) or out:
// after four passes the sorted keys are in out.
struct PassBuffers {
  const uint32_t *keys_in, *values_in;
  uint32_t *keys_out, *values_out;
};
PassBuffers pass_buffers(const ch18::SortCall& c, int p) {
  const uint32_t* ki = p == 0 ? c.keys_in : p % 2 ? c.keys_tmp : c.keys_out;
  const uint32_t* vi = p == 0 ? c.values_in : p % 2 ? c.values_tmp : c.values_out;
  return {ki, vi, p % 2 ? c.keys_out : c.keys_tmp, p % 2 ? c.values_out : c.values_tmp};
}

}  // namespace

// The steps, built on the tile ranking above (each header uses it and the constants).
// Step 1: per digit a histogram per tile, a scan, a scatter.
#include "sort_three_kernel.cuh"
// Step 2: one histogram pass, then one pass per digit with the look-back.
#include "sort_onesweep.cuh"

namespace {

const std::vector<ch18::Step> kSteps = {{"three-kernel", launch_three_kernel},
                                        {"onesweep", launch_onesweep}};

}  // namespace

int main(int argc, char** argv) {
  int64_t n = sc::kDefaultN;
  std::string variant = "all", rows, block, keys = "both";
  bool large = false;
  const sc::TileChoices tiles{
      SortRows::list(), kSortBlocks, kDefaultBlock, {8, 16, 24}, {256, 384, 512}};
  sw::Cli cli(
      "18_radix_sort",
      "LSD radix sort of u32 keys and key-value pairs: three kernels a digit, then onesweep.");
  cli.add_int("--n", &n, 1, sw::kMaxElements,
              "keys to sort (at most 2^32 - 1: a value is its key's u32 index)");
  cli.add_choice("--sort", &keys, {"both", "keys", "pairs"},
                 "keys alone, key-value pairs, or both");
  std::vector<std::string> names;
  for (const ch18::Step& s : kSteps) names.push_back(s.name);
  cli.add_variant(&variant, names, "the step(s) to run");
  sc::add_tile_options(cli, &rows, &block, tiles);
  cli.add_flag("--large", &large, "with --verify-only: 2^31 + 17 keys (64-bit offsets)");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  if (n > ch18::kMaxKeys) {
    std::fprintf(
        stderr,
        "18_radix_sort: error: --n %lld: a value is its key's u32 index; valid range: 1 to %lld\n",
        static_cast<long long>(n), static_cast<long long>(ch18::kMaxKeys));
    return sw::kExitBadInput;
  }
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "18", "sort-keys");
  std::vector<ch18::Step> steps;
  for (const ch18::Step& s : kSteps)
    if (variant == "all" || variant == s.name) steps.push_back(s);
  std::vector<bool> kinds;
  if (keys != "pairs") kinds.push_back(false);
  if (keys != "keys") kinds.push_back(true);
  const sc::Tile own = sc::pick_tile(rows, block, kDefaultRows, tiles);

  if (opt.verify_only) {
    const bool n_given = cli.was_given("--n");
    const std::vector<int64_t> sizes = large     ? std::vector<int64_t>{(int64_t{1} << 31) + 17}
                                       : n_given ? std::vector<int64_t>{n}
                                                 : sc::verify_sizes();
    sw::require_fits(gpu, large ? "--large" : "--n", *std::max_element(sizes.begin(), sizes.end()),
                     ch18::bytes_per_key(keys != "keys"));
    for (int64_t size : sizes)
      ch18::verify(report, steps, size,
                   large ? std::vector<ch18::Keys>{ch18::Keys::kRandom} : ch18::kAllKeys, kinds,
                   own, opt.seed);
    return report.exit_code();
  }

  sw::require_fits(
      gpu, "--n", n,
      ch18::bytes_per_key(keys != "keys") + (keys != "keys" ? 8 : 4));  // and CUB's buffers
  sc::Tile tuned = own;
  // Random keys, CUB and each step, keys and pairs: at 2^20, 2^22, ... up to --n and at
  // --n with every step; at --n alone with --variant (what the lab checker times).
  const int64_t smallest = variant == "all" ? std::min(sc::kLatencyN, n) : n;
  for (int64_t size = smallest; size <= n; size = size < n ? std::min(size * 4, n) : n + 1) {
    std::vector<uint64_t> ref;
    const sw::Timing cpu = sw::time_cpu(
        0, 1, [&] { ref = ch18::reference_sort(ch18::Keys::kRandom, opt.seed, size); });
    if (size == n &&
        keys != "keys") {  // the reference itself, on every core: a bucket split, then std::sort
      sw::Result r{"cpu-all-cores", size, 16.0 * size, cpu, true, "cpu"};
      r.problem = "sort-pairs";
      r.note = ch18::keys_name(ch18::Keys::kRandom);
      r.extra = {{"threads", static_cast<double>(sw::host_threads())},
                 {"gkeys_s", size / (cpu.ms_median * 1e6)}};
      report.add(r);
    }
    for (bool pairs : kinds) {
      const ch18::SortData d(size, pairs, ch18::Keys::kRandom, opt.seed);
      if (size == n && !pairs && variant == "all" && rows.empty() &&
          block.empty()) {  // onesweep's tile
        double best = -1;
        for (int r : tiles.sweep_rows)
          for (int b : tiles.sweep_blocks) {
            sw::Result row = ch18::measure(sc::sweep_options(opt), &kSteps.back(), d, ref, {r, b});
            row.variant = std::string(kSteps.back().name) + "-sweep";
            row.role = "sweep";
            report.add(row);
            if (row.ok && row.extra["gkeys_s"] > best) best = row.extra["gkeys_s"], tuned = {r, b};
          }
      }
      report.add(ch18::measure(opt, nullptr, d, ref, {}));
      for (const ch18::Step& s : steps) report.add(ch18::measure(opt, &s, d, ref, tuned));
    }
  }
  return report.exit_code();
}
