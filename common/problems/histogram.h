// The histogram problem of chapters 07 and 08, in namespace sw::histogram: the 256
// 64-bit totals of n bytes. Problem is what sw::bench::run (common/bench/program.h)
// runs: its options, the inputs with their CPU references, the checks, CUB as the
// vendor row, the distribution sweep, --file and the --verify-only sweep. Chapter 15
// uses its CUB row at any width and bin count (CubHistogramEven); the 64-bit totals
// (sw::HistCount) and the comparison of totals are in common/histogram_check.h.
//
//   namespace hg = sw::histogram;
//   void launch_mine(const hg::Job& j) {  // the chapter's launcher, under its kernel
//     CUDA_CHECK(cudaMemsetAsync(j.hist, 0, hg::kHistBytes));
//     mine<<<blocks, threads>>>(j.in, j.n, j.hist);
//     CHECK_LAUNCH();
//   }
//   int main(int argc, char** argv) {
//     const sw::bench::Program<hg::Step> program{"08_histogram_privatized", "one line", "08",
//                                                {{"mine", launch_mine}}};
//     return sw::bench::run(argc, argv, program, hg::Problem{});
//   }
//
// A launch zeroes `hist` itself (that is part of the job) and leaves there 256 64-bit
// totals (HistCount), so no bin wraps at 2^32 equal bytes; --verify-only --large
// proves it with 2^32 + 2^20 + 3 of them.
//
// A row's check compares its totals exactly with the CPU histogram and the input
// with its digest (a kernel may only read it). The first check of an input's last
// row (of every row with --file or --verify-only) also takes one count off the bin
// of every byte (decrements_to_zero). A timed row is bench::measure with the row's
// launcher and RowData (the row's output to poison, its check, new bytes from another
// seed for --graded-timing): it checks the first run (poisoned), times, and checks the
// last timed run, which ran onto the earlier runs' counts (a kernel that adds onto them
// instead of zeroing fails). --verify-only checks each row twice (verify_row):
// bench::check_twice (poisoned, then one more run, not poisoned, checked again).
//
// The calls from main to a <<<>>> (CUB's row: to CUB), at most five:
//   main -> bench::run -> Problem::bench -> bench_input -> bench::measure -> launch_<step>
//   main -> bench::run -> Problem::bench (--file) -> bench::measure -> launch_<step>
//   main -> bench::run -> Problem::verify -> verify_row -> bench::check_twice -> launch_<step>
#pragma once

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "common/bench/program.h"
#include "common/bench/protocol.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/cub_calls.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/histogram_check.h"
#include "common/parallel.h"
#include "common/report.h"
#include "common/verify.h"

namespace sw::histogram {

constexpr int kBins = 256;
constexpr size_t kHistBytes = kBins * sizeof(HistCount);
constexpr int64_t kMaxHistOffset = 63;  // --offset: start this many bytes past an aligned address
constexpr int64_t kLargeHistBytes =
    (int64_t{1} << 32) + (int64_t{1} << 20) + 3;       // --large: above 2^32
constexpr int64_t kFileChunkBytes = int64_t{1} << 30;  // --file: bytes per chunk on the device
constexpr int64_t kHostGrain = int64_t{1}
                               << 20;  // bytes worth a host thread (its 256 counters, a merge)
// Slow steps (chapter 07's few GB/s) are timed with few reps, and the all-equal
// input is cut to kSlowEqualBytes for every row.
constexpr int kSlowReps = 3;
constexpr int kSlowWarmup = 1;
constexpr int64_t kSlowEqualBytes = int64_t{1} << 28;
// The distribution sweep: p from uniform (0) to all zeros (1), with fewer reps.
constexpr double kSweepRepsFraction = 0.25;
const std::vector<double> kSweepP = {0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0};

// --- the chapter's table ----------------------------------------------------------

class CubHistogram;

// A launcher's job: n bytes at `in`. A step zeroes the 256 totals at `hist`, then adds
// every byte's count; CUB's row counts into the 32-bit counters of `cub`.
struct Job {
  const uint8_t* in;
  int64_t n;
  HistCount* hist;
  const CubHistogram* cub;  // CUB's row only
};

// A row's launcher: its grid, its block and its <<<>>> (or CUB's call).
using Launch = void (*)(const Job& j);

// A row of the step table: {"per-warp", launch_per_warp}; traits kSlow for a step of a
// few GB/s, timed with kSlowReps (and the all-equal input is cut).
using Step = bench::Step<Launch>;
constexpr unsigned kSlow = 1;

// --- inputs and their checks ----------------------------------------------------------

// A short name for an input, the rows' note: "uniform", "equal-0", "skewed", "mix-0.90-v0".
inline std::string spec_note(ByteSpec s) {
  if (s.dist == ByteDist::Equal) return print_text("equal-%d", s.value);
  if (s.dist == ByteDist::Mix) return print_text("mix-%.2f-v%d", s.p, s.value);
  return byte_dist_name(s.dist);
}

// What is wrong with --file, as the one line that names it ("--file x: is empty; ..."),
// or "": it must name a readable, non-empty regular file. Sets *size.
inline std::string file_error(const std::string& file, int64_t* size) {
  const std::string at = "--file " + file + ": ";
  struct stat st {};
  if (stat(file.c_str(), &st) != 0) return at + std::strerror(errno) + "; give a regular file";
  if (S_ISDIR(st.st_mode)) return at + "is a directory; give a regular file";
  if (!S_ISREG(st.st_mode))
    return at + "is not a regular file (a device, pipe or socket); give a regular file";
  if (st.st_size == 0) return at + "is empty; give a file of at least 1 byte";
  FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) return at + "cannot be opened: " + std::strerror(errno);
  std::fclose(f);
  *size = static_cast<int64_t>(st.st_size);
  return "";
}

// The CPU reference: sw::histogram_cpu on slices of the bytes, on all cores.
inline void histogram_reference(const uint8_t* bytes, int64_t n, uint64_t out[kBins]) {
  std::fill(out, out + kBins, uint64_t{0});
  std::mutex m;
  parallel_for(
      n,
      [&](int64_t b, int64_t e) {
        uint64_t part[kBins];
        histogram_cpu(bytes + b, e - b, part);
        std::lock_guard<std::mutex> lock(m);
        for (int i = 0; i < kBins; ++i) out[i] += part[i];
      },
      kHostGrain);
}

// The seed's check, independent of histogram_cpu: take one count off the bin of
// every byte; every bin must end at exactly zero. Returns "" when they do, else
// names the first bin that does not: "decrement-to-zero: bin 7 ends at -1 (3 bins)".
inline std::string decrements_to_zero(const HistCount got[kBins], const uint8_t* bytes, int64_t n) {
  uint64_t left[kBins];
  for (int i = 0; i < kBins; ++i) left[i] = got[i];
  std::mutex m;
  parallel_for(
      n,
      [&](int64_t b, int64_t e) {
        uint64_t taken[kBins] = {};
        for (int64_t i = b; i < e; ++i) --taken[bytes[i]];  // wraps: taken = -count
        std::lock_guard<std::mutex> lock(m);
        for (int i = 0; i < kBins; ++i) left[i] += taken[i];
      },
      kHostGrain);
  int bad = 0;
  std::string first;
  for (int i = 0; i < kBins; ++i) {
    if (left[i] == 0) continue;
    if (bad++ == 0)
      first = "decrement-to-zero: bin " + std::to_string(i) + " ends at " +
              std::to_string(static_cast<long long>(left[i]));
  }
  return bad > 1 ? first + " (" + std::to_string(bad) + " bins)" : first;
}

// --- the rows: the chapter's steps and CUB --------------------------------------------

// cub::DeviceHistogram::HistogramEven of values of type T: `bins` 32-bit counters
// evenly spaced over [0, upper), the type its tuned Hopper policy is for. prepare()
// sizes its temporary storage for n values, outside any timed loop; the row's
// launcher (launch_cub below, chapter 15's launch_cub<T>) passes CUB the storage,
// the counters and the levels. Inputs beyond kMaxN values are skipped: a 32-bit
// counter could wrap and CUB's int offsets could not index them. Chapter 15 uses it
// at 16 and 32 bits with up to 2^20 bins.
template <class T>
class CubHistogramEven {
 public:
  static constexpr int64_t kMaxN = 0x7FFFFFFF;
  using Level = std::conditional_t<sizeof(T) == 4, unsigned, int>;  // the levels' type
  explicit CubHistogramEven(int64_t max_bins) : counts_(max_bins) {}
  void prepare(int bins, Level upper, int64_t n) {
    bins_ = bins;
    upper_ = upper;
    size_t bytes = 0;
    CUDA_CHECK(cub_histogram_even(nullptr, bytes, static_cast<const T*>(nullptr), counts_.get(),
                                  levels(), Level{0}, upper_, static_cast<int>(n)));
    if (static_cast<int64_t>(bytes) > temp_.count())
      temp_.allocate(static_cast<int64_t>(std::max<size_t>(bytes, 1)));
  }
  void poison() const { sw::poison(counts_.get(), sizeof(unsigned) * bins_); }
  std::vector<HistCount> read() const {
    const std::vector<unsigned> c = sw::read(counts_.get(), bins_);
    return std::vector<HistCount>(c.begin(), c.end());
  }

  // CUB's arguments besides the input, for the launcher. CUB returns an error if
  // the input needs more temporary storage than prepare() sized.
  void* temp() const { return temp_.get(); }
  size_t temp_bytes() const { return static_cast<size_t>(temp_.count()); }
  unsigned* counts() const { return counts_.get(); }
  int levels() const { return bins_ + 1; }
  Level upper() const { return upper_; }

 private:
  DeviceBuffer<unsigned> counts_;
  DeviceBuffer<uint8_t> temp_;
  int bins_ = 0;
  Level upper_ = 0;
};

// Chapters 07 and 08: 256 bins over the bytes, sized once for the largest input.
class CubHistogram : public CubHistogramEven<uint8_t> {
 public:
  static constexpr int64_t kMaxBytes = kMaxN;
  CubHistogram() : CubHistogramEven(kBins) { prepare(kBins, kBins, kMaxBytes); }
};

// CUB's row: the launcher calls CUB on the job's bytes with what CubHistogram prepared.
inline void launch_cub(const Job& j) {
  size_t bytes = j.cub->temp_bytes();
  CUDA_CHECK(cub_histogram_even(j.cub->temp(), bytes, j.in, j.cub->counts(), j.cub->levels(), 0,
                                j.cub->upper(), static_cast<int>(j.n)));
  CHECK_LAUNCH();
}

// One row: a chapter's step writing into the shared 64-bit totals, or CUB, with its
// launcher, which bench::measure and verify_row call with the row's job.
class Row {
 public:
  Row(const Step& step, HistCount* d_hist)
      : name(step.name), slow(step.traits & kSlow), launch(step.launch), d_hist_(d_hist) {}
  explicit Row(const CubHistogram* cub)
      : name("cub"),
        role("vendor"),
        max_n(CubHistogram::kMaxBytes),
        launch(launch_cub),
        cub_(cub) {}

  // The launcher's job on n bytes at `in`, made before any timed loop.
  Job job(const uint8_t* in, int64_t n) const { return {in, n, d_hist_, cub_}; }
  void poison() const {
    if (cub_) {
      cub_->poison();
    } else {
      sw::poison(d_hist_, kHistBytes);
    }
  }
  std::vector<HistCount> read() const { return cub_ ? cub_->read() : sw::read(d_hist_, kBins); }
  bench::Buffer output() const {  // what read() reads
    if (cub_)
      return {cub_->counts(), static_cast<int64_t>(sizeof(unsigned)) * (cub_->levels() - 1)};
    return {d_hist_, static_cast<int64_t>(kHistBytes)};
  }

  std::string name;
  std::string role = "step";
  int64_t max_n = kMaxElements;  // larger inputs are skipped with a note
  bool slow = false;
  Launch launch;  // the step's launcher, or launch_cub

 private:
  HistCount* d_hist_ = nullptr;
  const CubHistogram* cub_ = nullptr;
};

// --- one input on the device, with its CPU reference ----------------------------------

class HistData {
 public:
  // Room for `capacity` bytes at any offset up to kMaxHistOffset; exits 2 when
  // that does not fit in device memory (`option` names the size in the message).
  HistData(const Gpu& gpu, const std::string& option, int64_t capacity) : capacity_(capacity) {
    require_fits(gpu, option, capacity, 1.0, kMaxHistOffset + 1.0 + 2 * kHistBytes);
    device_.allocate(capacity + kMaxHistOffset + 1);
    host_.reset(new uint8_t[static_cast<size_t>(capacity)]);
  }

  // Generates n bytes on the GPU at `offset`, copies them back, computes the reference.
  void generate(int64_t n, ByteSpec spec, uint64_t seed, int64_t offset) {
    spec_ = spec;
    seed_ = seed;
    generated_ = true;
    set_shape(n, offset, spec_note(spec));
    fill_bytes(writable(), n, seed, spec);
    CUDA_CHECK(cudaMemcpy(host_.get(), writable(), static_cast<size_t>(n), cudaMemcpyDeviceToHost));
    histogram_reference(host_.get(), n_, want_);
    digest_ = device_digest(device(), static_cast<size_t>(n_));
  }
  // The same input from another seed (--graded-timing); false for an uploaded file.
  bool reseed(uint64_t seed) {
    if (!generated_) return false;
    generate(n_, spec_, seed, offset_);
    return true;
  }
  uint64_t seed() const { return seed_; }
  // The host buffer to fill before upload(n, ...): room for `capacity` bytes.
  uint8_t* host_buffer() { return host_.get(); }
  void upload(int64_t n, std::string note, int64_t offset) {
    generated_ = false;
    set_shape(n, offset, std::move(note));
    CUDA_CHECK(cudaMemcpy(writable(), host_.get(), static_cast<size_t>(n), cudaMemcpyHostToDevice));
    histogram_reference(host_.get(), n_, want_);
    digest_ = device_digest(device(), static_cast<size_t>(n_));
  }

  const uint8_t* device() const { return device_.get() + offset_; }
  int64_t n() const { return n_; }
  int64_t offset() const { return offset_; }
  const std::string& note() const { return note_; }
  const uint64_t* want() const { return want_; }

  // A row's totals against the CPU reference, exactly (`decrement` adds the seed's
  // check), and the input as generated or uploaded (a kernel may only read it). The
  // detail names what failed first, then anything else: "bin[7]: got 3, want 4;
  // input changed: ...".
  bench::Verdict check(const std::vector<HistCount>& got, bool decrement) const {
    bench::Verdict v = compare_bins("bin", got.data(), want_, kBins);
    const auto fail = [&v](const std::string& why) {
      v.detail += (v.ok ? "" : "; ") + why;
      v.ok = false;
    };
    if (decrement) {
      const std::string left = decrements_to_zero(got.data(), host_.get(), n_);
      if (!left.empty()) fail(left);
    }
    if (!input_kept()) fail("input changed: the kernel wrote into its input");
    return v;
  }
  bool input_kept() const { return device_digest(device(), static_cast<size_t>(n_)) == digest_; }

 private:
  uint8_t* writable() { return device_.get() + offset_; }
  void set_shape(int64_t n, int64_t offset, std::string note) {
    if (n < 1 || n > capacity_ || offset < 0 || offset > kMaxHistOffset) {
      std::fprintf(stderr,
                   "internal error: HistData input of %lld bytes at offset %lld, capacity %lld\n",
                   static_cast<long long>(n), static_cast<long long>(offset),
                   static_cast<long long>(capacity_));
      std::exit(kExitFailed);
    }
    n_ = n;
    offset_ = offset;
    note_ = std::move(note);
  }

  DeviceBuffer<uint8_t> device_;
  std::unique_ptr<uint8_t[]> host_;
  int64_t capacity_ = 0, n_ = 0, offset_ = 0;
  std::string note_;
  uint64_t want_[kBins] = {};
  uint64_t digest_ = 0;  // device_digest of the input as generated or uploaded
  ByteSpec spec_{};
  uint64_t seed_ = 0;
  bool generated_ = false;
};

// --- a row on the current input, as the protocol sees it ------------------------------

// A row's data for bench::measure and bench::check_once (common/bench/protocol.h): the
// row's output to poison, its totals and the input checked by HistData::check (the
// decrement check in the first check only, when `decrement`), and new bytes from
// another seed for --graded-timing (reseed: false for an uploaded file, whose bytes
// stay). Reseeding keeps the bytes' address, so a Job made before stays valid.
struct RowData {
  HistData& data;
  const Row& row;
  mutable bool decrement;  // the next check adds the decrement check; it runs once
  void poison() const { row.poison(); }
  bench::Verdict check() const {
    const bool first = decrement;
    decrement = false;
    return data.check(row.read(), first);
  }
  bool reseed(uint64_t s) const { return data.reseed(s); }
  uint64_t seed() const { return data.seed(); }
  std::vector<bench::Buffer> outputs() const { return {row.output()}; }
};

// --verify-only's check of one row on the current input: bench::check_once (poisoned,
// with the decrement check), then one more run WITHOUT poisoning, checked again (a
// kernel that adds onto the last run's counts instead of zeroing them fails).
inline bench::Verdict verify_row(HistData& data, const Row& v) {
  const Job job = v.job(data.device(), data.n());
  const RowData d{data, v, true};
  return bench::check_twice(d, v.launch, job);
}

// The reps of a slow step: at most kSlowReps after kSlowWarmup.
inline CommonOptions slow_reps(CommonOptions opt) {
  opt.reps = std::min(opt.reps, kSlowReps);
  opt.warmup = std::min(opt.warmup, kSlowWarmup);
  return opt;
}
inline CommonOptions reps_for(const Row& v, const CommonOptions& opt) {
  return v.slow ? slow_reps(opt) : opt;
}

// What bench::measure reports of a row on n bytes: they move the input once and the 256
// 64-bit totals once.
inline bench::Row timed(const Row& v, int64_t n, const std::string& role) {
  return {v.name, n, static_cast<double>(n) + kHistBytes, 1, false, role};
}

// Every row on one input, measured with the row's reps (reps_for) and reported. The
// decrement check (a full pass over the input on the host) runs once per input, on
// the last row: the chapter's final step. The row's note is the input; `extra` adds
// the sweep's p, and a start past an aligned address adds offset.
inline void bench_input(Report& report, const CommonOptions& opt, HistData& data,
                        const std::vector<Row>& rows, int64_t n, ByteSpec spec, int64_t offset,
                        const std::string& role = "", std::map<std::string, double> extra = {}) {
  data.generate(n, spec, opt.seed, offset);
  for (const Row& v : rows) {
    if (data.n() > v.max_n) {
      report.note(v.name + " skipped on " + data.note() + ": it takes at most " +
                  std::to_string(v.max_n) + " bytes");
      continue;
    }
    const Job job = v.job(data.device(), data.n());
    Result r = bench::measure(reps_for(v, opt), timed(v, data.n(), role.empty() ? v.role : role),
                              RowData{data, v, &v == &rows.back()}, v.launch, job);
    r.note = data.note();
    for (const auto& e : extra) r.extra[e.first] = e.second;
    if (data.offset() != 0) r.extra["offset"] = static_cast<double>(data.offset());
    report.add(r);
  }
}

// --- --file -------------------------------------------------------------------------

// The file in chunks of at most kFileChunkBytes (a file larger than device memory
// streams through): next() puts the next chunk on the device, the caller checks
// (verify_row) or measures (bench::measure: with --graded-timing every call on the
// chunk's bytes, since a file cannot be reseeded) each row on it and add()s the
// outcome. A row's chunk totals add up on the host in 64 bits and must equal the
// file's CPU histogram. Each chunk is another input on the device, so a row's time
// is the sum of one bench::measure per chunk (the disk and the host-to-device copy
// are not timed); their extras add up too, and graded_gaps is 1 when any chunk had a gap.
class FileRun {
 public:
  FileRun(const Gpu& gpu, const std::string& program, const std::string& file, int64_t offset,
          size_t rows)
      : program_(program), file_(file), offset_(offset), tally_(rows) {
    const std::string why = file_error(file, &size_);
    if (!why.empty()) exit_with(why, kExitBadInput);
    chunk_ = std::min(size_, kFileChunkBytes);
    data_.reset(new HistData(gpu, "--file chunk", chunk_));
    f_ = std::fopen(file.c_str(), "rb");
    if (!f_)
      exit_with("--file " + file + ": cannot be opened: " + std::strerror(errno), kExitBadInput);
  }
  FileRun(const FileRun&) = delete;
  FileRun& operator=(const FileRun&) = delete;
  ~FileRun() { std::fclose(f_); }

  HistData& data() { return *data_; }

  // The next chunk on the device with its reference; false after the last. A failed
  // read exits 1 with one line.
  bool next() {
    done_ += n_;
    if (done_ >= size_) return false;
    n_ = std::min(chunk_, size_ - done_);
    if (std::fread(data_->host_buffer(), 1, static_cast<size_t>(n_), f_) != static_cast<size_t>(n_))
      exit_with("--file " + file_ + ": read failed after " + std::to_string(done_) + " of " +
                    std::to_string(size_) +
                    " bytes: " + (std::ferror(f_) ? std::strerror(errno) : "the file got shorter"),
                kExitFailed);
    data_->upload(n_, "file", offset_);
    for (int i = 0; i < kBins; ++i) want_[i] += data_->want()[i];
    return true;
  }

  // Row k's outcome on the current chunk: a check, or a measured row.
  void add(size_t k, const Row& v, const bench::Verdict& c) {
    Tally& t = tally_[k];
    if (!c.ok && t.ok)
      t.detail =
          size_ > chunk_ ? "chunk at byte " + std::to_string(done_) + ": " + c.detail : c.detail;
    t.ok = t.ok && c.ok;
    const std::vector<HistCount> got = v.read();  // the last run's, checked above
    for (int i = 0; i < kBins; ++i) t.totals[i] += got[i];
  }
  void add(size_t k, const Row& v, const Result& m) {
    Tally& t = tally_[k];
    t.time = {t.time.ms_median + m.timing.ms_median, t.time.ms_min + m.timing.ms_min,
              m.timing.reps};
    for (const auto& e : m.extra)
      t.extra[e.first] = e.first == "graded_gaps" ? std::max(t.extra[e.first], e.second)
                                                  : t.extra[e.first] + e.second;
    add(k, v, bench::Verdict{m.ok, m.detail});
  }

  // Every row's totals against the file's histogram: a check (--verify-only) or a row.
  void finish(Report& report, const CommonOptions& opt, const std::vector<Row>& rows) const {
    if (size_ > chunk_)
      report.note("file of " + std::to_string(size_) + " bytes in chunks of " +
                  std::to_string(chunk_) + "; times add up the chunks' medians");
    if (opt.graded_timing && !opt.verify_only)
      report.note(
          "--graded-timing on --file: every call runs on the same bytes (a file cannot be "
          "reseeded), its output poisoned and checked");
    for (size_t k = 0; k < rows.size(); ++k) {
      const Tally& t = tally_[k];
      const bench::Verdict total = compare_bins("file bin", t.totals, want_, kBins);
      const bool ok = t.ok && total.ok;
      const std::string detail = t.ok ? total.detail : t.detail;
      if (opt.verify_only) {
        report.check(ok, rows[k].name + " file=" + file_, detail);
      } else {
        Result r{rows[k].name, size_, static_cast<double>(size_) + kHistBytes,
                 t.time,       ok,    rows[k].role};
        r.note = "file";
        r.extra = t.extra;
        r.detail = detail;
        report.add(r);
      }
    }
  }

 private:
  struct Tally {  // one row over the chunks
    uint64_t totals[kBins] = {};
    Timing time;
    std::map<std::string, double> extra;
    bool ok = true;
    std::string detail;  // the first failed chunk's
  };
  [[noreturn]] void exit_with(const std::string& why, int code) const {
    std::fprintf(stderr, "%s: error: %s\n", program_.c_str(), why.c_str());
    std::exit(code);
  }

  std::string program_, file_;
  int64_t offset_ = 0, size_ = 0, chunk_ = 0, done_ = 0, n_ = 0;
  std::unique_ptr<HistData> data_;
  FILE* f_ = nullptr;
  std::vector<Tally> tally_;
  uint64_t want_[kBins] = {};
};

// --- the problem ------------------------------------------------------------------------

// Chapters 07 and 08. The benchmark: CUB and the chosen steps on --file, on the input
// that --dist/--value/--p choose, or by default on uniform bytes, all zeros and skewed
// bytes followed by the distribution sweep (with a slow step, chapter 07: uniform bytes
// and at most kSlowEqualBytes zeros, without skewed bytes or the sweep).
// --verify-only: the chosen steps on the correctness sweep (at --bytes alone if given),
// on --large's inputs or on --file.
struct Problem {
  using Step = histogram::Step;
  static constexpr const char* kName = "histogram";
  static constexpr bool kExchangesOutputs = true;  // verify_row's check_twice, both runs

  int64_t n = int64_t{1} << 30;  // --bytes
  std::string dist = "uniform";  // with --dist, --value or --p: benchmark that one input only
  int value = 0;                 // the repeated byte of "equal" and "mix"
  double p = 0.5;                // "mix": probability of `value`
  std::string file;              // histogram the bytes of this file instead
  int64_t offset = 0;            // start of the input past a 256-byte aligned address
  bool large = false;            // --verify-only --large: the > 2^32-byte checks

  void add_options(Cli& cli, const bench::Program<Step>&) {
    cli.add_int("--bytes", &n, 1, kMaxElements,
                "bytes to histogram (with --verify-only: checks at this size alone)");
    cli.add_choice("--dist", &dist, {"uniform", "equal", "skewed", "mix"},
                   "distribution of the bytes (benchmarks only this input)");
    cli.add_int("--value", &value, 0, 255, "the repeated byte of --dist equal and mix");
    cli.add_number("--p", &p, 0.0, 1.0, "--dist mix: probability that a byte is --value");
    cli.add_string("--file", &file,
                   "histogram the bytes of this regular file (in chunks if large)");
    cli.add_int("--offset", &offset, 0, kMaxHistOffset,
                "start the input this many bytes past a 16-byte boundary");
    cli.add_flag("--large", &large, "with --verify-only: the checks above 2^32 bytes");
  }

  // Before the GPU starts: a bad --file, or an option that the mode would leave unused,
  // exits 2 with one line (rejected() says which, or "").
  void validate(const bench::Request<Step>& asked) const {
    const std::string why = rejected(asked.cli, asked.opt);
    if (!why.empty()) asked.cli.reject(why);
  }
  std::string rejected(const Cli& cli, const CommonOptions& opt) const {
    const auto given = [&cli](std::initializer_list<const char*> names) -> std::string {
      for (const char* o : names)
        if (cli.was_given(o)) return o;
      return "";
    };
    std::string o;
    if (!file.empty()) {
      int64_t size = 0;
      const std::string why = file_error(file, &size);
      if (!why.empty()) return why;
      if (!(o = given({"--bytes", "--dist", "--value", "--p", "--seed", "--large"})).empty())
        return o + ": not with --file (its bytes are the input)";
    }
    if (large && !opt.verify_only)
      return "--large: only with --verify-only (the checks above 2^32 bytes)";
    if (opt.verify_only && !(o = given({"--dist", "--value", "--p"})).empty())
      return o + ": not with --verify-only (it checks every distribution)";
    if (large && !(o = given({"--bytes", "--offset"})).empty())
      return o + ": not with --large (its two inputs have their own size and offset)";
    if (cli.was_given("--value") && dist != "equal" && dist != "mix")
      return "--value: only with --dist equal or mix";
    if (cli.was_given("--p") && dist != "mix") return "--p: only with --dist mix";
    return "";
  }

  // The correctness sweep: every step on awkward sizes, start offsets and
  // distributions (with --bytes: on that size alone), compared exactly with
  // histogram_cpu and by the decrement check; each run on a poisoned output and once
  // more unpoisoned. With --large instead: 2^32 + 2^20 + 3 bytes, all equal to 255
  // (bin 255 passes 2^32) and uniform (every byte read from a 64-bit index).
  void verify(const bench::Session<Step>& s) {
    DeviceBuffer<HistCount> d_hist(kBins);
    std::vector<Row> rows;
    for (const Step& step : s.steps) rows.emplace_back(step, d_hist.get());
    if (!file.empty()) {
      FileRun f(s.gpu, s.program.name, file, offset, rows.size());
      while (f.next())
        for (size_t k = 0; k < rows.size(); ++k) f.add(k, rows[k], verify_row(f.data(), rows[k]));
      f.finish(s.report, s.opt, rows);
      return;
    }
    struct Case {
      int64_t n;
      ByteSpec spec;
      int64_t offset;
    };
    const ByteSpec uniform{}, skewed{ByteDist::Skewed}, zeros{ByteDist::Equal, 0},
        ones{ByteDist::Equal, 255};
    const ByteSpec mix{ByteDist::Mix, 7, 0.9};
    const bool one_n = s.cli.was_given("--bytes");
    const auto sizes = [&](std::vector<int64_t> sweep) {
      return one_n ? std::vector<int64_t>{n} : sweep;
    };
    const int64_t longest = (int64_t{1} << 24) + 13, mixed = (int64_t{1} << 24) + 5;
    std::vector<Case> cases;
    if (large) {
      cases = {{kLargeHistBytes, ones, 5}, {kLargeHistBytes, uniform, 0}};
    } else {
      for (int64_t c : sizes({1, 2, 15, 16, 17, 31, 255, 256, 257, 4095, 4097, 65537, 1000003}))
        for (int64_t at : {0, 1, 15}) cases.push_back({c, uniform, at});
      for (int64_t c : sizes({1, 257, 65536, longest}))
        for (ByteSpec b : {zeros, ones}) cases.push_back({c, b, c % 7});
      cases.push_back({one_n ? n : longest, skewed, 3});
      cases.push_back({one_n ? n : mixed, mix, 9});  // long enough for every unrolled loop
      if (!one_n || (offset != 0 && offset != 1 && offset != 15))
        cases.push_back({one_n ? n : mixed, uniform, offset});  // and --offset, whatever it is
    }
    int64_t capacity = 1;
    for (const Case& c : cases) capacity = std::max(capacity, c.n);
    HistData data(s.gpu, large ? "--large" : "--bytes", capacity);
    for (const Case& c : cases) {
      data.generate(c.n, c.spec, s.opt.seed, c.offset);
      const std::string at =
          " n=" + std::to_string(c.n) + " offset=" + std::to_string(c.offset) + " " + data.note();
      if (large && c.spec.dist == ByteDist::Equal)
        s.report.harness_check(data.want()[c.spec.value] == static_cast<uint64_t>(c.n) &&
                                   data.want()[c.spec.value] > 0xFFFFFFFFull,
                               "reference bin " + std::to_string(c.spec.value) + " holds all " +
                                   std::to_string(c.n) + " bytes, beyond 2^32");
      for (const Row& v : rows) {
        const bench::Verdict r = verify_row(data, v);
        s.report.check(r.ok, v.name + at, r.detail);
      }
    }
  }

  void bench(const bench::Session<Step>& s) {
    const CommonOptions& opt = s.opt;
    Report& report = s.report;
    DeviceBuffer<HistCount> d_hist(kBins);
    CubHistogram cub;
    std::vector<Row> rows = {Row(&cub)};
    for (const Step& step : s.steps) rows.emplace_back(step, d_hist.get());
    if (!file.empty()) {
      FileRun f(s.gpu, s.program.name, file, offset, rows.size());
      while (f.next())
        for (size_t k = 0; k < rows.size(); ++k) {
          const Row& v = rows[k];
          const Job job = v.job(f.data().device(), f.data().n());
          f.add(k, v,
                bench::measure(reps_for(v, opt), timed(v, f.data().n(), v.role),
                               RowData{f.data(), v, true}, v.launch, job));
        }
      f.finish(report, opt, rows);
      return;
    }
    std::string slow;  // the slow steps' names
    for (const Row& v : rows)
      if (v.slow) slow += (slow.empty() ? "" : ", ") + v.name;
    if (!slow.empty())
      report.note(slow + ": timed with " + std::to_string(slow_reps(opt).reps) + " reps after " +
                  std::to_string(slow_reps(opt).warmup) + " warm-up");
    HistData data(s.gpu, "--bytes", n);
    if (s.cli.was_given("--dist") || s.cli.was_given("--value") || s.cli.was_given("--p")) {
      ByteSpec spec{ByteDist::Uniform, value, p};
      parse_byte_dist(dist, &spec.dist);  // add_choice has validated the name
      bench_input(report, opt, data, rows, n, spec, offset);
      return;
    }
    bench_input(report, opt, data, rows, n, ByteSpec{}, offset);
    const ByteSpec zeros{ByteDist::Equal, 0};
    if (!slow.empty()) {
      const int64_t cut = std::min(n, kSlowEqualBytes);
      report.note("all bytes equal: " + std::to_string(cut) + " bytes, to keep the run short");
      bench_input(report, opt, data, rows, cut, zeros, offset);
      return;
    }
    bench_input(report, opt, data, rows, n, zeros, offset);
    bench_input(report, opt, data, rows, n, ByteSpec{ByteDist::Skewed}, offset);
    CommonOptions sweep = opt;
    sweep.reps = std::max(1, static_cast<int>(opt.reps * kSweepRepsFraction));
    sweep.warmup = std::min(opt.warmup, 1);
    for (double q : kSweepP)
      bench_input(report, sweep, data, rows, n, ByteSpec{ByteDist::Mix, 0, q}, offset, "sweep",
                  {{"p", q}});
  }
};

}  // namespace sw::histogram
