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
//                [--variant one-pass] [--tile-rows 4 --block 256] [--verify-only [--large]]
//                [--json]
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/16_scan/scan_lookback.cuh"  // chapter 16's tile, ticket and look-back
#include "common/scan_harness.h"
#include "compact_checks.cuh"      // the data, the reference and its check, CUB
#include "compact_one_pass.cuh"    // step 2: one pass on the look-back
#include "compact_three_pass.cuh"  // step 1: count, scan the counts, scatter
#include "compact_tile.cuh"        // the predicate and the tile's compaction

namespace {

namespace sc = sw::scan;
using ch16::Count;

constexpr double kKeeps[] = {0.01, 0.5, 0.99};  // the default run's keep ratios
constexpr double kSweepKeep = 0.5;              // the ratio the tile sweep runs at
const std::vector<double> kCheckKeeps = {0.0, 0.01, 0.5, 0.99, 1.0};

// The version table: name, launcher (returns the tickets its kernels draw).
struct Step {
  const char* name;
  int64_t (*launch)(const CompactCall&);
};
const std::vector<Step> kSteps = {{"three-pass", launch_three_pass}, {"one-pass", launch_one_pass}};

// --- the program ------------------------------------------------------------------------------

std::string keep_note(double keep) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "keep %g%%", 100 * keep);
  return buf;
}

// One row: the step (or CUB, step == nullptr), measured at `keep`. Bytes: the n
// elements read, the kept ones written, the count.
sw::Result measure(const sw::CommonOptions& opt, const Step* step, const CompactData& d,
                   double keep, sc::Tile t) {
  const KeepBelow k = keep_below(keep);
  const CompactCall call = d.call(k, t);
  int64_t tickets = 0;
  const CubSelect cub(d, k);
  const auto run = [&] {  // the timed call: the step's launcher, or CUB's (which calls CUB)
    if (step)
      tickets = step->launch(call);
    else
      cub();
  };
  const sw::bench::Row row{step ? step->name : "cub", d.n, 0.0, 1, false, step ? "step" : "vendor"};
  sw::Result r =
      sw::bench::measure(opt, row, sc::row_data(d, [&] { return d.check(k, tickets); }), run);
  r.bytes = 4.0 * d.n + 4.0 * static_cast<double>(sw::read(d.count.get())) + sizeof(Count);
  r.note = keep_note(keep);
  if (step) r.extra.insert({{"tile_rows", t.rows}, {"block", t.block}, {"items", t.rows * kVec}});
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = sc::kDefaultN;
  double keep = -1;  // -1: the default run's ratios
  std::string variant = "all", rows, block;
  bool large = false;
  const sc::TileChoices tiles{ch16::ScanRows::list(),
                              {32, 64, 128, 256, 512},
                              ch16::kDefaultBlock,
                              {2, 4, 8},
                              {128, 256, 512}};
  sw::Cli cli("17_stream_compaction",
              "Stream compaction of u32: three passes, then one on the look-back.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "elements of the input");
  cli.add_number("--keep", &keep, 0.0, 1.0, "the fraction kept: x is kept when x < keep * 2^32");
  std::vector<std::string> names;
  for (const Step& s : kSteps) names.push_back(s.name);
  cli.add_variant(&variant, names, "the step(s) to run");
  sc::add_tile_options(cli, &rows, &block, tiles);
  cli.add_flag("--large", &large, "with --verify-only: sizes above 2^31 and 2^32 (64-bit offsets)");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "17", "compact");
  std::vector<Step> steps;
  for (const Step& s : kSteps)
    if (variant == "all" || variant == s.name) steps.push_back(s);
  constexpr double kBytesPerElement = 8 + 8.0 / 64 + 8.0 / 128;  // in, out, scratch, state
  const std::vector<double> keeps =
      keep >= 0 ? std::vector<double>{keep} : std::vector<double>(kCheckKeeps);

  if (opt.verify_only) {
    const bool n_given = cli.was_given("--n");
    const std::vector<int64_t> sizes = large     ? sc::large_sizes()
                                       : n_given ? std::vector<int64_t>{n}
                                                 : sc::verify_sizes();
    sw::require_fits(gpu, large ? "--large" : "--n", *std::max_element(sizes.begin(), sizes.end()),
                     kBytesPerElement);
    for (int64_t size : sizes) {
      const CompactData d(size, opt.seed);
      for (const Step& s : steps) {
        std::vector<sc::Tile> ts = {sc::pick_tile(rows, block, ch16::kDefaultRows, tiles)};
        if (!large && !n_given && rows.empty() && block.empty() && size <= sc::kTinyTileMaxN)
          ts.insert(ts.end(), {{1, 32}, {2, 64}});
        for (const sc::Tile& t : ts)
          for (double k : (large && keep < 0) ? std::vector<double>{0.5} : keeps) {
            int64_t tickets = 0;
            const CompactCall call = d.call(keep_below(k), t);
            const sc::Verdict v = sw::bench::check_once(
                sc::row_data(d, [&] { return d.check(keep_below(k), tickets); }),
                [&] { tickets = s.launch(call); });
            report.check(v.ok,
                         std::string(s.name) + " " + keep_note(k) + " n=" + std::to_string(size) +
                             " rows=" + std::to_string(t.rows) +
                             " block=" + std::to_string(t.block),
                         v.detail);
          }
      }
    }
    return report.exit_code();
  }

  sw::require_fits(gpu, "--n", n, kBytesPerElement);
  const CompactData d(n, opt.seed);
  sc::Tile tuned = sc::pick_tile(rows, block, ch16::kDefaultRows, tiles);
  if (variant == "all" && rows.empty() &&
      block.empty()) {  // the one-pass step's tile, by measurement
    double best = -1;
    for (int r : tiles.sweep_rows)
      for (int b : tiles.sweep_blocks) {
        sw::Result row = measure(sc::sweep_options(opt), &kSteps.back(), d, kSweepKeep, {r, b});
        row.variant = std::string(kSteps.back().name) + "-sweep";
        row.role = "sweep";
        report.add(row);
        const double g = sw::gbps(row.bytes, row.timing.ms_median);
        if (row.ok && g > best) best = g, tuned = {r, b};
      }
  }
  for (double k : keep >= 0 ? std::vector<double>{keep}
                            : std::vector<double>(std::begin(kKeeps), std::end(kKeeps))) {
    report.add(measure(opt, nullptr, d, k, {}));
    for (const Step& s : steps) report.add(measure(opt, &s, d, k, tuned));
  }
  return report.exit_code();
}
