// The scan problem (chapters 16-18): what the three chapters share, and chapter 16's
// problem around its step table (sw::bench::run, common/bench/program.h, runs it).
//
//   element<T>(seed, i), fill<T>       the inputs: any 32-bit integer, or chapter 06's floats
//   for_each_piece(d, n, body)         a device array back on the host, a piece at a time
//   check_scan<T>(...)                 a scan against its reference, computed on all cores
//                                      straight from the generator (no host copy of x)
//   ScanData, ScanRow                  a scan's buffers, and a row's data for bench::measure
//   ScanProblem                        chapter 16: --verify-only (every step, type, mode and
//                                      tile; --planted: its status check, broken), or CUB, the
//                                      CPU and every step at 2^28, the tile sweep, 2^30, 2^20
//                                      and the census
//
// A scan launcher gets a ScanCall (scan_call.h: the input, the output, the scratch) and
// writes into *tickets how many tickets its kernels must draw from the counter at
// state[0] (poison() zeroes it: a step whose kernels number their tiles by blockIdx.x
// writes nothing); the problem zeroes nothing on the device itself and checks, after
// every run, that exactly that many were drawn. bench::measure calls the launcher
// itself, which holds the <<<>>>s (CUB's row: CubScan's operator() calls the library).
//
// CUDA only (it includes CUB): include it from .cu files.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "common/bench/program.h"
#include "common/bench/protocol.h"
#include "common/bench/step.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/cub_calls.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/parallel.h"
#include "common/problems/scan_call.h"
#include "common/report.h"
#include "common/timing.h"
#include "common/verify.h"

namespace sw::scan {

constexpr int64_t kDefaultN = int64_t{1} << 28;  // 1 GiB of 4-byte elements, far beyond any L2
constexpr int64_t kBigN = int64_t{1} << 30;      // the goals' second size
constexpr int64_t kLatencyN = int64_t{1} << 20;  // where launches, not bytes, dominate
constexpr int kSlowReps = 3;                     // the chained scan runs at tens of GB/s
constexpr int kSweepReps = 10;                   // a sweep's points: fewer timed runs
constexpr int kBackToBackCalls = 10;             // the 2^20 rows: calls per timed run, back to back
constexpr int kSlowWarmup = 1;
constexpr int kCensusRuns = 20;  // runs compared digest by digest (f32)
constexpr int kSlowCensusRuns = 5;
constexpr int64_t kMinTile = 32;  // the smallest tile: --block 32 --tile-rows 1, one element a lane
constexpr int64_t kChunk = int64_t{1} << 16;  // elements per work item of the host checks
constexpr int64_t kPiece = int64_t{1} << 23;  // elements copied back to the host at a time
static_assert(kPiece % kChunk == 0, "pieces hold whole chunks");
constexpr int64_t kTinyTileMaxN = 1000003;   // the full sweep's extra tiles stop at this size
constexpr int kCpuWarmup = 1, kCpuReps = 2;  // chapter 01's: a CPU run takes up to a second
constexpr double kFitFraction = 0.95;        // of the free memory, as require_fits allows
const char* const kLatencyProblem = "scan-latency";

// Tiny, around warp and tile sizes, odd, a prime near 1e6, and just past 2^24 (with
// a 4096-element tile its last tile is partial).
inline std::vector<int64_t> verify_sizes() {
  return {1,    2,    31,   32,   33,    127,     129,
          1000, 4095, 4096, 4097, 65537, 1000003, (int64_t{1} << 24) + 1};
}
// --verify-only --large: past 2^31 (a signed 32-bit index wraps) and past 2^32.
inline std::vector<int64_t> large_sizes() {
  return {(int64_t{1} << 31) + 17, (int64_t{1} << 32) + 5};
}

// --- the inputs -----------------------------------------------------------------------------

// Element i of the input: any 32-bit integer (u32: the sums wrap, so the check is
// exact) or chapter 06's floats (mixed signs and magnitudes, never zero).
template <class T>
SW_HD inline T element(uint64_t seed, uint64_t i) {
  if constexpr (std::is_same_v<T, float>)
    return float_value(seed, i);
  else
    return static_cast<uint32_t>(random_bits(seed, i) >> 32);  // int_value's bits
}
template <class T>
void fill(T* d, int64_t n, uint64_t seed) {
  if constexpr (std::is_same_v<T, float>)
    fill_floats(d, n, seed);
  else
    fill_ints(reinterpret_cast<int32_t*>(d), n, seed);
}
template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "f32" : "u32";
}

// Calls body(host, first, count) for consecutive pieces of d[0, n), each copied into
// a pinned staging buffer (kept for the process). Pieces hold whole kChunks.
template <class T, class Body>
void for_each_piece(const T* d, int64_t n, Body&& body) {
  static PinnedBuffer<unsigned long long> stage(kPiece);  // 8 bytes per element at most
  static_assert(sizeof(T) <= sizeof(unsigned long long),
                "the staging buffer holds 8-byte elements");
  for (int64_t first = 0; first < n; first += kPiece) {
    const int64_t count = std::min(kPiece, n - first);
    CUDA_CHECK(cudaMemcpy(stage.get(), d + first, static_cast<size_t>(count) * sizeof(T),
                          cudaMemcpyDeviceToHost));
    body(reinterpret_cast<const T*>(stage.get()), first, count);
  }
}

// --- rows and options -------------------------------------------------------------------------

// One check's outcome (common/bench/protocol.h): its detail names the first wrong
// element ("out[7]: got 3, want 4"); f32 scans give the largest |got - want| / sum|x|.
using bench::Verdict;

// The reps of a slow step, and of a sweep's points.
inline CommonOptions slow_options(CommonOptions opt) {
  opt.reps = std::min(opt.reps, kSlowReps);
  opt.warmup = std::min(opt.warmup, kSlowWarmup);
  return opt;
}
inline CommonOptions sweep_options(CommonOptions opt) {
  opt.reps = std::min(opt.reps, kSweepReps);
  return opt;
}

// --large applies to --verify-only alone, and sets the sizes itself: not beside --n (exit 2,
// before the GPU starts). The scan track's problems call it from their validate().
inline void check_large(const Cli& cli, bool verify_only) {
  if (cli.was_given("--large") && !verify_only)
    cli.reject("--large: applies with --verify-only only");
  if (cli.was_given("--large") && cli.was_given("--n"))
    cli.reject("--n: not with --large, which checks its own sizes (past 2^31)");
}

// Tracks the first few mismatches of a check that runs on many host threads.
class Mismatches {
 public:
  void add(int64_t i, const std::string& what) {
    std::lock_guard<std::mutex> lock(m_);
    ++count_;
    if (first_ < 0 || i < first_) first_ = i, what_ = what;
  }
  void error(double e) {
    std::lock_guard<std::mutex> lock(m_);
    worst_ = std::max(worst_, e);
  }
  Verdict verdict() const {
    Verdict v{count_ == 0, what_, worst_ > 0 ? worst_ : NAN};
    if (count_ > 1) v.detail += " (" + std::to_string(count_) + " elements wrong)";
    return v;
  }

 private:
  std::mutex m_;
  int64_t count_ = 0, first_ = -1;
  std::string what_;
  double worst_ = 0;
};

// "out[7]: got 3, want 4" for integers, with 9 digits for floats.
template <class T>
std::string got_want(const char* what, int64_t i, T got, double want) {
  char buf[160];
  if constexpr (std::is_same_v<T, float>)
    std::snprintf(buf, sizeof buf, "%s[%lld]: got %.9g, want %.9g", what, static_cast<long long>(i),
                  got, want);
  else
    std::snprintf(buf, sizeof buf, "%s[%lld]: got %llu, want %.0f", what, static_cast<long long>(i),
                  static_cast<unsigned long long>(got), want);
  return buf;
}

// A single-pass kernel numbers its tiles by tickets from the counter at state[0],
// zeroed by its launcher: after a run the counter must hold one ticket per tile.
inline Verdict tickets_drawn(const unsigned long long* state, int64_t tickets) {
  const unsigned long long drawn = tickets > 0 ? read(state) : 0;
  if (drawn == static_cast<unsigned long long>(tickets)) return {};
  return {false, "tickets: " + std::to_string(drawn) + " drawn from the counter, " +
                     std::to_string(tickets) +
                     " tiles: every tile must take its index from the ticket counter"};
}

// --- checking a scan ----------------------------------------------------------------------------

// A scan of element<T>(seed, ...) over [0, n) against its reference, piece by piece
// (pieces(body) calls body(host, first, count), as for_each_piece does). The reference
// runs on all cores: chunk sums, their prefix, then each chunk again from its prefix.
// u32: exact, wrapping modulo 2^32. f32: the bound of a float sum of depth
// min(depth, terms) over the terms the element adds (float_sum_bound; the reference
// is in double); an exclusive out[0] must be exactly 0.
template <class T, class Pieces>
Verdict check_scan_pieces(Pieces&& pieces, int64_t n, uint64_t seed, bool inclusive,
                          int64_t depth) {
  using Sum = std::conditional_t<std::is_same_v<T, float>, double, uint32_t>;
  const int64_t chunks = ceil_div(n, kChunk);
  std::vector<Sum> start(chunks + 1, Sum{});
  std::vector<double> abs_start(chunks + 1, 0.0);
  parallel_for(
      chunks,
      [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          Sum s{};
          double a = 0;
          for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
            const T x = element<T>(seed, i);
            s += x;
            a += std::fabs(static_cast<double>(x));
          }
          start[c + 1] = s;
          abs_start[c + 1] = a;
        }
      },
      /*grain=*/1);
  for (int64_t c = 0; c < chunks; ++c) start[c + 1] += start[c], abs_start[c + 1] += abs_start[c];
  Mismatches bad;
  pieces([&](const T* got, int64_t first, int64_t count) {
    parallel_for(
        ceil_div(count, kChunk),
        [&](int64_t b, int64_t e) {
          for (int64_t c = first / kChunk + b; c < first / kChunk + e; ++c) {
            Sum run = start[c];
            double abs = abs_start[c],
                   worst = 0;  // the chunk's largest relative error, reported once
            for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
              const T x = element<T>(seed, i), g = got[i - first];
              const Sum next = run + x;
              const Sum want = inclusive ? next : run;
              const double abs_want = inclusive ? abs + std::fabs(static_cast<double>(x)) : abs;
              if constexpr (std::is_same_v<T, float>) {
                const int64_t terms = inclusive ? i + 1 : i;
                const double err = std::fabs(static_cast<double>(g) - want);
                if (!std::isfinite(g) ||
                    err > float_sum_bound(std::min(depth, terms), abs_want, terms))
                  bad.add(i, got_want("out", i, g, want));
                else if (abs_want > 0)
                  worst = std::max(worst, err / abs_want);
              } else if (g != want) {
                bad.add(i, got_want("out", i, g, static_cast<double>(want)));
              }
              run = next;
              abs += std::fabs(static_cast<double>(x));
            }
            bad.error(worst);  // once a chunk: a lock per element serialised the host threads
          }
        },
        /*grain=*/1);
  });
  return bad.verdict();
}

template <class T>
Verdict check_scan(const T* d_out, int64_t n, uint64_t seed, bool inclusive, int64_t depth) {
  return check_scan_pieces<T>([&](auto&& body) { for_each_piece(d_out, n, body); }, n, seed,
                              inclusive, depth);
}

// --- chapter 16: its step table -------------------------------------------------------------

// What a launcher gets, ScanCall, and its type, ScanLaunch: common/problems/scan_call.h.

enum : unsigned {
  kSlow = 1,     // tens of GB/s: timed with kSlowReps, its census with kSlowCensusRuns
  kTile = 2,     // a single-pass tile: --tile-rows and --block set it (and the checks vary them)
  kVecTile = 4,  // with kTile: 16-byte loads (a lane holds 16 / sizeof(T) elements a row)
  kTuned = 8,    // the step whose tile the default run sweeps, then uses the fastest
  kGoal = 16,    // measured also exclusive, at 2^30 and at 2^20 (the goals' rows)
};

// A step's launchers, one per element type: the step's `launch`.
struct Launchers {
  ScanLaunch<uint32_t> u32;
  ScanLaunch<float> f32;
};
// What a step needs beside them: the float bound (the additions an element passes
// through), and for kTile steps its rows per warp when --tile-rows is not given and
// its threads per block when --block is not given (0: the chapter's block).
struct Bound {
  int64_t (*depth)(int64_t n, int rows, int block);
  int rows = 0;
  int block = 0;
};
using Step = bench::Step<Launchers, Bound>;  // traits: kSlow, kTile, ...

template <class T>
ScanLaunch<T> launcher(const Step& s) {
  if constexpr (std::is_same_v<T, float>)
    return s.launch.f32;
  else
    return s.launch.u32;
}

// Where a step runs: rows and block of its tile (ignored by the other steps).
struct Tile {
  int rows = 0, block = 0;
};

// The chapter's tiles: what its kernels are compiled for and what the sweep tries.
struct TileChoices {
  std::vector<int> rows, blocks;  // --tile-rows and --block accept these
  int block = 256;                // the block of every tile step without --block
  std::vector<int> sweep_rows, sweep_blocks;
};

// --tile-rows and --block, with the chapter's choices; each stays "" unless given.
inline void add_tile_options(Cli& cli, std::string* rows, std::string* block,
                             const TileChoices& c) {
  std::vector<std::string> r, b;
  for (int v : c.rows) r.push_back(std::to_string(v));
  for (int v : c.blocks) b.push_back(std::to_string(v));
  cli.add_choice("--tile-rows", rows, r, "the single-pass steps' tile: rows of 32 lanes per warp");
  cli.add_choice("--block", block, b, "the single-pass steps' tile: threads per block");
}

// A step's tile: --tile-rows and --block where given, else its own rows and its own
// block (0: the chapter's).
inline Tile pick_tile(const std::string& rows, const std::string& block, int own_rows,
                      const TileChoices& c, int own_block = 0) {
  const int own = own_block ? own_block : c.block;
  return {rows.empty() ? own_rows : std::stoi(rows), block.empty() ? own : std::stoi(block)};
}

// The input on the device, the output and the scratch of ScanCall.
template <class T>
struct ScanData {
  int64_t n = 0;
  mutable uint64_t seed = 0;    // of the input's contents (reseed changes them)
  mutable uint64_t digest = 0;  // of the input as written
  mutable int64_t tickets = 0;  // what the last launcher said its kernels must draw
  DeviceBuffer<T> in, out, partials;
  DeviceBuffer<unsigned long long> state;

  ScanData(int64_t n, uint64_t s) : n(n), seed(s) {
    in.allocate(n);
    out.allocate(n);
    partials.allocate(ceil_div(n, 32) + 64);
    state.allocate(ceil_div(n, kMinTile) + 1);
    reseed(s);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  // New contents from another seed (--graded-timing); the checks follow the seed.
  void reseed(uint64_t s) const {
    seed = s;
    fill(in.get(), n, seed);
    digest = device_digest(in.get(), in.bytes());
  }
  ScanCall<T> call(bool inclusive, Tile t, cudaStream_t stream = nullptr) const {
    return {in.get(), out.get(),      n,           inclusive, t.rows,
            t.block,  partials.get(), state.get(), &tickets,  stream};
  }
  void poison() const {
    tickets = 0;
    sw::poison(out.get(), out.bytes());
    sw::poison(partials.get(), partials.bytes());
    sw::poison(state.get(), state.bytes());  // the launcher must zero what it uses
  }
  // The output against the reference, the tickets drawn, and the input unchanged.
  Verdict check(bool inclusive, int64_t depth) const {
    Verdict v = check_scan(out.get(), n, seed, inclusive, depth);
    if (v.ok) v = tickets_drawn(state.get(), tickets);
    if (v.ok && device_digest(in.get(), in.bytes()) != digest)
      v = {false, "input changed: the step wrote into x"};
    return v;
  }
};

// A row's data as bench::measure and check_once see it: the scan, its mode and bound.
template <class T>
struct ScanRow {
  const ScanData<T>& d;
  bool inclusive;
  int64_t depth;
  void poison() const { d.poison(); }
  Verdict check() const { return d.check(inclusive, depth); }
  bool reseed(uint64_t s) const {
    d.reseed(s);
    return true;
  }
  uint64_t seed() const { return d.seed; }
  // The scan, the ticket counter state[0] and the tickets the launcher said it draws.
  std::vector<bench::Buffer> outputs() const {
    return {{d.out.get(), static_cast<int64_t>(d.out.bytes())},
            {d.state.get(), sizeof(unsigned long long)},
            {&d.tickets, sizeof d.tickets}};
  }
};

// Bytes every scan must move: the input read once, the output written once.
template <class T>
double scan_bytes(int64_t n) {
  return 2.0 * sizeof(T) * static_cast<double>(n);
}

// Device memory a scan needs per element: ScanData's buffers (CUB's temporary
// storage is far smaller than the slack of require_fits).
template <class T>
constexpr double kScanBytesPerElement = 2.0 * sizeof(T) + sizeof(T) / 32.0 + 8.0 / kMinTile;

// "u32 inclusive": the rows' note (the library's row has the same one).
template <class T>
std::string scan_note(bool inclusive) {
  return std::string(type_name<T>()) + (inclusive ? " inclusive" : " exclusive");
}

// " u32 inclusive n=1000 rows=4 block=256": what a PASS/FAIL line names.
template <class T>
std::string describe(const Step& s, int64_t n, bool inclusive, Tile t) {
  std::string d = " " + scan_note<T>(inclusive) + " n=" + std::to_string(n);
  if (s.traits & kTile)
    d += " rows=" + std::to_string(t.rows) + " block=" + std::to_string(t.block);
  return d;
}

// A step's row after measure(): its note, and rows, block and items where it has a tile.
template <class T>
void describe_row(Result& r, const Step& s, bool inclusive, Tile t) {
  r.note = scan_note<T>(inclusive);
  if (!(s.traits & kTile)) return;
  r.extra["tile_rows"] = t.rows;
  r.extra["block"] = t.block;
  r.extra["items"] = t.rows * ((s.traits & kVecTile) ? 16 / static_cast<int>(sizeof(T)) : 1);
}

// cub::DeviceScan::InclusiveSum / ExclusiveSum on a ScanData (sw::cub_scan_sum, compiled once
// in common/cub_calls.cu), its temporary storage allocated here, outside any timing.
// operator() is the row's launcher: it calls CUB.
template <class T>
class CubScan {
 public:
  CubScan(const ScanData<T>& d, bool inclusive) : d_(d), inclusive_(inclusive) {
    // no storage yet: CUB only writes the bytes it needs into bytes_
    CUDA_CHECK(cub_scan_sum(nullptr, bytes_, d.in.get(), d.out.get(), d.n, inclusive));
    temp_.allocate(static_cast<int64_t>(std::max<size_t>(bytes_, 1)));
  }
  void operator()(cudaStream_t stream = nullptr) const {
    size_t bytes = bytes_;
    CUDA_CHECK(
        cub_scan_sum(temp_.get(), bytes, d_.in.get(), d_.out.get(), d_.n, inclusive_, stream));
  }
  // CUB does not document its order of additions; the float bound assumes a
  // look-back over tiles of at least 1024 elements.
  static int64_t depth(int64_t n) { return 2 * ceil_div(n, 1024) + 128; }

 private:
  const ScanData<T>& d_;
  bool inclusive_;
  size_t bytes_ = 0;
  DeviceBuffer<unsigned char> temp_;
};

// The CPU baselines a chapter brings (chapter 01's style): one core ("lesson") and
// every core ("cpu"); each writes the scan of `in` to `out` on the host.
template <class T>
struct HostScans {
  void (*one_core)(const T* in, T* out, int64_t n, bool inclusive);
  void (*all_cores)(const T* in, T* out, int64_t n, bool inclusive);
};

// A CPU baseline on the host copy of the input: its row, checked like the GPU's.
template <class T, class Scan>
Result measure_host(const CommonOptions& opt, const char* name, const char* role, Scan scan,
                    const T* in, T* out, int64_t n, uint64_t seed, int64_t threads) {
  const Timing t =
      time_cpu(kCpuWarmup, std::min(opt.reps, kCpuReps), [&] { scan(in, out, n, true); });
  const Verdict v =
      check_scan_pieces<T>([&](auto&& body) { body(out, int64_t{0}, n); }, n, seed, true, n);
  Result r{name, n, scan_bytes<T>(n), t, v.ok, role};
  r.note = scan_note<T>(true);
  r.extra["threads"] = static_cast<double>(threads);
  return r;
}

// Adds the census to an f32 row: `distinct` different outputs in `runs` runs.
inline void add_census(Report& report, Result& r, int distinct, int runs) {
  r.extra["distinct_results"] = distinct;
  r.extra["census_runs"] = runs;
  report.note(r.variant + " f32: " + std::to_string(distinct) + " distinct output(s) in " +
              std::to_string(runs) + " runs");
}

// --- chapter 16's problem ----------------------------------------------------------------------

// One part of the default run: CUB's row, then the steps' (all, or the kGoal ones), on
// one size, inclusive or exclusive, each call alone or kBackToBackCalls in a row between
// one pair of events (chapter 06's back-to-back mode: problem "scan-latency").
struct Part {
  int64_t n;
  bool inclusive, all_steps, back_to_back;
};

struct ScanProblem {
  using Step = scan::Step;
  static constexpr const char* kName = "scan";
  // Every check is verify_type's check_once, or extra_checks' (chapter 16: the status
  // protocol's, a check_once too).
  static constexpr bool kExchangesOutputs = true;

  TileChoices tiles;
  HostScans<uint32_t> cpu_u32;
  HostScans<float> cpu_f32;
  // After --verify-only's checks (chapter 16: the status protocol); `plant` is "none", or
  // the name of a planted broken part of that check (--planted), which must make it fail.
  void (*extra_checks)(Report&, const std::string& plant) = nullptr;
  std::vector<std::string> plants;  // what --planted offers beside "none"
  int64_t n = kDefaultN;
  std::string type = "all";
  std::string rows, block;  // "": each step's own (and the sweep's best for the tuned step)
  bool large = false;
  std::string plant = "none";  // --planted

  void add_options(Cli& cli, const bench::Program<Step>&) {
    cli.add_int("--n", &n, 1, kMaxElements, "elements to scan");
    cli.add_choice("--type", &type, {"all", "u32", "f32"}, "the element type(s)");
    add_tile_options(cli, &rows, &block, tiles);
    cli.add_flag("--large", &large,
                 "with --verify-only: sizes above 2^31 and 2^32 (64-bit indexing)");
    if (plants.empty()) return;
    std::vector<std::string> offered = {"none"};
    offered.insert(offered.end(), plants.begin(), plants.end());
    cli.add_choice("--planted", &plant, offered,
                   "with --verify-only: only the extra check, with a planted broken part (the "
                   "check's own test; it must fail)");
  }

  // Every step, type, mode and tile on the awkward sizes, or on --n, or on --large's;
  // then the chapter's extra checks.
  void verify(const bench::Session<Step>& s) const {
    if (plant != "none") return extra_checks(s.report, plant);
    const bool n_given = s.cli.was_given("--n");
    const std::vector<int64_t> sizes = large     ? large_sizes()
                                       : n_given ? std::vector<int64_t>{n}
                                                 : verify_sizes();
    require_fits(s.gpu, large ? "--large" : "--n", *std::max_element(sizes.begin(), sizes.end()),
                 kScanBytesPerElement<float>);
    for (int64_t size : sizes) {
      if (type != "f32") verify_type<uint32_t>(s, size, !large && !n_given);
      if (type != "u32") verify_type<float>(s, size, !large && !n_given);
    }
    if (!large && extra_checks) extra_checks(s.report, "none");
  }

  // The default run of each type.
  void bench(const bench::Session<Step>& s) const {
    require_fits(s.gpu, "--n", n, kScanBytesPerElement<float>);
    if (type != "f32") bench_type<uint32_t>(s, cpu_u32);
    if (type != "u32") bench_type<float>(s, cpu_f32);
  }

  // --tile-rows and --block need a chosen step with a tile; --large, --verify-only;
  // --planted, --verify-only without --large (exit 2, before the GPU starts).
  void validate(const bench::Request<Step>& asked) const {
    check_large(asked.cli, asked.opt.verify_only);
    if (asked.cli.was_given("--planted") && (!asked.opt.verify_only || large))
      asked.cli.reject("--planted: applies with --verify-only only, without --large");
    bool tile = false;
    for (const Step& st : asked.steps) tile = tile || (st.traits & kTile);
    for (const char* option : {"--tile-rows", "--block"})
      if (asked.cli.was_given(option) && !tile)
        asked.cli.reject(std::string(option) + ": the step " + asked.variant + " has no tile");
  }

 private:
  // A step's tile: its own (--tile-rows / --block where given), or for the tuned step
  // the sweep's best.
  Tile tile_of(const Step& st, Tile tuned) const {
    if (!(st.traits & kTile)) return Tile{};
    if ((st.traits & kTuned) && rows.empty() && block.empty() && tuned.rows) return tuned;
    return pick_tile(rows, block, st.more.rows, tiles, st.more.block);
  }

  // The tiles a step is checked on: its own, and in the full sweep up to 1000003 elements
  // also the tiny tile, whose many tiles work the look-back hardest, and an odd one.
  std::vector<Tile> check_tiles(const Step& st, int64_t size, bool full_sweep) const {
    if (!(st.traits & kTile)) return {Tile{}};
    const Tile own = pick_tile(rows, block, st.more.rows, tiles, st.more.block);
    if (!full_sweep || !rows.empty() || !block.empty() || size > kTinyTileMaxN) return {own};
    return {own, Tile{1, 32}, Tile{2, 64}};
  }

  // Every chosen step on one size of one type, inclusive and exclusive: a PASS/FAIL line
  // each; with --large, u32 inclusive and f32 exclusive only (each check reads gigabytes back).
  template <class T>
  void verify_type(const bench::Session<Step>& s, int64_t size, bool full_sweep) const {
    const ScanData<T> d(size, s.opt.seed);
    for (const Step& st : s.steps)
      for (const Tile& t : check_tiles(st, size, full_sweep))
        for (bool inclusive : {true, false}) {
          if (large && inclusive != std::is_same_v<T, uint32_t>) continue;
          const Verdict v =
              bench::check_once(ScanRow<T>{d, inclusive, st.more.depth(size, t.rows, t.block)},
                                launcher<T>(st), d.call(inclusive, t));
          s.report.check(v.ok, st.name + describe<T>(st, size, inclusive, t), v.detail);
        }
  }

  // The default run of one type, part by part: at --n CUB (f32: with its census), the CPU
  // baselines, the sweep of the tuned step, every step (f32: with its census), then CUB
  // and the kGoal steps exclusive; then, with every step, CUB and the kGoal steps at 2^30
  // and at 2^20 (each call alone, and back to back). Every row's measure() is called here.
  template <class T>
  void bench_type(const bench::Session<Step>& s, HostScans<T> cpu) const {
    const CommonOptions& opt = s.opt;
    const bool every = s.variant == "all", f32 = std::is_same_v<T, float>;
    std::vector<Part> parts = {{n, true, true, false}, {n, false, false, false}};
    if (every)
      parts.insert(parts.end(), {{kBigN, true, false, false},
                                 {kLatencyN, true, false, false},
                                 {kLatencyN, true, false, true}});
    // How many different outputs (digests) `runs` runs of a launcher give: 1 for a
    // fixed order of additions.
    const auto census = [](const ScanData<T>& d, int runs, auto&& launch, const auto&... args) {
      std::set<uint64_t> seen;
      for (int k = 0; k < runs; ++k) {
        d.poison();
        launch(args...);
        CUDA_CHECK(cudaDeviceSynchronize());
        seen.insert(device_digest(d.out.get(), d.out.bytes()));
      }
      return static_cast<int>(seen.size());
    };
    Tile tuned{};
    std::unique_ptr<const ScanData<T>> d;
    for (const Part& p : parts) {
      const bool first = &p == &parts.front();
      if (p.n == kBigN && !fits_message("n", kBigN, kScanBytesPerElement<T>, 0,
                                        s.gpu.info.free_bytes * kFitFraction)
                               .empty()) {
        const double need = kScanBytesPerElement<T> * static_cast<double>(kBigN);
        s.report.note("no 2^30 rows: they need " + std::to_string(need / 1e9) +
                      " GB of device memory");
        continue;
      }
      if (!d || d->n != p.n) {
        d.reset();  // the last part's buffers go first
        d = std::make_unique<const ScanData<T>>(p.n, opt.seed);
      }
      const int calls = p.back_to_back ? kBackToBackCalls : 1;
      const auto add = [&](Result& r) {
        if (p.back_to_back) {
          r.problem = kLatencyProblem;
          r.note += " back-to-back";
        }
        s.report.add(r);
      };
      {
        const CubScan<T> cub(*d, p.inclusive);
        const bench::Row row{"cub", p.n, scan_bytes<T>(p.n), calls, false, "vendor"};
        Result r =
            bench::measure(opt, row, ScanRow<T>{*d, p.inclusive, CubScan<T>::depth(p.n)}, cub);
        r.note = scan_note<T>(p.inclusive);
        if (first && f32) add_census(s.report, r, census(*d, kCensusRuns, cub), kCensusRuns);
        add(r);
      }
      if (first && every) {  // the CPU baselines on a host copy of the input, then the sweep
        std::vector<T> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
        parallel_for(n, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) in[i] = element<T>(opt.seed, i);
        });
        s.report.add(measure_host<T>(opt, "cpu-1core", "lesson", cpu.one_core, in.data(),
                                     out.data(), n, opt.seed, 1));
        s.report.add(measure_host<T>(opt, "cpu-all-cores", "cpu", cpu.all_cores, in.data(),
                                     out.data(), n, opt.seed, host_threads()));
        double best = -1;
        for (const Step& st : s.steps) {
          if (!(st.traits & kTuned) || !rows.empty() || !block.empty()) continue;
          for (int sweep_rows : tiles.sweep_rows)
            for (int sweep_block : tiles.sweep_blocks) {
              const Tile t{sweep_rows, sweep_block};
              const bench::Row row{
                  std::string(st.name) + "-sweep", n, scan_bytes<T>(n), 1, false, "sweep"};
              Result r = bench::measure(sweep_options(opt), row,
                                        ScanRow<T>{*d, true, st.more.depth(n, t.rows, t.block)},
                                        launcher<T>(st), d->call(true, t));
              describe_row<T>(r, st, true, t);
              s.report.add(r);
              const double g = gbps(r.bytes, r.timing.ms_median);
              if (r.ok && g > best) best = g, tuned = t;
            }
        }
      }
      for (const Step& st : s.steps) {
        if (!p.all_steps && !(st.traits & kGoal)) continue;
        const Tile t = tile_of(st, tuned);
        const bench::Row row{st.name, p.n, scan_bytes<T>(p.n), calls};
        Result r = bench::measure(st.traits & kSlow ? slow_options(opt) : opt, row,
                                  ScanRow<T>{*d, p.inclusive, st.more.depth(p.n, t.rows, t.block)},
                                  launcher<T>(st), d->call(p.inclusive, t));
        describe_row<T>(r, st, p.inclusive, t);
        if (first && f32) {
          const int runs = st.traits & kSlow ? kSlowCensusRuns : kCensusRuns;
          add_census(s.report, r, census(*d, runs, launcher<T>(st), d->call(true, t)), runs);
        }
        add(r);
      }
    }
  }
};

}  // namespace sw::scan
