// Chapter 16: the prefix sum (scan), from a block's tree to a single pass at copy speed.
//
// What changed:  a reduction keeps one sum; a scan keeps every partial sum:
//                out[i] = in[0] + ... + in[i] (inclusive) or up to in[i - 1]
//                (exclusive). u32 wraps modulo 2^32, so its check is exact; f32 is
//                checked against the bound of its order of additions. The steps:
//   hillis-steele       one element a thread, log2(1024) rounds in which every element
//                       adds the one d places back: n log n additions. Each block scans
//                       its 1024 elements and writes their sum; the sums are scanned the
//                       same way, level by level; a third kernel adds each block's offset.
//   blelloch            the same three phases; the block's scan is Blelloch's up-sweep
//                       and down-sweep in shared memory: 2n additions, two per thread.
//   blelloch-padded     + one padding word per 32, so the tree's strided accesses no
//                       longer fall into one bank (chapter 11's lesson, met again).
//   warp-shuffle        + the block's scan from __shfl_up_sync warp scans, no tree.
//   reduce-then-scan    tiles of 16-byte loads: each tile's sum, one block scans the sums,
//                       each tile scanned again from its offset: 3n traffic, not 4n.
//   chained             one pass: each tile, numbered by a ticket, waits for the
//                       inclusive prefix of the tile before it. 2n traffic, but the
//                       tiles finish one after another.
//   decoupled-lookback  each tile publishes its aggregate at once, and looks back over
//                       its predecessors' aggregates until an inclusive prefix (Merrill
//                       and Garland, 2016): flag and value share one 64-bit word.
//   lookback-vec        + 16-byte loads and more elements per thread; the default run
//                       sweeps its tile (--tile-rows x --block) and uses the fastest.
//   Steps 9 to 12 (scan_latency.cu) cut the latency of a tile, each on the one before,
//   each at its own tile (lookback-vec's default; lookback-lean's is 6 rows x 128):
//   lookback-noticket   the tile is blockIdx.x: no atomic ticket before the loads.
//   lookback-early      + the tile's aggregate published before its rows are scanned.
//   lookback-backoff    + __nanosleep pauses before the first poll and between polls.
//   lookback-lean       + registers for 1280 threads an SM (__launch_bounds__), and the
//                       tile of CUB's sm_90 tuning, 24 elements a thread.
//   Steps 13 and 14 (scan_prefetch.cu) keep loads in flight while a tile waits: a
//   persistent grid (the blocks the GPU holds at once), each block looping over tiles
//   at lookback-lean's tile, its registers not bound:
//   lookback-prefetch   the next tile's loads issued before this tile's look-back, into
//                       a second set of registers.
//   lookback-async      + the next tile copied into shared memory by cp.async (a ring of
//                       two stages) instead: about lookback-lean's registers, more blocks.
//   Step 15 (scan_latency.cu) keeps the loads in flight in the L2 instead, at no cost
//   in registers or shared memory:
//   lookback-l2-prefetch  lookback-lean, and thread 0 of each tile first asks the L2 for
//                       the input 4 MiB ahead (cp.async.bulk.prefetch.L2; the
//                       environment's STEPWISE_L2_AHEAD_KIB moves it without a rebuild).
//                cub::DeviceScan runs in the same program; the f32 rows carry a census
//                of distinct outputs over repeated runs (the look-back's order varies).
// Bottleneck:    DRAM bandwidth once the scan reads and writes each element once.
// Steps:         hillis-steele, blelloch, blelloch-padded, warp-shuffle, reduce-then-scan,
//                chained, decoupled-lookback, lookback-vec, lookback-noticket,
//                lookback-early, lookback-backoff, lookback-lean, lookback-prefetch,
//                lookback-async, lookback-l2-prefetch
// Run:           build/chapters/16_scan [--n 2^28 [--verify-only] | --verify-only --large]
//                [--type u32] [--variant lookback-vec] [--tile-rows 4 --block 256] [--json]
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench/program.h"
#include "common/check.h"
#include "common/parallel.h"
#include "common/problems/scan.h"
#include "scan_latency.h"       // steps 9 to 15: the launchers (scan_latency.cu, scan_prefetch.cu)
#include "scan_lookback.cuh"    // the shared scan: warp scans, tiles, the look-back (step 8)
#include "scan_multi_pass.cuh"  // steps 1 to 5: block scans and tile sums, then offsets

namespace {

namespace sc = sw::scan;
using ch16::Count;
using ch16::Lookback;

constexpr int kScalarRows = 8;  // chained and decoupled-lookback: 8 elements a thread

// --- steps 6 and 7: one pass, tiles by ticket, a prefix from the predecessors ------------------

// chained and decoupled-lookback: one pass, a 4-byte load per lane and row; kMode says
// how the tile gets its prefix (lookback_prefix, scan_lookback.cuh). Step 8, lookback-vec,
// is the header's scan_lookback (16-byte loads) and its launcher launch_scan_lookback,
// which the step table names directly: chapters 17 and 18 launch that kernel too.
template <class T, int kRows, Lookback kMode>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    scan_one_pass(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive,
                  Count* state) {
  ch16::single_pass<T, 1, kRows, kMode>(in, out, n, inclusive, state);
}
// Zeroes the ticket and status words, launches the kernel compiled for c.rows over the
// tiles of n; the tiles are the tickets it must draw.
template <class T, Lookback kMode>
void launch_one_pass(const sc::ScanCall<T>& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.block, c.rows, 1);
  ch16::clear_state(c.state, tiles, c.stream);
  const auto kernel = ch16::ScanRows::pick(
      c.rows, [](auto r) { return scan_one_pass<T, decltype(r)::value, kMode>; });
  kernel<<<tiles, c.block, 0, c.stream>>>(c.in, c.out, c.n, c.inclusive, c.state);
  CHECK_LAUNCH();
  *c.tickets = tiles;
}

// --- error bounds: the most float additions an element passes through ------------------------

// Levels of scan-then-propagate over n elements: 1, plus those of the block sums.
int64_t levels(int64_t n) {
  return n <= kClassicTile ? 1 : 1 + levels(sw::ceil_div(n, kClassicTile));
}
int64_t depth_hillis_steele(int64_t n, int, int) {
  return levels(n) * (sw::ceil_log2(kClassicTile) + 2);
}
int64_t depth_blelloch(int64_t n, int, int) {
  return levels(n) * (2 * sw::ceil_log2(kClassicTile) + 3);
}
int64_t depth_warp_shuffle(int64_t n, int, int) {
  return levels(n) * (kClassicTile / sw::kWarp + 14);
}
// A tile's own additions: its lane's V, the warp scan's 5, the rows and the warps before.
int64_t tile_depth(int rows, int block, int vec) {
  return 2 * (vec + rows + block / sw::kWarp) + 16;
}
int64_t depth_reduce_then_scan(int64_t n, int, int) {
  constexpr int kRows = ch16::kDefaultRows, kBlock = ch16::kDefaultBlock;
  const int64_t tiles = sw::ceil_div(n, ch16::tile_items(kBlock, kRows, 4));
  return tile_depth(kRows * 4, kBlock, 4) + 2 * sw::ceil_div(tiles, kSumsBlock) + 24;
}
int64_t depth_chained(int64_t n, int rows, int block) {  // each tile adds one addition to the chain
  return sw::ceil_div(n, ch16::tile_items(block, rows, 1)) + tile_depth(rows, block, 1);
}
int64_t depth_lookback(int64_t n, int rows, int block,
                       int vec) {  // two per tile: see warp_lookback
  return 3 * sw::ceil_div(n, ch16::tile_items(block, rows, vec)) + tile_depth(rows, block, vec) + 8;
}
int64_t depth_decoupled(int64_t n, int rows, int block) {
  return depth_lookback(n, rows, block, 1);
}
int64_t depth_lookback_vec(int64_t n, int rows, int block) {
  return depth_lookback(n, rows, block, 4);
}

// --- the CPU baselines ------------------------------------------------------------------------

template <class T>
void cpu_scan_1core(const T* in, T* out, int64_t n, bool inclusive) {
  T run = T{};
  for (int64_t i = 0; i < n; ++i) {
    const T next = run + in[i];
    out[i] = inclusive ? next : run;
    run = next;
  }
}

// Reduce-then-scan on the host: each core sums a slice, the slice sums are scanned,
// each core scans its slice from its offset.
template <class T>
void cpu_scan_all_cores(const T* in, T* out, int64_t n, bool inclusive) {
  const int64_t slices = sw::host_threads();
  std::vector<T> offset(slices + 1, T{});
  sw::parallel_for(
      slices,
      [&](int64_t b, int64_t e) {
        for (int64_t s = b; s < e; ++s)
          for (int64_t i = n * s / slices; i < n * (s + 1) / slices; ++i) offset[s + 1] += in[i];
      },
      1);
  for (int64_t s = 0; s < slices; ++s) offset[s + 1] += offset[s];
  sw::parallel_for(
      slices,
      [&](int64_t b, int64_t e) {
        for (int64_t s = b; s < e; ++s) {
          const int64_t lo = n * s / slices;
          cpu_scan_1core(in + lo, out + lo, n * (s + 1) / slices - lo, inclusive);
          for (int64_t i = lo; i < n * (s + 1) / slices; ++i) out[i] = offset[s] + out[i];
        }
      },
      1);
}

// The step table: each step's launchers (u32, f32), instantiated here. bench::measure
// calls its type's launcher, which holds the step's <<<>>>s.
const std::vector<sc::Step> kSteps = {
    {"hillis-steele",
     {launch_scan_then_propagate<uint32_t, scan_hillis_steele<uint32_t>, kClassicTile>,
      launch_scan_then_propagate<float, scan_hillis_steele<float>, kClassicTile>},
     {depth_hillis_steele}},
    {"blelloch",
     {launch_scan_then_propagate<uint32_t, scan_blelloch<uint32_t, false>, kClassicTile / 2>,
      launch_scan_then_propagate<float, scan_blelloch<float, false>, kClassicTile / 2>},
     {depth_blelloch}},
    {"blelloch-padded",
     {launch_scan_then_propagate<uint32_t, scan_blelloch<uint32_t, true>, kClassicTile / 2>,
      launch_scan_then_propagate<float, scan_blelloch<float, true>, kClassicTile / 2>},
     {depth_blelloch}},
    {"warp-shuffle",
     {launch_scan_then_propagate<uint32_t, scan_warp_shuffle<uint32_t>, kClassicTile>,
      launch_scan_then_propagate<float, scan_warp_shuffle<float>, kClassicTile>},
     {depth_warp_shuffle}},
    {"reduce-then-scan",
     {launch_reduce_then_scan<uint32_t>, launch_reduce_then_scan<float>},
     {depth_reduce_then_scan},
     "step",
     sc::kGoal},
    {"chained",
     {launch_one_pass<uint32_t, Lookback::kChained>, launch_one_pass<float, Lookback::kChained>},
     {depth_chained, kScalarRows},
     "step",
     sc::kTile | sc::kSlow},
    {"decoupled-lookback",
     {launch_one_pass<uint32_t, Lookback::kDecoupled>,
      launch_one_pass<float, Lookback::kDecoupled>},
     {depth_decoupled, kScalarRows},
     "step",
     sc::kTile | sc::kGoal},
    {"lookback-vec",
     {ch16::launch_scan_lookback<uint32_t>, ch16::launch_scan_lookback<float>},
     {depth_lookback_vec, ch16::kDefaultRows},
     "step",
     sc::kTile | sc::kVecTile | sc::kTuned | sc::kGoal},
    {"lookback-noticket",
     {ch16::launch_lookback_noticket<uint32_t>, ch16::launch_lookback_noticket<float>},
     {depth_lookback_vec, ch16::kDefaultRows},
     "step",
     sc::kTile | sc::kVecTile},
    {"lookback-early",
     {ch16::launch_lookback_early<uint32_t>, ch16::launch_lookback_early<float>},
     {depth_lookback_vec, ch16::kDefaultRows},
     "step",
     sc::kTile | sc::kVecTile},
    {"lookback-backoff",
     {ch16::launch_lookback_backoff<uint32_t>, ch16::launch_lookback_backoff<float>},
     {depth_lookback_vec, ch16::kDefaultRows},
     "step",
     sc::kTile | sc::kVecTile},
    {"lookback-lean",
     {ch16::launch_lookback_lean<uint32_t>, ch16::launch_lookback_lean<float>},
     {depth_lookback_vec, ch16::kLeanRows, ch16::kLeanBlock},
     "step",
     sc::kTile | sc::kVecTile | sc::kGoal},
    {"lookback-prefetch",
     {ch16::launch_lookback_prefetch<uint32_t>, ch16::launch_lookback_prefetch<float>},
     {depth_lookback_vec, ch16::kLeanRows, ch16::kLeanBlock},
     "step",
     sc::kTile | sc::kVecTile},
    {"lookback-async",
     {ch16::launch_lookback_async<uint32_t>, ch16::launch_lookback_async<float>},
     {depth_lookback_vec, ch16::kLeanRows, ch16::kLeanBlock},
     "step",
     sc::kTile | sc::kVecTile},
    {"lookback-l2-prefetch",
     {ch16::launch_lookback_l2_prefetch<uint32_t>, ch16::launch_lookback_l2_prefetch<float>},
     {depth_lookback_vec, ch16::kLeanRows, ch16::kLeanBlock},
     "step",
     sc::kTile | sc::kVecTile | sc::kGoal},
};

// The tiles: the rows the kernels are compiled for, the blocks they take, and the sweep's.
const sc::TileChoices kTiles = {ch16::ScanRows::list(),
                                {std::begin(ch16::kBlockChoices), std::end(ch16::kBlockChoices)},
                                ch16::kDefaultBlock,
                                {2, 4, 8},
                                {128, 256, 512}};

}  // namespace

// status_check.cu; plant "plain-load": a broken reader, which must fail
void check_status_protocol(sw::Report& report, const std::string& plant);
// warp_scan_check.cu; planted: a 32-bit warp scan of 64-bit values, which must fail
void check_warp_scan_u64(sw::Report& report, bool planted);

// --verify-only's checks beside the scans: the status protocol and the warp scan of 64-bit
// values; with --planted (plant: "plain-load" or "warp-scan-32"), that check planted, alone.
void extra_checks(sw::Report& report, const std::string& plant) {
  if (plant == "none" || plant == "plain-load") check_status_protocol(report, plant);
  if (plant == "none" || plant == "warp-scan-32") check_warp_scan_u64(report, plant != "none");
}

int main(int argc, char** argv) {
  const sw::bench::Program<sc::Step> program{
      "16_scan", "Prefix sums of u32 and f32: from Hillis-Steele to a single pass with look-back.",
      "16", kSteps};
  return sw::bench::run(argc, argv, program,
                        sc::ScanProblem{kTiles,
                                        {cpu_scan_1core<uint32_t>, cpu_scan_all_cores<uint32_t>},
                                        {cpu_scan_1core<float>, cpu_scan_all_cores<float>},
                                        extra_checks,
                                        {"plain-load", "warp-scan-32"}});
}
