// Chapter 17: stream compaction, a scan and a scatter; then one pass on the look-back.
//
// What changed:  chapter 16 scanned values; here the values scanned are flags.
//                Element i of x (any u32) is kept when x[i] < keep * 2^32; the kept
//                elements go, in order, to out[0, count), and count to a 64-bit word.
//                Where a kept element goes is the exclusive scan of the flags. In a
//                tile (chapter 16's: 16-byte loads, rows of 128 elements per warp)
//                the flags never touch memory: one __ballot_sync per element of a
//                lane's vector gives each warp its row's flags at once, __popc of
//                the lanes below counts what precedes an element (warp-aggregated
//                offsets), and the warps add up through shared memory.
//   three-pass   each tile counts its kept elements; chapter 16's look-back scan
//                turns the counts into tile offsets; each tile is read again and
//                scattered from its offset: the input is read twice.
//   one-pass     one kernel: a ticket, the tile's count published as its aggregate,
//                chapter 16's decoupled look-back for its offset, the scatter: the
//                input is read once.
//   one-pass-staged  + the kept elements of a tile go to shared memory first, at
//                their places in the tile, then out with 16-byte stores, consecutive
//                threads writing consecutive pieces: a warp's store fills whole
//                sectors, where one-pass's lanes each write their own run (at 99 %,
//                a store of 32 lanes touches about 16 sectors).
//   one-pass-lean    + what lives through the look-back in fewer registers: a lane's
//                flags in one word and the places in the tile in 32 bits, instead of
//                4 ballots a row and 64-bit counts (64 registers at 8 rows, not 125:
//                twice the blocks an SM).
//   one-pass-backoff  + chapter 16's paused look-back (its step 11): a pause before the
//                first poll and between polls, instead of polling the L2 without a break.
//   one-pass-l2-prefetch  + thread 0 of each tile first asks the L2 for the input 4 MiB
//                ahead (chapter 16's step 15): the DRAM keeps streaming while tiles wait
//                on their look-backs. The default run sweeps this step's tile and runs
//                every step at it.
//                cub::DeviceSelect::If with the same predicate in the same run; the
//                keep ratios 1 % (read-mostly), 50 % and 99 %. The data, the reference,
//                the checks and the rows: compact_problem.cuh.
// Bottleneck:    DRAM: the bytes that must move are n reads and count writes.
// Steps:         three-pass, one-pass, one-pass-staged, one-pass-lean, one-pass-backoff,
//                one-pass-l2-prefetch
// Run:           build/chapters/17_stream_compaction [--n 2^28 [--verify-only] |
//                --verify-only --large] [--keep 0.01] [--variant one-pass]
//                [--tile-rows 4 --block 256] [--json]
#include <cstdint>
#include <vector>

#include "chapters/16_scan/scan_lookback.cuh"    // chapter 16's tile, ticket and look-back
#include "chapters/16_scan/scan_tile_early.cuh"  // its paused look-back (step 11)
#include "common/bench/program.h"
#include "common/check.h"
#include "compact_problem.cuh"  // the data, the reference and its check, CUB, the problem
#include "compact_staged.cuh"   // steps 3 and 4: the tile through shared memory
#include "compact_tile.cuh"     // the predicate, the tile's compaction, CompactCall

namespace {

using ch16::Count;

// --- step 1: count, scan the counts, scatter --------------------------------------------------

template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    count_tiles(const uint32_t* __restrict__ in, int64_t n, KeepBelow keep, Count* counts) {
  const int64_t first = ch16::lane_first<kVec, kRows>(blockIdx.x);
  const bool whole = ch16::tile_whole<kVec, kRows>(blockIdx.x, n);
  ch16::Vec<uint32_t, kVec> x[kRows];
  ch16::load_rows<uint32_t, kVec, kRows>(in, n, first, whole, x);
  unsigned kept = 0;
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      kept += (whole || first + r * sw::kWarp * kVec + k < n) && keep(x[r].v[k]);
  Count aggregate;
  ch16::warps_before<Count>(ch16::warp_sum_all(kept), &aggregate);
  if (threadIdx.x == 0) counts[blockIdx.x] = aggregate;
}

template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    scatter_tiles(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, Count* count,
                  int64_t n, KeepBelow keep, const Count* __restrict__ offsets) {
  compact_tile<kRows>(in, out, n, blockIdx.x, keep, [&](Count kept) {
    const Count offset = offsets[blockIdx.x];
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) *count = offset + kept;
    return offset;
  });
}

// The tile offsets at scratch + aligned(tiles): 16-byte aligned for the scan's loads.
int64_t aligned(int64_t count) { return sw::ceil_div(count, 2) * 2; }

// The count, chapter 16's scan of the counts and the scatter; the scan's tiles are the
// tickets its kernel must draw.
void launch_three_pass(const CompactCall& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, kVec);
  Count* counts = c.scratch;
  Count* offsets = c.scratch + aligned(tiles);
  const auto count =
      ch16::ScanRows::pick(c.tile.rows, [](auto r) { return count_tiles<decltype(r)::value>; });
  const auto scatter =
      ch16::ScanRows::pick(c.tile.rows, [](auto r) { return scatter_tiles<decltype(r)::value>; });
  count<<<tiles, c.tile.block, 0, c.stream>>>(c.in, c.n, c.keep, counts);
  CHECK_LAUNCH();
  // chapter 16's single-pass scan of the counts, in its default tile: clear its ticket and
  // status words, then one block per tile of counts
  const unsigned tickets =
      ch16::tile_count(tiles, ch16::kDefaultBlock, ch16::kDefaultRows, ch16::kVec16<Count>);
  ch16::clear_state(c.state, tickets, c.stream);
  ch16::scan_lookback<Count, ch16::kDefaultRows>
      <<<tickets, ch16::kDefaultBlock, 0, c.stream>>>(counts, offsets, tiles, false, c.state);
  CHECK_LAUNCH();
  scatter<<<tiles, c.tile.block, 0, c.stream>>>(c.in, c.out, c.count, c.n, c.keep, offsets);
  CHECK_LAUNCH();
  *c.tickets = tickets;  // the scan's: this step's own tiles need none
}

// --- step 2: one pass, the offset from the look-back ------------------------------------------

template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    compact_one_pass(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, Count* count,
                     int64_t n, KeepBelow keep, Count* state) {
  const int64_t tile = ch16::draw_tile(state);
  compact_tile<kRows>(in, out, n, tile, keep, [&](Count kept) {
    const Count offset =
        ch16::lookback_prefix<Count, ch16::Lookback::kDecoupled>(state + 1, tile, kept);
    if (tile == gridDim.x - 1 && threadIdx.x == 0) *count = offset + kept;
    return offset;
  });
}

// Zeroes the ticket and status words, launches the kernel compiled for the tile's rows;
// the tiles are the tickets it must draw.
void launch_one_pass(const CompactCall& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, kVec);
  ch16::clear_state(c.state, tiles, c.stream);
  const auto kernel = ch16::ScanRows::pick(
      c.tile.rows, [](auto r) { return compact_one_pass<decltype(r)::value>; });
  kernel<<<tiles, c.tile.block, 0, c.stream>>>(c.in, c.out, c.count, c.n, c.keep, c.state);
  CHECK_LAUNCH();
  *c.tickets = tiles;
}

// --- steps 3 and 4: the kept elements through shared memory ---------------------------------

// The tile's offset as one-pass finds it (a ticket's tile, chapter 16's look-back); the
// last tile writes the count.
struct OffsetFromLookback {
  Count* state;
  Count* count;
  int64_t tile;
  __device__ Count operator()(Count kept) const {
    const Count offset =
        ch16::lookback_prefix<Count, ch16::Lookback::kDecoupled>(state + 1, tile, kept);
    if (tile == gridDim.x - 1 && threadIdx.x == 0) *count = offset + kept;
    return offset;
  }
};

template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    compact_one_pass_staged(const uint32_t* __restrict__ in, uint32_t* __restrict__ out,
                            Count* count, int64_t n, KeepBelow keep, Count* state) {
  extern __shared__ uint4 stage[];  // stage_bytes(tile)
  const int64_t tile = ch16::draw_tile(state);
  compact_tile_staged<kRows>(in, out, n, tile, keep, reinterpret_cast<uint32_t*>(stage),
                             OffsetFromLookback{state, count, tile});
}

// As launch_one_pass, with the tile's stage in shared memory.
void launch_one_pass_staged(const CompactCall& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, kVec);
  ch16::clear_state(c.state, tiles, c.stream);
  const auto kernel = ch16::ScanRows::pick(
      c.tile.rows, [](auto r) { return compact_one_pass_staged<decltype(r)::value>; });
  ch16::allow_shared(kernel, stage_bytes(c.tile));
  kernel<<<tiles, c.tile.block, stage_bytes(c.tile), c.stream>>>(c.in, c.out, c.count, c.n, c.keep,
                                                                 c.state);
  CHECK_LAUNCH();
  *c.tickets = tiles;
}

template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    compact_one_pass_lean(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, Count* count,
                          int64_t n, KeepBelow keep, Count* state) {
  extern __shared__ uint4 stage[];  // stage_bytes(tile)
  const int64_t tile = ch16::draw_tile(state);
  compact_tile_lean<kRows>(in, out, n, tile, keep, reinterpret_cast<uint32_t*>(stage),
                           OffsetFromLookback{state, count, tile});
}

void launch_one_pass_lean(const CompactCall& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, kVec);
  ch16::clear_state(c.state, tiles, c.stream);
  const auto kernel = ch16::ScanRows::pick(
      c.tile.rows, [](auto r) { return compact_one_pass_lean<decltype(r)::value>; });
  ch16::allow_shared(kernel, stage_bytes(c.tile));
  kernel<<<tiles, c.tile.block, stage_bytes(c.tile), c.stream>>>(c.in, c.out, c.count, c.n, c.keep,
                                                                 c.state);
  CHECK_LAUNCH();
  *c.tickets = tiles;
}

// --- step 5: chapter 16's paused look-back ----------------------------------------------------

// OffsetFromLookback with chapter 16's step 11: a pause before the first poll and between
// polls (lookback_prefix_backoff, scan_tile_early.cuh).
struct OffsetFromPausedLookback {
  Count* state;
  Count* count;
  int64_t tile;
  __device__ Count operator()(Count kept) const {
    const Count offset = ch16::lookback_prefix_backoff<Count>(
        state + 1, tile, [] { return gridDim.x; }, kept);
    if (tile == gridDim.x - 1 && threadIdx.x == 0) *count = offset + kept;
    return offset;
  }
};

template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    compact_one_pass_backoff(const uint32_t* __restrict__ in, uint32_t* __restrict__ out,
                             Count* count, int64_t n, KeepBelow keep, Count* state) {
  extern __shared__ uint4 stage[];  // stage_bytes(tile)
  const int64_t tile = ch16::draw_tile(state);
  compact_tile_lean<kRows>(in, out, n, tile, keep, reinterpret_cast<uint32_t*>(stage),
                           OffsetFromPausedLookback{state, count, tile});
}

void launch_one_pass_backoff(const CompactCall& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, kVec);
  ch16::clear_state(c.state, tiles, c.stream);
  const auto kernel = ch16::ScanRows::pick(
      c.tile.rows, [](auto r) { return compact_one_pass_backoff<decltype(r)::value>; });
  ch16::allow_shared(kernel, stage_bytes(c.tile));
  kernel<<<tiles, c.tile.block, stage_bytes(c.tile), c.stream>>>(c.in, c.out, c.count, c.n, c.keep,
                                                                 c.state);
  CHECK_LAUNCH();
  *c.tickets = tiles;
}

// --- step 6: the input ahead prefetched into the L2 -------------------------------------------

// one-pass-backoff's kernel, and first, by thread 0, the L2 prefetch of the tile `ahead`
// tiles after this one (chapter 16's prefetch_tile_l2, its step 15).
template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    compact_one_pass_l2_prefetch(const uint32_t* __restrict__ in, uint32_t* __restrict__ out,
                                 Count* count, int64_t n, KeepBelow keep, Count* state,
                                 int64_t ahead) {
  extern __shared__ uint4 stage[];  // stage_bytes(tile)
  const int64_t tile = ch16::draw_tile(state);
  ch16::prefetch_tile_l2(in, n, tile + ahead, ch16::tile_items(blockDim.x, kRows, kVec));
  compact_tile_lean<kRows>(in, out, n, tile, keep, reinterpret_cast<uint32_t*>(stage),
                           OffsetFromPausedLookback{state, count, tile});
}

void launch_one_pass_l2_prefetch(const CompactCall& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, kVec);
  const int64_t ahead =
      ch16::l2_ahead_tiles(ch16::tile_items(c.tile.block, c.tile.rows, kVec), sizeof(uint32_t));
  ch16::clear_state(c.state, tiles, c.stream);
  const auto kernel = ch16::ScanRows::pick(
      c.tile.rows, [](auto r) { return compact_one_pass_l2_prefetch<decltype(r)::value>; });
  ch16::allow_shared(kernel, stage_bytes(c.tile));
  kernel<<<tiles, c.tile.block, stage_bytes(c.tile), c.stream>>>(c.in, c.out, c.count, c.n, c.keep,
                                                                 c.state, ahead);
  CHECK_LAUNCH();
  *c.tickets = tiles;
}

// The step table: each step's launcher, which holds its <<<>>>s.
const std::vector<CompactStep> kSteps = {{"three-pass", launch_three_pass},
                                         {"one-pass", launch_one_pass},
                                         {"one-pass-staged", launch_one_pass_staged},
                                         {"one-pass-lean", launch_one_pass_lean},
                                         {"one-pass-backoff", launch_one_pass_backoff},
                                         {"one-pass-l2-prefetch", launch_one_pass_l2_prefetch}};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<CompactStep> program{
      "17_stream_compaction", "Stream compaction of u32: three passes, then one on the look-back.",
      "17", kSteps};
  return sw::bench::run(argc, argv, program, CompactProblem{});
}
