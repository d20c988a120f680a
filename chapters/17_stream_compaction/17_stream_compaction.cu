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
//                input is read once. The default run sweeps its tile.
//                cub::DeviceSelect::If with the same predicate in the same run; the
//                keep ratios 1 % (read-mostly), 50 % and 99 %.
// Bottleneck:    DRAM: the bytes that must move are n reads and count writes.
// Steps:         three-pass, one-pass
// Run:           build/chapters/17_stream_compaction [--n 2^28] [--keep 0.01]
//                [--variant one-pass] [--tile-rows 4 --block 256] [--verify-only [--large]] [--json]
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/16_scan/scan_lookback.cuh"  // chapter 16's tile, ticket and look-back
#include "common/scan_harness.h"

namespace {

namespace sc = sw::scan;
using ch16::Count;

constexpr int kVec = 4;                           // u32 per 16-byte load
constexpr double kKeeps[] = {0.01, 0.5, 0.99};   // the default run's keep ratios
constexpr double kSweepKeep = 0.5;                // the ratio the tile sweep runs at
const std::vector<double> kCheckKeeps = {0.0, 0.01, 0.5, 0.99, 1.0};

// Keeps x when x < threshold = keep * 2^32 (64-bit: keep 1 keeps every u32).
struct KeepBelow {
  uint64_t threshold;
  __host__ __device__ bool operator()(uint32_t x) const { return x < threshold; }
};
KeepBelow keep_below(double keep) { return {static_cast<uint64_t>(keep * 4294967296.0)}; }

// --- the tile: each kept element's place from warp votes ---------------------------------

// Compacts one tile: lane l's element k of row r is kept if its flag is set; its place
// is the tile's prefix (tile_prefix(kept in the tile)), plus the kept elements of the
// warps before, of the rows before, of the lanes below (__popc of each ballot, masked),
// and of this lane's elements before k.
template <int kRows, class Prefix>
__device__ __forceinline__ void compact_tile(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, int64_t n,
                                             int64_t tile, KeepBelow keep, Prefix&& tile_prefix) {
  constexpr int kRow = sw::kWarp * kVec;
  const int lane = threadIdx.x % sw::kWarp;
  const unsigned below = (1u << lane) - 1;
  const int64_t first = ch16::lane_first<kVec, kRows>(tile);
  const bool whole = ch16::tile_whole<kVec, kRows>(tile, n);
  ch16::Vec<uint32_t, kVec> x[kRows];
  ch16::load_rows<uint32_t, kVec, kRows>(in, n, first, whole, x);
  unsigned votes[kRows][kVec], lane_before[kRows];
  Count row_before[kRows], warp_total = 0;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    unsigned row = 0, mine = 0;
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const bool kept = (whole || first + r * kRow + k < n) && keep(x[r].v[k]);
      votes[r][k] = __ballot_sync(sw::kFullMask, kept);
      row += __popc(votes[r][k]);
      mine += __popc(votes[r][k] & below);
    }
    lane_before[r] = mine;
    row_before[r] = warp_total;
    warp_total += row;
  }
  Count aggregate;
  const Count warp_before = ch16::warps_before(warp_total, &aggregate);
  const Count prefix = tile_prefix(aggregate);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    Count at = prefix + warp_before + row_before[r] + lane_before[r];
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      if (votes[r][k] >> lane & 1) out[at++] = x[r].v[k];
  }
}

// What a launcher gets: one whole compaction, on `stream`.
struct CompactCall {
  const uint32_t* in;
  uint32_t* out;
  Count* count;
  int64_t n;
  KeepBelow keep;
  sc::Tile tile;
  Count* scratch;  // ceil(n / 64) + 64 words: tile counts and offsets
  Count* state;    // ceil(n / 128) + 1 words: the ticket and the status words
  cudaStream_t stream;
};

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
    for (int k = 0; k < kVec; ++k) kept += (whole || first + r * sw::kWarp * kVec + k < n) && keep(x[r].v[k]);
  Count aggregate;
  ch16::warps_before<Count>(ch16::warp_sum_all(kept), &aggregate);
  if (threadIdx.x == 0) counts[blockIdx.x] = aggregate;
}

template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    scatter_tiles(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, Count* count, int64_t n, KeepBelow keep,
                  const Count* __restrict__ offsets) {
  compact_tile<kRows>(in, out, n, blockIdx.x, keep, [&](Count kept) {
    const Count offset = offsets[blockIdx.x];
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) *count = offset + kept;
    return offset;
  });
}

// The tile offsets at scratch + aligned(tiles): 16-byte aligned for the scan's loads.
int64_t aligned(int64_t count) { return sw::ceil_div(count, 2) * 2; }

int64_t launch_three_pass(const CompactCall& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, kVec);
  Count* counts = c.scratch;
  Count* offsets = c.scratch + aligned(tiles);
  ch16::ScanRows::dispatch(c.tile.rows, [&](auto r) {
    count_tiles<decltype(r)::value><<<tiles, c.tile.block, 0, c.stream>>>(c.in, c.n, c.keep, counts);
    CHECK_LAUNCH();
  });
  const int64_t tickets = ch16::launch_scan_lookback<Count, ch16::kDefaultRows>(
      counts, offsets, tiles, false, ch16::kDefaultRows, ch16::kDefaultBlock, c.state, c.stream);
  ch16::ScanRows::dispatch(c.tile.rows, [&](auto r) {
    scatter_tiles<decltype(r)::value><<<tiles, c.tile.block, 0, c.stream>>>(c.in, c.out, c.count, c.n, c.keep, offsets);
    CHECK_LAUNCH();
  });
  return tickets;  // the scan's: this step's own tiles need none
}

// --- step 2: one pass, the offset from the look-back ------------------------------------------

template <int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    compact_one_pass(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, Count* count, int64_t n,
                     KeepBelow keep, Count* state) {
  const int64_t tile = ch16::draw_tile(state);
  compact_tile<kRows>(in, out, n, tile, keep, [&](Count kept) {
    const Count offset = ch16::lookback_prefix<Count, ch16::Lookback::kDecoupled>(state + 1, tile, kept);
    if (tile == gridDim.x - 1 && threadIdx.x == 0) *count = offset + kept;
    return offset;
  });
}

int64_t launch_one_pass(const CompactCall& c) {
  const unsigned tiles = ch16::tile_count(c.n, c.tile.block, c.tile.rows, kVec);
  ch16::clear_state(c.state, tiles, c.stream);
  ch16::ScanRows::dispatch(c.tile.rows, [&](auto r) {
    compact_one_pass<decltype(r)::value><<<tiles, c.tile.block, 0, c.stream>>>(c.in, c.out, c.count, c.n, c.keep,
                                                                              c.state);
    CHECK_LAUNCH();
  });
  return tiles;
}

// The version table: name, launcher (returns the tickets its kernels draw).
struct CompactStep {
  const char* name;
  int64_t (*launch)(const CompactCall&);
};
const std::vector<CompactStep> kSteps = {{"three-pass", launch_three_pass}, {"one-pass", launch_one_pass}};

// --- the data, the reference, the vendor --------------------------------------------------------

struct CompactData {
  int64_t n;
  uint64_t seed, digest = 0;
  sw::DeviceBuffer<uint32_t> in, out;  // out: n + 1 elements; out[n] is never written
  sw::DeviceBuffer<Count> count, scratch, state;

  CompactData(int64_t size, uint64_t s) : n(size), seed(s) {
    in.allocate(n);
    out.allocate(n + 1);
    count.allocate(1);
    scratch.allocate(sw::ceil_div(n, 64) + 64);
    state.allocate(sw::ceil_div(n, 128) + 1);
    sc::fill(in.get(), n, seed);
    digest = sw::device_digest(in.get(), in.bytes());
  }
  CompactCall call(KeepBelow keep, sc::Tile t, cudaStream_t stream = nullptr) const {
    return {in.get(), out.get(), count.get(), n, keep, t, scratch.get(), state.get(), stream};
  }
  void poison() const {
    for (const auto* b : {&count, &scratch, &state}) sw::poison(b->get(), b->bytes());
    sw::poison(out.get(), out.bytes());
  }
  // The output and its count against the reference, the tickets, the input.
  sc::Verdict check(KeepBelow keep, int64_t tickets) const;
};

// The reference from the generator, on all cores: each chunk's kept count, their
// prefix (where each chunk's kept elements start), then every kept element in place.
sc::Verdict CompactData::check(KeepBelow keep, int64_t tickets) const {
  const int64_t chunks = sw::ceil_div(n, sc::kChunk);
  std::vector<int64_t> start(chunks + 1, 0);
  sw::parallel_for(chunks, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      for (int64_t i = c * sc::kChunk; i < std::min(n, (c + 1) * sc::kChunk); ++i)
        start[c + 1] += keep(sc::element<uint32_t>(seed, i));
  }, 1);
  for (int64_t c = 0; c < chunks; ++c) start[c + 1] += start[c];
  const int64_t total = start[chunks];
  const Count got = sw::read(count.get());
  if (got != static_cast<Count>(total))
    return {false, "count: got " + std::to_string(got) + ", want " + std::to_string(total)};
  sc::Mismatches bad;
  sc::for_each_piece(out.get(), total, [&](const uint32_t* host, int64_t first, int64_t size) {
    const int64_t c0 = std::upper_bound(start.begin(), start.end(), first) - start.begin() - 1;
    const int64_t c1 = std::min<int64_t>(chunks, std::lower_bound(start.begin(), start.end(), first + size) - start.begin());
    sw::parallel_for(c1 - c0, [&](int64_t b, int64_t e) {
      for (int64_t c = c0 + b; c < c0 + e; ++c) {
        int64_t at = start[c];
        for (int64_t i = c * sc::kChunk; i < std::min(n, (c + 1) * sc::kChunk); ++i) {
          const uint32_t x = sc::element<uint32_t>(seed, i);
          if (!keep(x)) continue;
          if (at >= first && at < first + size && host[at - first] != x)
            bad.add(at, sc::got_want("out", at, host[at - first], x));
          ++at;
        }
      }
    }, 1);
  });
  if (total < n && sw::read(out.get() + total) != sw::read(out.get() + n))
    bad.add(total, "out[" + std::to_string(total) + "] was written: past the count");
  sc::Verdict v = bad.verdict();
  if (v.ok) v = sc::tickets_drawn(state.get(), tickets);
  if (v.ok && sw::device_digest(in.get(), in.bytes()) != digest) v = {false, "input changed: the step wrote into x"};
  return v;
}

// cub::DeviceSelect::If with the same predicate, temporary storage allocated here.
class CubSelect {
 public:
  CubSelect(const CompactData& d, KeepBelow keep) : d_(d), keep_(keep) {
    CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes_, d.in.get(), d.out.get(), d.count.get(), d.n, keep));
    temp_.allocate(static_cast<int64_t>(std::max<size_t>(bytes_, 1)));
  }
  void operator()(cudaStream_t stream = nullptr) const {
    size_t bytes = bytes_;
    CUDA_CHECK(cub::DeviceSelect::If(temp_.get(), bytes, d_.in.get(), d_.out.get(), d_.count.get(), d_.n, keep_, stream));
  }

 private:
  const CompactData& d_;
  KeepBelow keep_;
  size_t bytes_ = 0;
  sw::DeviceBuffer<unsigned char> temp_;
};

// --- the program ------------------------------------------------------------------------------

std::string keep_note(double keep) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "keep %g%%", 100 * keep);
  return buf;
}

// One row: the step (or CUB, step == nullptr), measured at `keep`. Bytes: the n
// elements read, the kept ones written, the count.
sw::Result measure(sw::Report& report, const sw::CommonOptions& opt, const CompactStep* step, const CompactData& d,
                   double keep, sc::Tile t) {
  const KeepBelow k = keep_below(keep);
  int64_t tickets = 0;
  const CubSelect cub(d, k);
  const auto run = [&] {
    if (step) tickets = step->launch(d.call(k, t));
    else cub();
  };
  sw::Result r = sc::measure(report, opt, step ? step->name : "cub", d.n, 0.0, run, [&] { d.poison(); },
                             [&] { return d.check(k, tickets); });
  r.bytes = 4.0 * d.n + 4.0 * static_cast<double>(sw::read(d.count.get())) + sizeof(Count);
  r.role = step ? "step" : "vendor";
  r.note = keep_note(keep);
  if (step) r.extra = {{"tile_rows", t.rows}, {"block", t.block}, {"items", t.rows * kVec}};
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = sc::kDefaultN;
  double keep = -1;  // -1: the default run's ratios
  std::string variant = "all", rows, block;
  bool large = false;
  const sc::TileChoices tiles{ch16::ScanRows::list(), {32, 64, 128, 256, 512}, ch16::kDefaultBlock, {2, 4, 8},
                              {128, 256, 512}};
  sw::Cli cli("17_stream_compaction", "Stream compaction of u32: three passes, then one on the look-back.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "elements of the input");
  cli.add_number("--keep", &keep, 0.0, 1.0, "the fraction kept: x is kept when x < keep * 2^32");
  std::vector<std::string> names, variants = {"all"};
  for (const CompactStep& s : kSteps) names.push_back(s.name), variants.push_back(s.name);
  cli.add_choice("--variant", &variant, variants, "the step(s) to run");
  sc::add_tile_options(cli, &rows, &block, tiles);
  cli.add_flag("--large", &large, "with --verify-only: sizes above 2^31 and 2^32 (64-bit offsets)");
  cli.set_steps(names);
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "17", "compact");
  std::vector<CompactStep> steps;
  for (const CompactStep& s : kSteps)
    if (variant == "all" || variant == s.name) steps.push_back(s);
  constexpr double kBytesPerElement = 8 + 8.0 / 64 + 8.0 / 128;  // in, out, scratch, state
  const std::vector<double> keeps = keep >= 0 ? std::vector<double>{keep} : std::vector<double>(kCheckKeeps);

  if (opt.verify_only) {
    const bool n_given = cli.was_given("--n");
    const std::vector<int64_t> sizes = large ? sc::large_sizes() : n_given ? std::vector<int64_t>{n} : sc::verify_sizes();
    sw::require_fits(gpu, large ? "--large" : "--n", *std::max_element(sizes.begin(), sizes.end()), kBytesPerElement);
    for (int64_t size : sizes) {
      const CompactData d(size, opt.seed);
      for (const CompactStep& s : steps) {
        std::vector<sc::Tile> ts = {sc::pick_tile(rows, block, ch16::kDefaultRows, tiles)};
        if (!large && !n_given && rows.empty() && block.empty() && size <= sc::kTinyTileMaxN)
          ts.insert(ts.end(), {{1, 32}, {2, 64}});
        for (const sc::Tile& t : ts)
          for (double k : large && keep < 0 ? std::vector<double>{0.5} : keeps) {
            d.poison();
            const int64_t tickets = s.launch(d.call(keep_below(k), t));
            CUDA_CHECK(cudaDeviceSynchronize());
            const sc::Verdict v = d.check(keep_below(k), tickets);
            report.check(v.ok,
                         std::string(s.name) + " " + keep_note(k) + " n=" + std::to_string(size) + " rows=" +
                             std::to_string(t.rows) + " block=" + std::to_string(t.block),
                         v.detail);
          }
      }
    }
    return report.exit_code();
  }

  sw::require_fits(gpu, "--n", n, kBytesPerElement);
  const CompactData d(n, opt.seed);
  sc::Tile tuned = sc::pick_tile(rows, block, ch16::kDefaultRows, tiles);
  if (variant == "all" && rows.empty() && block.empty()) {  // the one-pass step's tile, by measurement
    double best = -1;
    for (int r : tiles.sweep_rows)
      for (int b : tiles.sweep_blocks) {
        sw::Result row = measure(report, sc::sweep_options(opt), &kSteps.back(), d, kSweepKeep, {r, b});
        row.variant = std::string(kSteps.back().name) + "-sweep";
        row.role = "sweep";
        report.add(row);
        const double g = sw::gbps(row.bytes, row.timing.ms_median);
        if (row.ok && g > best) best = g, tuned = {r, b};
      }
  }
  for (double k : keep >= 0 ? std::vector<double>{keep} : std::vector<double>(std::begin(kKeeps), std::end(kKeeps))) {
    report.add(measure(report, opt, nullptr, d, k, {}));
    for (const CompactStep& s : steps) report.add(measure(report, opt, &s, d, k, tuned));
  }
  return report.exit_code();
}
