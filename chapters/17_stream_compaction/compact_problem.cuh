// Chapter 17's problem, included by 17_stream_compaction.cu: the input and the
// buffers a compaction writes (CompactData), the reference from the generator on
// all cores and the check of an output against it, CUB's DeviceSelect::If, and
// CompactProblem: the options, the --verify-only checks and the default run's rows
// (sw::bench::run, common/bench/program.h, runs it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cub/device/device_select.cuh>
#include <string>
#include <vector>

#include "common/bench/program.h"
#include "common/bench/protocol.h"
#include "common/problems/scan.h"
#include "compact_tile.cuh"

namespace {

namespace sc = sw::scan;
using ch16::Count;

// --- the data, the reference, the vendor --------------------------------------------------------

struct CompactData {
  int64_t n;
  mutable uint64_t seed, digest = 0;   // of the input's contents (reseed changes them)
  mutable int64_t tickets = 0;         // what the last launcher said its kernels must draw
  sw::DeviceBuffer<uint32_t> in, out;  // out: n + 1 elements; out[n] is never written
  sw::DeviceBuffer<Count> count, scratch, state;

  CompactData(int64_t n, uint64_t s) : n(n), seed(s) {
    in.allocate(n);
    out.allocate(n + 1);
    count.allocate(1);
    scratch.allocate(sw::ceil_div(n, 64) + 64);
    state.allocate(sw::ceil_div(n, 128) + 1);
    reseed(s);
  }
  // New contents from another seed (--graded-timing); the check follows the seed.
  void reseed(uint64_t s) const {
    seed = s;
    sc::fill(in.get(), n, seed);
    digest = sw::device_digest(in.get(), in.bytes());
  }
  CompactCall call(KeepBelow keep, sc::Tile t, cudaStream_t stream = nullptr) const {
    return {in.get(), out.get(),     count.get(), n,        keep,
            t,        scratch.get(), state.get(), &tickets, stream};
  }
  void poison() const {
    tickets = 0;
    for (const auto* b : {&count, &scratch, &state}) sw::poison(b->get(), b->bytes());
    sw::poison(out.get(), out.bytes());
  }
  // The output and its count against the reference, the tickets, the input.
  sc::Verdict check(KeepBelow keep) const;
};

// The reference from the generator, on all cores: each chunk's kept count, their
// prefix (where each chunk's kept elements start), then every kept element in place.
sc::Verdict CompactData::check(KeepBelow keep) const {
  const int64_t chunks = sw::ceil_div(n, sc::kChunk);
  std::vector<int64_t> start(chunks + 1, 0);
  sw::parallel_for(
      chunks,
      [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c)
          for (int64_t i = c * sc::kChunk; i < std::min(n, (c + 1) * sc::kChunk); ++i)
            start[c + 1] += keep(sc::element<uint32_t>(seed, i));
      },
      1);
  for (int64_t c = 0; c < chunks; ++c) start[c + 1] += start[c];
  const int64_t total = start[chunks];
  const Count got = sw::read(count.get());
  if (got != static_cast<Count>(total))
    return {false, "count: got " + std::to_string(got) + ", want " + std::to_string(total)};
  sc::Mismatches bad;
  sc::for_each_piece(out.get(), total, [&](const uint32_t* host, int64_t first, int64_t size) {
    const int64_t c0 = std::upper_bound(start.begin(), start.end(), first) - start.begin() - 1;
    const int64_t c1 = std::min<int64_t>(
        chunks, std::lower_bound(start.begin(), start.end(), first + size) - start.begin());
    sw::parallel_for(
        c1 - c0,
        [&](int64_t b, int64_t e) {
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
        },
        1);
  });
  if (total < n && sw::read(out.get() + total) != sw::read(out.get() + n))
    bad.add(total, "out[" + std::to_string(total) + "] was written: past the count");
  sc::Verdict v = bad.verdict();
  if (v.ok) v = sc::tickets_drawn(state.get(), tickets);
  if (v.ok && sw::device_digest(in.get(), in.bytes()) != digest)
    v = {false, "input changed: the step wrote into x"};
  return v;
}

// A row's data as bench::measure and check_once see it: the compaction at one ratio.
struct CompactRow {
  const CompactData& d;
  KeepBelow keep;
  void poison() const { d.poison(); }
  sc::Verdict check() const { return d.check(keep); }
  bool reseed(uint64_t s) const {
    d.reseed(s);
    return true;
  }
  uint64_t seed() const { return d.seed; }
  // What check() reads: out (with out[n], never written), the count, the ticket counter
  // state[0] and the tickets the launcher said it draws.
  std::vector<sw::bench::Buffer> outputs() const {
    return {{d.out.get(), static_cast<int64_t>(d.out.bytes())},
            {d.count.get(), sizeof(Count)},
            {d.state.get(), sizeof(Count)},
            {&d.tickets, sizeof d.tickets}};
  }
};

// cub::DeviceSelect::If with the same predicate, temporary storage allocated here.
// operator() is the row's launcher: it calls CUB.
class CubSelect {
 public:
  CubSelect(const CompactData& d, KeepBelow keep) : d_(d), keep_(keep) {
    CUDA_CHECK(
        cub::DeviceSelect::If(nullptr, bytes_, d.in.get(), d.out.get(), d.count.get(), d.n, keep));
    temp_.allocate(static_cast<int64_t>(std::max<size_t>(bytes_, 1)));
  }
  void operator()(cudaStream_t stream = nullptr) const {
    size_t bytes = bytes_;
    CUDA_CHECK(cub::DeviceSelect::If(temp_.get(), bytes, d_.in.get(), d_.out.get(), d_.count.get(),
                                     d_.n, keep_, stream));
  }

 private:
  const CompactData& d_;
  KeepBelow keep_;
  size_t bytes_ = 0;
  sw::DeviceBuffer<unsigned char> temp_;
};

// --- the problem -------------------------------------------------------------------------------

using CompactStep = sw::bench::Step<void (*)(const CompactCall&)>;  // launchers hold the <<<>>>

constexpr double kKeeps[] = {0.01, 0.5, 0.99};  // the default run's keep ratios
constexpr double kSweepKeep = 0.5;              // the ratio the tile sweep runs at
const std::vector<double> kCheckKeeps = {0.0, 0.01, 0.5, 0.99, 1.0};
constexpr double kBytesPerElement = 8 + 8.0 / 64 + 8.0 / 128;  // in, out, scratch, state
const sc::TileChoices kTiles{ch16::ScanRows::list(),
                             {32, 64, 128, 256, 512},
                             ch16::kDefaultBlock,
                             {2, 4, 8},
                             {128, 256, 512}};

std::string keep_note(double keep) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "keep %g%%", 100 * keep);
  return buf;
}

// A row after measure(): the bytes that must move (the n elements read, the kept ones
// written, the count), its keep ratio, and a step's tile.
void describe_row(sw::Result& r, const CompactData& d, double keep, const sc::Tile* t) {
  r.bytes = 4.0 * d.n + 4.0 * static_cast<double>(sw::read(d.count.get())) + sizeof(Count);
  r.note = keep_note(keep);
  if (t) r.extra.insert({{"tile_rows", t->rows}, {"block", t->block}, {"items", t->rows * kVec}});
}

struct CompactProblem {
  using Step = CompactStep;
  static constexpr const char* kName = "compact";
  static constexpr bool kExchangesOutputs = true;  // every check is verify's check_once
  int64_t n = sc::kDefaultN;
  double keep = -1;  // -1: the default run's ratios
  std::string rows, block;
  bool large = false;

  void add_options(sw::Cli& cli, const sw::bench::Program<Step>&) {
    cli.add_int("--n", &n, 1, sw::kMaxElements, "elements of the input");
    cli.add_number("--keep", &keep, 0.0, 1.0, "the fraction kept: x is kept when x < keep * 2^32");
    sc::add_tile_options(cli, &rows, &block, kTiles);
    cli.add_flag("--large", &large,
                 "with --verify-only: sizes above 2^31 and 2^32 (64-bit offsets)");
  }

  // --large applies with --verify-only alone (exit 2, before the GPU starts).
  void validate(const sw::bench::Request<Step>& asked) const {
    sc::check_large(asked.cli, asked.opt.verify_only);
  }

  // Every step on the awkward sizes (or --n, or --large's), its tile (and in the full
  // sweep up to 1000003 elements the tiny and an odd one), every keep ratio.
  void verify(const sw::bench::Session<Step>& s) const {
    const bool n_given = s.cli.was_given("--n");
    const std::vector<int64_t> sizes = large     ? sc::large_sizes()
                                       : n_given ? std::vector<int64_t>{n}
                                                 : sc::verify_sizes();
    sw::require_fits(s.gpu, large ? "--large" : "--n",
                     *std::max_element(sizes.begin(), sizes.end()), kBytesPerElement);
    const std::vector<double> keeps = keep >= 0 ? std::vector<double>{keep}
                                      : large   ? std::vector<double>{0.5}
                                                : kCheckKeeps;
    for (int64_t size : sizes) {
      const CompactData d(size, s.opt.seed);
      for (const Step& st : s.steps) {
        std::vector<sc::Tile> ts = {sc::pick_tile(rows, block, ch16::kDefaultRows, kTiles)};
        if (!large && !n_given && rows.empty() && block.empty() && size <= sc::kTinyTileMaxN)
          ts.insert(ts.end(), {{1, 32}, {2, 64}});
        for (const sc::Tile& t : ts)
          for (double k : keeps) {
            const sc::Verdict v = sw::bench::check_once(CompactRow{d, keep_below(k)}, st.launch,
                                                        d.call(keep_below(k), t));
            s.report.check(v.ok,
                           std::string(st.name) + " " + keep_note(k) +
                               " n=" + std::to_string(size) + " rows=" + std::to_string(t.rows) +
                               " block=" + std::to_string(t.block),
                           v.detail);
          }
      }
    }
  }

  // The one-pass step's tile by measurement (with every step and no tile given), then at
  // each keep ratio CUB and every step.
  void bench(const sw::bench::Session<Step>& s) const {
    sw::require_fits(s.gpu, "--n", n, kBytesPerElement);
    const CompactData d(n, s.opt.seed);
    sc::Tile tuned = sc::pick_tile(rows, block, ch16::kDefaultRows, kTiles);
    const Step& sweep = s.program.steps.back();
    double best = -1;
    if (s.variant == "all" && rows.empty() && block.empty())  // the one-pass step's tile
      for (int r : kTiles.sweep_rows)
        for (int b : kTiles.sweep_blocks) {
          const sc::Tile t{r, b};
          const sw::bench::Row row{std::string(sweep.name) + "-sweep", d.n, 0.0, 1, false, "sweep"};
          sw::Result res = sw::bench::measure(sc::sweep_options(s.opt), row,
                                              CompactRow{d, keep_below(kSweepKeep)}, sweep.launch,
                                              d.call(keep_below(kSweepKeep), t));
          describe_row(res, d, kSweepKeep, &t);
          s.report.add(res);
          const double g = sw::gbps(res.bytes, res.timing.ms_median);
          if (res.ok && g > best) best = g, tuned = t;
        }
    for (double k : keep >= 0 ? std::vector<double>{keep}
                              : std::vector<double>(std::begin(kKeeps), std::end(kKeeps))) {
      {
        const CubSelect cub(d, keep_below(k));
        const sw::bench::Row row{"cub", d.n, 0.0, 1, false, "vendor"};
        sw::Result res = sw::bench::measure(s.opt, row, CompactRow{d, keep_below(k)}, cub);
        describe_row(res, d, k, nullptr);
        s.report.add(res);
      }
      for (const Step& st : s.steps) {
        const sw::bench::Row row{st.name, d.n, 0.0, 1, false, "step"};
        sw::Result res = sw::bench::measure(s.opt, row, CompactRow{d, keep_below(k)}, st.launch,
                                            d.call(keep_below(k), tuned));
        describe_row(res, d, k, &tuned);
        s.report.add(res);
      }
    }
  }
};

}  // namespace
