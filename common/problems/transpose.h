// The transpose problem (chapters 09-11): its shapes, data, exact checks and rows.
//
// A transpose reads `in` (rows x cols, row-major) and writes `out` (cols x rows,
// row-major): out[c * rows + r] = in[r * cols + c]. A chapter writes its kernels,
// each with a launcher under it that takes the Args of one transpose and holds the
// <<<>>>, lists them in its step table and hands the table to the program main:
//
//   void launch_shared_tile(const sw::transpose::Args<float>& a);  // grid, block, <<<>>>
//   const std::vector<sw::transpose::Step> kSteps = {{"shared-tile", launch_shared_tile}};
//   const sw::bench::Program<sw::transpose::Step> program{"10_transpose_shared", "...", "10", kSteps};
//   return sw::bench::run(argc, argv, program, sw::transpose::Problem{});
//
// Problem (below) adds --rows and --cols and runs the track's reference rows beside
// the chosen steps: the copy ceiling (a copy kernel of the naive kernels' launch
// shape, here because it is the track's ceiling, not a chapter's step) and cuBLAS's
// geam (the vendor). --verify-only checks every row on a sweep of awkward shapes,
// each in both layouts (rows x cols and cols x rows), by bench::check_once; the
// default run times every row by bench::measure at --rows x --cols and at a
// cache-resident size (common/bench/protocol.h). Checks are exact (bit for bit)
// against the input copied back from the GPU, and outputs are poisoned (NaN) first.
// A chapter that needs more (chapter 11: more ceilings, the doubles, --large)
// derives its own problem from Problem.
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
#include <type_traits>
#include <vector>

#include "common/bench/program.h"
#include "common/bench/protocol.h"
#include "common/bench/step.h"
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
  int64_t n() const { return rows * cols; }  // the elements
  std::string text() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

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

// --- what a launcher gets, and a row of a table ----------------------------------------

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

// A row: a float launcher, or (in `more`) a double one. {"padded", launch_padded} is a
// float step; {"double-tile32", nullptr, launch_double_tile32} a double one.
using Step = bench::Step<Launch<float>, Launch<double>>;
constexpr unsigned kOutIsCopy = 1;  // traits: out is a copy of in (rows x cols), not its transpose

// The row's launcher for elements of type T (nullptr: the row has none).
template <class T>
Launch<T> launcher(const Step& step) {
  if constexpr (std::is_same_v<T, float>)
    return step.launch;
  else
    return step.more;
}

template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "float" : "double";
}

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

// The reference rows beside every chapter's steps: the copy ceiling and cuBLAS.
inline const Step kCopyRow = {"copy", launch_copy<float>, nullptr, "ceiling", kOutIsCopy};
inline const Step kSgeamRow = {"cublas-sgeam", launch_cublas_geam, nullptr, "vendor"};
inline const Step kDgeamRow = {"cublas-dgeam", nullptr, launch_cublas_geam, "vendor"};

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
    fill(in.get(), shape.n(), from);
    CUDA_CHECK(cudaMemcpy(host_in.get(), in.get(), shape.n() * sizeof(T), cudaMemcpyDeviceToHost));
    digest = device_digest(in.get(), shape.n() * sizeof(T));
  }
  bool input_kept(Shape shape) const {
    return device_digest(in.get(), shape.n() * sizeof(T)) == digest;
  }
  void poison_out(Shape shape) { sw::poison(out.get(), shape.n() * sizeof(T)); }
  void read_out(Shape shape) {
    CUDA_CHECK(
        cudaMemcpy(host_out.get(), out.get(), shape.n() * sizeof(T), cudaMemcpyDeviceToHost));
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
      s.n(),
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
std::string output_error(const Step& step, const Buffers<T>& b, Shape s) {
  const int64_t bad = step.traits & kOutIsCopy
                          ? copy_mismatches(b.host_in.get(), b.host_out.get(), s)
                          : transpose_mismatches(b.host_in.get(), b.host_out.get(), s);
  if (bad > 0) return std::to_string(bad) + " of " + std::to_string(s.n()) + " elements wrong";
  if (!b.input_kept(s)) return "input changed: " + std::string(step.name) + " wrote into its input";
  return "";
}

// One row on one shape as bench::measure and bench::check_once see it
// (common/bench/protocol.h): the output to poison, the output copied back and
// compared exactly (output_error: the output against the input, the input against
// its digest), and new input contents from a seed (Buffers::prepare).
template <class T>
struct OutputData {
  Buffers<T>& b;
  const Step& step;
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
  std::vector<bench::Buffer> outputs() const {
    return {{b.out.get(), s.n() * static_cast<int64_t>(sizeof(T))}};
  }
};

// --verify-only: every row that has a launcher for T, on every shape and (both_layouts)
// its cols x rows too, by bench::check_once (poison, one call, an exact check): a
// PASS/FAIL line each, "<row> <rows>x<cols> <float|double>".
template <class T>
void check_rows(const bench::Session<Step>& s, const Blas& blas, const std::vector<Step>& table,
                const std::vector<Shape>& shapes, bool both_layouts = true) {
  if (std::none_of(table.begin(), table.end(), launcher<T>)) return;  // no buffers to fill
  std::vector<Shape> cases;
  for (const Shape& shape : shapes) {
    cases.push_back(shape);
    if (shape.rows != shape.cols && both_layouts) cases.push_back({shape.cols, shape.rows});
  }
  int64_t capacity = 1;
  for (const Shape& shape : cases) capacity = std::max(capacity, shape.n());
  Buffers<T> b(capacity);
  for (const Shape& shape : cases) {
    b.prepare(shape, s.opt.seed);
    const Args<T> args = b.args(shape, blas);
    for (const Step& step : table) {
      if (!launcher<T>(step)) continue;
      const bench::Verdict v =
          bench::check_once(OutputData<T>{b, step, shape}, launcher<T>(step), args);
      s.report.check(v.ok, std::string(step.name) + " " + shape.text() + " " + type_name<T>(),
                     v.detail);
    }
  }
}

// The default run: every row that has a launcher for T, timed on one shape by
// bench::measure (poison, one checked call, the timed runs of `calls` calls each, the
// last checked again; --graded-timing: new input, poisoned output and a check per
// run). The launcher holds the <<<>>> (or the cuBLAS call). A row's bytes are those of
// one transpose, read once and written once; it carries its shape (extra rows, cols),
// `launches` when calls > 1, `note` ("double", "cache-resident") and `problem`; `role`
// (e.g. "sweep"), when given, replaces each row's own.
template <class T>
void time_rows(const bench::Session<Step>& s, const Blas& blas, const std::vector<Step>& table,
               Shape shape, const char* note = "", const char* role = nullptr,
               const char* problem = "", int calls = 1) {
  if (std::none_of(table.begin(), table.end(), launcher<T>)) return;  // no buffers to fill
  Buffers<T> b(shape.n());
  b.prepare(shape, s.opt.seed);
  const Args<T> args = b.args(shape, blas);
  const double bytes = 2.0 * static_cast<double>(shape.n()) * sizeof(T);
  for (const Step& step : table) {
    if (!launcher<T>(step)) continue;
    const bench::Row row{step.name, shape.n(), bytes, calls, false, role ? role : step.role};
    Result r = bench::measure(s.opt, row, OutputData<T>{b, step, shape}, launcher<T>(step), args);
    r.extra["rows"] = static_cast<double>(shape.rows);
    r.extra["cols"] = static_cast<double>(shape.cols);
    if (calls > 1) r.extra["launches"] = calls;
    r.note = note;
    r.problem = problem;
    s.report.add(r);
  }
}

// The rows at a size whose input and output fit in L2 together are labelled
// "cache-resident", with role "sweep", so that they never mix with the DRAM-size rows.
// A single launch this small is mostly launch latency, so one timed run is
// kCacheLaunches launches back to back. This note comes before them:
inline const Shape kCacheResident{kCacheResidentSide, kCacheResidentSide};
inline void note_cache_resident(Report& report) {
  const Shape s = kCacheResident;
  report.note(
      "cache-resident rows: " + s.text() + ", " + std::to_string(2 * s.n() * sizeof(float) >> 20) +
      " MiB moved per launch, " + std::to_string(kCacheLaunches) +
      " launches per timed run: input and output stay in the L2. Compare these rows with each "
      "other, not with the DRAM-size rows (their 'vs lib' is against cuBLAS at the same size)");
}

// The problem of chapters 09 and 10: float steps beside the copy ceiling and
// cublasSgeam, checked on the sweep (or the shape --rows / --cols name) and timed at
// --rows x --cols and at the cache-resident size.
struct Problem {
  using Step = transpose::Step;
  static constexpr const char* kName = "transpose";
  static constexpr bool kExchangesOutputs = true;    // every check is check_rows's check_once
  int64_t rows = kDefaultSide, cols = kDefaultSide;  // --rows, --cols

  void add_options(Cli& cli, const bench::Program<Step>&) {
    cli.add_int("--rows", &rows, 1, kMaxElements,
                "rows of the input matrix; with --verify-only, check this shape only");
    cli.add_int("--cols", &cols, 1, kMaxElements,
                "columns of the input matrix; with --verify-only, check this shape only");
  }
  static bool shape_given(const Cli& cli) {
    return cli.was_given("--rows") || cli.was_given("--cols");
  }
  // Exits 2 (before the GPU starts) when rows x cols is more elements than any option
  // accepts: each side alone is within kMaxElements, their product could even pass int64.
  void validate(const bench::Request<Step>& asked) const {
    const Cli& cli = asked.cli;
    if (rows > kMaxElements / cols)
      cli.reject("--rows x --cols " + std::to_string(rows) + " x " + std::to_string(cols) +
                 " is more elements than any option accepts; valid range: 1 to " +
                 std::to_string(kMaxElements) + " elements");
  }
  // Exits 2 when in + out, `bytes_per_element` each, do not fit on the GPU.
  void require_fits(const Gpu& gpu, double bytes_per_element) const {
    sw::require_fits(gpu, "--rows x --cols (elements)", rows * cols, 2.0 * bytes_per_element);
  }
  // --verify-only's shapes: the sweep, or the one shape that --rows / --cols name.
  std::vector<Shape> verify_shapes(const Cli& cli) const {
    if (shape_given(cli)) return {{rows, cols}};
    return sweep_shapes();
  }

  void verify(const bench::Session<Step>& s) const {
    if (shape_given(s.cli)) require_fits(s.gpu, sizeof(float));
    const Blas blas;
    std::vector<Step> table = {kCopyRow, kSgeamRow};
    table.insert(table.end(), s.steps.begin(), s.steps.end());
    check_rows<float>(s, blas, table, verify_shapes(s.cli));
  }
  void bench(const bench::Session<Step>& s) const {
    require_fits(s.gpu, sizeof(float));
    const Blas blas;
    std::vector<Step> table = {kCopyRow, kSgeamRow};
    table.insert(table.end(), s.steps.begin(), s.steps.end());
    time_rows<float>(s, blas, table, {rows, cols});
    note_cache_resident(s.report);
    time_rows<float>(s, blas, table, kCacheResident, "cache-resident", "sweep", "", kCacheLaunches);
  }
};

}  // namespace sw::transpose
