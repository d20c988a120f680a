// The transpose track's shared harness (chapters 09-11).
//
// A transpose reads `in` (rows x cols, row-major) and writes `out` (cols x rows,
// row-major): out[c * rows + r] = in[r * cols + c]. Each chapter writes its kernels,
// each with a plain launcher under it that takes the Args of one transpose, lists
// them as Steps and hands them to this harness, which owns what would otherwise be
// repeated three times:
//
//   void launch_shared_tile(const sw::transpose::Args<float>& a);  // grid, block, <<<>>>
//   sw::transpose::Options t;                       // --rows, --cols (and --large)
//   sw::transpose::add_options(cli, &t, /*with_large=*/false);
//   ...
//   const sw::Blas blas;                            // its handle reaches the cuBLAS row in Args
//   std::vector<sw::transpose::Step<float>> table = {
//       sw::transpose::copy_step<float>(),    // role "ceiling"
//       sw::transpose::vendor_step<float>(),  // cublasSgeam_64, role "vendor"
//       {"shared-tile", "step", launch_shared_tile}};  // the chapter's kernels
//   if (opt.verify_only)
//     sw::transpose::verify(report, blas, table, sw::transpose::verify_shapes(cli, t), opt.seed);
//   else
//     sw::transpose::benchmark(report, blas, opt, table, {t.rows, t.cols}, opt.seed);
//
// Every timed row goes through the one protocol, sw::bench::measure
// (common/bench/protocol.h), and every --verify-only check through its first half,
// sw::bench::check_once. The timed call runs step.launch(args) (kCacheLaunches times
// back to back for the cache-resident rows), and the launcher holds the <<<>>>:
//   time_gpu -> benchmark()'s `run` -> step.launch(args), e.g. launch_tiles<...> -> <<<>>>
// run_float_chapter() below is that whole main() for a chapter of float kernels.
// Checks are exact (bit for bit) against the input copied back from the GPU,
// outputs are poisoned (NaN) before every checked run, and every shape of the
// sweep is run in both layouts, rows x cols and cols x rows.
//
// Any shape that fits in device memory: a kernel's grid has one block per tile
// along x (up to 2^31 - 1 tiles) and at most 65535 along y; beyond that a
// launcher starts one grid per band of 65535 tiles along y (see Bands). A loop
// over tiles inside the kernels would do the same, but it costs registers: the
// compiler keeps every tile's addresses live across it (tile64: 142 instead of 80).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "common/bench/protocol.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/cublas_check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/parallel.h"
#include "common/report.h"

namespace sw::transpose {

constexpr int64_t kDefaultSide = 16384;       // 16384^2 floats: 1 GiB each way, beyond L2
constexpr int64_t kCacheResidentSide = 2048;  // 2048^2 floats: 16 MiB each way, both inside L2
constexpr int kCacheLaunches = 20;            // launches per timed run at the cache-resident size
constexpr int64_t kMaxGridX = INT_MAX;        // the hardware's limits on grid.x and grid.y
constexpr unsigned kMaxGridY = 65535;

struct Shape {
  int64_t rows = 0, cols = 0;
  int64_t count() const { return rows * cols; }
  std::string text() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

struct Options {
  int64_t rows = kDefaultSide, cols = kDefaultSide;
  bool large = false;
};

// Any side; check_size() then bounds rows x cols, and require_fits() device memory.
inline void add_options(Cli& cli, Options* t, bool with_large) {
  cli.add_int("--rows", &t->rows, 1, kMaxElements,
              "rows of the input matrix; with --verify-only, check this shape only");
  cli.add_int("--cols", &t->cols, 1, kMaxElements,
              "columns of the input matrix; with --verify-only, check this shape only");
  if (with_large)
    cli.add_flag("--large", &t->large,
                 "with --verify-only: check shapes of more than 2^31 elements instead");
}

// Exits 2 with one line when rows x cols is more than kMaxElements (each side alone
// is within it; their product could even pass int64). Call it right after parsing.
inline void check_size(const Options& t) {
  if (t.rows <= kMaxElements / t.cols) return;
  std::fprintf(
      stderr,
      "error: --rows x --cols %lld x %lld is more elements than any option accepts; valid range: "
      "1 to %lld elements\n",
      static_cast<long long>(t.rows), static_cast<long long>(t.cols),
      static_cast<long long>(kMaxElements));
  std::exit(kExitBadInput);
}

// The awkward shapes of --verify-only; each is also run transposed (cols x rows).
// 1 x 16777217 and 3 x 5000011 have more than 65535 tiles along one side: in one
// layout or the other, a launcher starts several grids.
inline std::vector<Shape> sweep_shapes() {
  return {{1, 1},       {1, 100003},   {33, 31},     {1000, 1999}, {32, 32},  {31, 1},
          {2, 3},       {63, 65},      {64, 64},     {127, 129},   {191, 65}, {4, 1021},
          {1024, 2048}, {1, 16777217}, {3, 5000011}, {65537, 33}};
}

// Shapes of more than 2^31 elements: odd sides (the scalar paths) and sides divisible
// by 4 (the vector paths), square and not, and a side past 2^31 (2^26 tiles of 32
// rows: 1025 grids of at most 65535).
inline std::vector<Shape> large_shapes() {
  return {{46341, 46341}, {32768, 65540}, {2147483649, 1}};
}

// True when the command line names a shape (--rows or --cols).
inline bool shape_given(const Cli& cli) {
  return cli.was_given("--rows") || cli.was_given("--cols");
}

// --verify-only's shapes: the sweep, or the one shape that --rows / --cols name.
inline std::vector<Shape> verify_shapes(const Cli& cli, const Options& t) {
  if (shape_given(cli)) return {{t.rows, t.cols}};
  return sweep_shapes();
}

// grid.x for `blocks` blocks, checked against its limit. Only a matrix of 2^36
// elements or more (256 GiB of floats each way) could pass it.
inline unsigned grid_x(int64_t blocks) {
  if (blocks > kMaxGridX) {
    std::fprintf(stderr, "error: %lld blocks are more than grid.x allows (%lld)\n",
                 static_cast<long long>(blocks), static_cast<long long>(kMaxGridX));
    std::exit(kExitFailed);
  }
  return static_cast<unsigned>(blocks);
}

// The bands of tile x tile tiles along a launcher's y side. grid.y holds at most
// 65535 tiles, so a longer side is cut into bands of exactly 65535 tiles, one grid
// each, the last band starting early enough to end at the side (it overlaps the one
// before it, whose elements it writes again with the same values). Iterating gives
// each band's first element along the side; the launcher offsets its pointers by
// it, so the kernels keep a plain blockIdx.y, and in a band blockIdx.y * tile +
// threadIdx.y < side always holds. One band covers any side up to 65535 tiles:
//   const sw::transpose::Bands bands(a.rows, kTile);  // y: input rows
//   const dim3 grid(sw::transpose::grid_x(sw::ceil_div(a.cols, kTile)), bands.tiles);
//   for (const int64_t r0 : bands) {  // band of rows r0..
//     kernel<<<grid, block>>>(a.in + r0 * a.cols, a.out + r0, a.rows, a.cols);
//     CHECK_LAUNCH();
//   }
class Bands {
 public:
  Bands(int64_t side, int tile)
      : tiles(static_cast<unsigned>(std::min<int64_t>(ceil_div(side, tile), kMaxGridY))),
        span_(int64_t{tiles} * tile),
        last_(std::max<int64_t>(0, side - span_)),
        end_(ceil_div(side, span_) * span_) {}
  const unsigned tiles;  // grid.y: tiles along y in one band

  class Iterator {
   public:
    Iterator(int64_t first, const Bands& b) : first_(first), b_(b) {}
    int64_t operator*() const { return std::min(first_, b_.last_); }
    Iterator& operator++() {
      first_ += b_.span_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return first_ != o.first_; }

   private:
    int64_t first_;
    const Bands& b_;
  };
  Iterator begin() const { return {0, *this}; }
  Iterator end() const { return {end_, *this}; }

 private:
  int64_t span_;  // elements along y in one band
  int64_t last_;  // the last band's first element
  int64_t end_;   // past the last band, a whole number of spans from 0
};

// --- what a launcher gets --------------------------------------------------------------

// One transpose (or, for a copy row, out = in): the buffers, the input's shape, and
// the cuBLAS handle that the vendor row launches on (the kernels' launchers ignore it).
template <class T>
struct Args {
  const T* in;
  T* out;  // cols x rows (a copy row: rows x cols)
  int64_t rows, cols;
  cublasHandle_t blas;
};

template <class T>
using Launch = void (*)(const Args<T>&);  // every launch of one whole transpose, each checked

// --- the copy ceiling: same launch shape as the chapters' first kernels -------------

constexpr int kCopyTile = 32;  // 32 x 32 threads, one element each, one 32 x 32 tile per block

// out = in, both rows x cols: every access coalesced. A transpose moves the same
// bytes, so a transpose kernel of this launch shape cannot beat it.
template <class T>
__global__ void copy_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t rows,
                            int64_t cols) {
  const int64_t r = static_cast<int64_t>(blockIdx.y) * kCopyTile + threadIdx.y;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kCopyTile + threadIdx.x;
  if (r < rows && c < cols) out[r * cols + c] = in[r * cols + c];
}

template <class T>
void launch_copy(const Args<T>& a) {
  const Bands bands(a.rows, kCopyTile);  // y: rows, one band unless > 65535 tile rows
  const dim3 grid(grid_x(ceil_div(a.cols, kCopyTile)), bands.tiles), block(kCopyTile, kCopyTile);
  for (const int64_t r0 : bands) {
    copy_kernel<<<grid, block>>>(a.in + r0 * a.cols, a.out + r0 * a.cols, a.rows, a.cols);
    CHECK_LAUNCH();
  }
}

// --- the launcher of the tiled transposes --------------------------------------------

// A kernel that transposes the TILE x TILE input tile at (blockIdx.y, blockIdx.x) with a
// BX x BY block: the grid is laid over the input, x along its columns, y along its rows
// in bands (Bands). Chapter 09's naive-read-coalesced, chapter 10's shared-tile and
// chapter 11's padded and 2-D-order steps each name an instantiation as their launcher,
// under their kernel: the timed call runs it, and it holds the grid and the <<<>>>.
template <class T, void (*Kernel)(const T*, T*, int64_t, int64_t), int TILE, int BX, int BY>
void launch_tiles(const Args<T>& a) {
  const Bands bands(a.rows, TILE);  // x: input columns, y: input rows
  const dim3 grid(grid_x(ceil_div(a.cols, TILE)), bands.tiles), block(BX, BY);
  for (const int64_t r0 : bands) {  // one band unless more than 65535 tile rows
    Kernel<<<grid, block>>>(a.in + r0 * a.cols, a.out + r0, a.rows, a.cols);
    CHECK_LAUNCH();
  }
}

// --- steps ---------------------------------------------------------------------------

// One row of a chapter's step table.
template <class T>
struct Step {
  std::string name;      // short kebab-case
  std::string role;      // "ceiling", "vendor", "step" or "anti-example"
  Launch<T> launch;      // the timed call runs it; it holds the <<<>>> (or the cuBLAS call)
  bool is_copy = false;  // out is a copy of in (rows x cols), not its transpose
  bool large = true;     // also run on the >2^31-element shapes (our kernels; not cuBLAS)
};

template <class T>
Step<T> copy_step() {
  return {"copy", "ceiling", launch_copy<T>, true, true};
}

// cuBLAS is column-major: our row-major rows x cols input is its cols x rows
// matrix A (lda = cols), and our cols x rows output is its rows x cols matrix C
// (ldc = rows). C = 1 * A^T + 0 * B; with beta = 0, B is not read (we pass C, as in
// cuBLAS's documented in-place form). Multiplying by 1 is exact. The _64 API takes
// 64-bit sides, so cuBLAS, like our kernels, takes any shape that fits in memory.
inline void launch_cublas_geam(const Args<float>& a) {
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasSgeam_64(a.blas, CUBLAS_OP_T, CUBLAS_OP_N, a.rows, a.cols, &one, a.in, a.cols,
                              &zero, a.out, a.rows, a.out, a.rows));
  CUDA_CHECK(cudaGetLastError());
}
inline void launch_cublas_geam(const Args<double>& a) {
  const double one = 1.0, zero = 0.0;
  CUBLAS_CHECK(cublasDgeam_64(a.blas, CUBLAS_OP_T, CUBLAS_OP_N, a.rows, a.cols, &one, a.in, a.cols,
                              &zero, a.out, a.rows, a.out, a.rows));
  CUDA_CHECK(cudaGetLastError());
}

// The vendor row: cublasSgeam_64 or cublasDgeam_64 on the handle in Args.
template <class T>
Step<T> vendor_step() {
  const char* name = sizeof(T) == sizeof(float) ? "cublas-sgeam" : "cublas-dgeam";
  return {name, "vendor", launch_cublas_geam, false, false};
}

// --- buffers -------------------------------------------------------------------------

inline void fill(float* d, int64_t n, uint64_t seed) { fill_floats(d, n, seed); }
inline void fill(double* d, int64_t n, uint64_t seed) { fill_doubles(d, n, seed); }

// Device input and output plus their host copies (pinned: fast copies back, even
// of 8+ GB), sized for the largest shape used.
template <class T>
struct Buffers {
  explicit Buffers(int64_t capacity)
      : in(capacity), out(capacity), host_in(capacity), host_out(capacity) {}
  DeviceBuffer<T> in, out;
  PinnedBuffer<T> host_in, host_out;
  uint64_t digest = 0;  // of the input as written: a kernel that writes into `in` is caught
  uint64_t seed = 0;    // of the input's contents

  // New input for `shape` on the GPU from `from`; the host copy is what the checks compare with.
  void prepare(Shape shape, uint64_t from) {
    seed = from;
    fill(in.get(), shape.count(), from);
    CUDA_CHECK(
        cudaMemcpy(host_in.get(), in.get(), shape.count() * sizeof(T), cudaMemcpyDeviceToHost));
    digest = device_digest(in.get(), shape.count() * sizeof(T));
  }
  bool input_kept(Shape shape) const {
    return device_digest(in.get(), shape.count() * sizeof(T)) == digest;
  }
  void poison_out(Shape shape) { sw::poison(out.get(), shape.count() * sizeof(T)); }
  void read_out(Shape shape) {
    CUDA_CHECK(
        cudaMemcpy(host_out.get(), out.get(), shape.count() * sizeof(T), cudaMemcpyDeviceToHost));
  }
  // What a launcher gets for `shape`: these buffers and the handle of `blas`.
  Args<T> args(Shape shape, const Blas& blas) {
    return {in.get(), out.get(), shape.rows, shape.cols, blas.get()};
  }
};

// --- exact checks, in parallel on the host ---------------------------------------------

constexpr int64_t kCheckGrain = 65536;  // elements worth a host thread of their own

template <class T>
struct Mismatch {
  int64_t index;  // in the output
  T got, want;
};

// Collects mismatches from many threads; keeps the first few by index.
template <class T>
class Mismatches {
 public:
  static constexpr int kKeep = 5;
  void merge(int64_t count, const std::vector<Mismatch<T>>& first) {
    std::lock_guard<std::mutex> lock(mutex_);
    count_ += count;
    first_.insert(first_.end(), first.begin(), first.end());
  }
  // Prints the first mismatches as "out[row][col]: got X, want Y"; returns the count.
  int64_t print(int64_t out_cols) {
    std::sort(first_.begin(), first_.end(),
              [](const auto& a, const auto& b) { return a.index < b.index; });
    for (size_t k = 0; k < first_.size() && k < static_cast<size_t>(kKeep); ++k)
      std::printf("  out[%lld][%lld]: got %.17g, want %.17g\n",
                  static_cast<long long>(first_[k].index / out_cols),
                  static_cast<long long>(first_[k].index % out_cols),
                  static_cast<double>(first_[k].got), static_cast<double>(first_[k].want));
    if (count_ > kKeep)
      std::printf("  ... %lld mismatches in all\n", static_cast<long long>(count_));
    return count_;
  }

 private:
  std::mutex mutex_;
  int64_t count_ = 0;
  std::vector<Mismatch<T>> first_;
};

// got (cols x rows) against the transpose of in (rows x cols), bit for bit (a NaN,
// the poison, never matches a generated value). The work is split into bands of
// kBlock input rows, and each band into kBlock x kBlock blocks, so that both sides
// are read a cache line at a time.
template <class T>
int64_t transpose_mismatches(const T* in, const T* got, Shape s) {
  constexpr int64_t kBlock = 64;
  const int64_t bands = ceil_div(s.rows, kBlock), band_elems = kBlock * s.cols;
  Mismatches<T> all;
  parallel_for(
      bands,
      [&](int64_t b0, int64_t b1) {
        int64_t count = 0;
        std::vector<Mismatch<T>> first;
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t r0 = b * kBlock, r1 = std::min(s.rows, r0 + kBlock);
          for (int64_t c0 = 0; c0 < s.cols; c0 += kBlock) {
            const int64_t c1 = std::min(s.cols, c0 + kBlock);
            for (int64_t c = c0; c < c1; ++c) {
              const T* out_row = got + c * s.rows;  // output row c holds input column c
              for (int64_t r = r0; r < r1; ++r) {
                if (same_bits(out_row[r], in[r * s.cols + c])) continue;
                if (++count <= Mismatches<T>::kKeep)
                  first.push_back({c * s.rows + r, out_row[r], in[r * s.cols + c]});
              }
            }
          }
        }
        all.merge(count, first);
      },
      /*grain=*/ceil_div(kCheckGrain, band_elems));
  return all.print(s.rows);
}

// got (rows x cols) against in, bit for bit: the copy ceiling's check.
template <class T>
int64_t copy_mismatches(const T* in, const T* got, Shape s) {
  Mismatches<T> all;
  parallel_for(
      s.count(),
      [&](int64_t begin, int64_t end) {
        int64_t count = 0;
        std::vector<Mismatch<T>> first;
        for (int64_t i = begin; i < end; ++i) {
          if (same_bits(got[i], in[i])) continue;
          if (++count <= Mismatches<T>::kKeep) first.push_back({i, got[i], in[i]});
        }
        all.merge(count, first);
      },
      kCheckGrain);
  return all.print(s.cols);
}

// The output against the input, and the input against its digest (a kernel may
// read `in` only). Returns "" when both hold, else why not.
template <class T>
std::string output_error(const Step<T>& step, const Buffers<T>& b, Shape s) {
  const int64_t bad = step.is_copy ? copy_mismatches(b.host_in.get(), b.host_out.get(), s)
                                   : transpose_mismatches(b.host_in.get(), b.host_out.get(), s);
  if (bad > 0) return std::to_string(bad) + " of " + std::to_string(s.count()) + " elements wrong";
  if (!b.input_kept(s)) return "input changed: " + step.name + " wrote into its input";
  return "";
}

// One step on one shape as bench::measure and bench::check_once see it
// (common/bench/protocol.h): the output to poison, the output copied back and
// compared exactly (output_error: the output against the input, the input against
// its digest), and new input contents from a seed (Buffers::prepare).
template <class T>
struct OutputData {
  Buffers<T>& b;
  const Step<T>& step;
  Shape s;
  void poison() const { b.poison_out(s); }
  bench::Verdict check() const {
    b.read_out(s);
    const std::string error = output_error(step, b, s);
    return {error.empty(), error};
  }
  bool reseed(uint64_t seed) const {
    b.prepare(s, seed);
    return true;
  }
  uint64_t seed() const { return b.seed; }
};
template <class T>
OutputData<T> output_data(Buffers<T>& b, const Step<T>& step, Shape s) {
  return {b, step, s};
}

// --- --verify-only -------------------------------------------------------------------------

// Every step on every shape, in both layouts (rows x cols and cols x rows):
// bench::check_once (poison, run once, compare exactly). For the >2^31-element
// shapes (only_large), cuBLAS is skipped (what we prove is our kernels' 64-bit
// indexing) and each shape runs in the layout given: an 8 GiB shape costs seconds
// per check.
template <class T>
void verify(Report& report, const Blas& blas, const std::vector<Step<T>>& steps,
            const std::vector<Shape>& shapes, uint64_t seed, bool only_large = false) {
  std::vector<Shape> cases;
  for (const Shape& s : shapes) {
    cases.push_back(s);
    if (s.rows != s.cols && !only_large) cases.push_back({s.cols, s.rows});
  }
  int64_t capacity = 1;
  for (const Shape& s : cases) capacity = std::max(capacity, s.count());
  Buffers<T> b(capacity);
  const char* type = sizeof(T) == sizeof(float) ? "float" : "double";
  for (const Shape& s : cases) {
    b.prepare(s, seed);
    const Args<T> args = b.args(s, blas);
    for (const Step<T>& step : steps) {
      if (only_large && !step.large) continue;
      const bench::Verdict v =
          bench::check_once(output_data(b, step, s), [&] { step.launch(args); });
      report.check(v.ok, step.name + " " + s.text() + " " + type, v.detail);
    }
  }
}

// --verify-only --large: the shapes of more than 2^31 elements, for our kernels only
// (not cuBLAS, the plain copy or an anti-example). Proves their 64-bit indexing and
// their bands past 65535 tile rows.
template <class T>
void verify_large(Report& report, const Blas& blas, const Gpu& gpu,
                  const std::vector<Step<T>>& steps, uint64_t seed) {
  int64_t most = 0;
  for (const Shape& s : large_shapes()) most = std::max(most, s.count());
  sw::require_fits(gpu, "--large (elements)", most, 2.0 * sizeof(T));
  std::vector<Step<T>> ours;
  for (const Step<T>& step : steps)
    if (step.large && step.name != "copy" && step.role != "anti-example") ours.push_back(step);
  verify(report, blas, ours, large_shapes(), seed, /*only_large=*/true);
}

// --- the benchmark -------------------------------------------------------------------------

// Times each step on one shape and checks its output, by bench::measure: poison,
// one checked run, the timed runs, the last one checked again (with --graded-timing,
// new input, poisoned output and a check for every call). One timed run is
// `launches` calls of the step's launcher back to back, the launcher holding the
// <<<>>> (or the cuBLAS call). Every row carries its shape (extra rows, cols) and
// `note` (e.g. "double", "cache-resident"); role_override (e.g. "sweep") replaces
// each step's role.
template <class T>
void benchmark(Report& report, const Blas& blas, const CommonOptions& opt,
               const std::vector<Step<T>>& steps, Shape s, uint64_t seed,
               const std::string& note = "", const std::string& role_override = "",
               const std::string& problem = "", int launches = 1) {
  Buffers<T> b(s.count());
  b.prepare(s, seed);
  // A row reports one whole timed run, as it always has: its time is that of the
  // `launches` launches together (Row::calls = 1: measure divides by nothing) and its
  // bytes are those of `launches` transposes, each reading the input once and writing
  // the output once. GB/s is bytes over time either way; the median ms stays the time
  // of one timed run, and n stays the elements of one transpose.
  const double moved = 2.0 * static_cast<double>(s.count()) * sizeof(T) * launches;
  const Args<T> args = b.args(s, blas);
  for (const Step<T>& step : steps) {
    const auto run = [&] {
      for (int i = 0; i < launches; ++i) step.launch(args);
    };
    const std::string& role = role_override.empty() ? step.role : role_override;
    const bench::Row row{step.name, s.count(), moved, /*calls=*/1, /*same_bits=*/false, role};
    Result r = bench::measure(opt, row, output_data(b, step, s), run);
    r.extra["rows"] = static_cast<double>(s.rows);
    r.extra["cols"] = static_cast<double>(s.cols);
    if (launches > 1) r.extra["launches"] = launches;
    r.note = note;
    r.problem = problem;
    report.add(r);
  }
}

// The same steps at a size whose input and output fit in L2 together, labelled
// "cache-resident" with role "sweep" so that they never mix with the DRAM-size rows.
// A single launch this small is mostly launch latency, so one timed run is
// kCacheLaunches launches back to back.
template <class T>
void benchmark_cache_resident(Report& report, const Blas& blas, const CommonOptions& opt,
                              const std::vector<Step<T>>& steps, uint64_t seed,
                              const std::string& problem = "", int64_t side = kCacheResidentSide) {
  const Shape s{side, side};
  report.note(
      "cache-resident rows: " + s.text() + ", " + std::to_string(2 * s.count() * sizeof(T) >> 20) +
      " MiB moved per launch, " + std::to_string(kCacheLaunches) +
      " launches per timed run: input and output stay in the L2. Compare these rows with each "
      "other, not with the DRAM-size rows (their 'vs lib' is against cuBLAS at the same size)");
  benchmark(report, blas, opt, steps, s, seed, "cache-resident", "sweep", problem, kCacheLaunches);
}

// Exits 2 (naming --rows and --cols) when in + out of rows x cols elements of
// `bytes_per_element` do not fit on the GPU.
inline void require_fits(const Gpu& gpu, const Options& t, double bytes_per_element) {
  sw::require_fits(gpu, "--rows x --cols (elements)", t.rows * t.cols, 2.0 * bytes_per_element);
}

// The whole main() of a chapter whose steps are float kernels: options, the
// GPU, then the verify sweep (--verify-only) or the copy ceiling, cuBLAS and the
// steps at the chosen size and at a cache-resident size. --list prints the steps.
inline int run_float_chapter(int argc, char** argv, const char* program, const char* summary,
                             const char* chapter, const std::vector<Step<float>>& steps) {
  Options t;
  Cli cli(program, summary);
  add_options(cli, &t, /*with_large=*/false);
  std::vector<std::string> names;
  for (const Step<float>& step : steps) names.push_back(step.name);
  cli.set_steps(names);
  const CommonOptions opt = cli.parse_or_exit(argc, argv);
  check_size(t);
  const Gpu gpu = start_gpu(opt);
  if (!opt.verify_only || shape_given(cli)) require_fits(gpu, t, sizeof(float));
  Report report(opt, gpu.copy_gbps, chapter, "transpose");
  const Blas blas;
  std::vector<Step<float>> table = {copy_step<float>(), vendor_step<float>()};
  table.insert(table.end(), steps.begin(), steps.end());
  if (opt.verify_only) {
    verify(report, blas, table, verify_shapes(cli, t), opt.seed);
    return report.exit_code();
  }
  benchmark(report, blas, opt, table, {t.rows, t.cols}, opt.seed);
  benchmark_cache_resident(report, blas, opt, table, opt.seed);
  return report.exit_code();
}

}  // namespace sw::transpose
