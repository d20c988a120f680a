// Host-side harness of the histogram chapters (07, 08): the options, the inputs
// with their CPU references, the checks, CUB, the benchmark loop, the
// distribution sweep, --file and the --verify-only sweep. The kernels stay in
// the chapters; each chapter hands this harness a list of variants.
//
//   sw::HistOptions h;
//   sw::add_histogram_options(cli, &h);
//   const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
//   sw::check_histogram_file_or_exit(h);               // bad --file exits 2, GPU or not
//   const sw::Gpu gpu = sw::start_gpu(opt);
//   std::vector<sw::HistVariant> variants = {sw::device_histogram_variant("mine", d_hist, launch)};
//   if (opt.verify_only) return sw::verify_histogram(report, opt, gpu, h, variants);
//   sw::CubHistogram cub;                               // the vendor line, measured first
//   sw::HistData data(gpu, "--bytes", h.bytes);         // device input + CPU reference
//   data.generate(h.bytes, spec, opt.seed, "uniform", h.offset);
//   sw::bench_all(report, opt, data, {cub.variant(), variants[0]});
//
// Counters: every variant returns 256 64-bit totals (HistCount), so no bin wraps
// at 2^32 equal bytes; the --large check proves it with 2^32 + 2^20 + 3 of them.
#pragma once

#include <cub/device/device_histogram.cuh>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "check.h"
#include "cli.h"
#include "data.h"
#include "device.h"
#include "gpu_timer.h"
#include "parallel.h"
#include "report.h"
#include "verify.h"

namespace sw {

constexpr int kBins = 256;
using HistCount = unsigned long long;  // 64-bit totals (the type CUDA's 64-bit atomicAdd takes)
constexpr double kHistOutputBytes = kBins * sizeof(HistCount);
constexpr int64_t kMaxHistOffset = 63;           // --offset: start this many bytes past an aligned address
constexpr int64_t kLargeHistBytes = (int64_t{1} << 32) + (int64_t{1} << 20) + 3;  // --large: above 2^32
constexpr int64_t kFileChunkBytes = int64_t{1} << 30;  // --file: bytes per chunk on the device
static_assert(sizeof(HistCount) == sizeof(uint64_t), "HistCount must be 64 bits");

// --- options -----------------------------------------------------------------------

struct HistOptions {
  int64_t bytes = int64_t{1} << 30;
  std::string dist = "uniform";  // with --dist, --value or --p: benchmark that one input only
  int value = 0;                 // the repeated byte of "equal" and "mix"
  double p = 0.5;                // "mix": probability of `value`
  std::string file;              // histogram the bytes of this file instead
  int64_t offset = 0;            // start of the input past a 256-byte aligned address
  bool large = false;            // --verify-only --large: the > 2^32-byte checks
  bool custom_input = false;     // set by histogram_spec(): --dist, --value or --p was given
};

inline void add_histogram_options(Cli& cli, HistOptions* h) {
  cli.add_int("--bytes", &h->bytes, 1, kMaxElements, "bytes to histogram");
  cli.add_choice("--dist", &h->dist, {"uniform", "equal", "skewed", "mix"},
                 "distribution of the bytes (benchmarks only this input)");
  cli.add_int("--value", &h->value, 0, 255, "the repeated byte of --dist equal and mix");
  cli.add_number("--p", &h->p, 0.0, 1.0, "--dist mix: probability that a byte is --value");
  cli.add_string("--file", &h->file, "histogram the bytes of this file (in chunks if large)");
  cli.add_int("--offset", &h->offset, 0, kMaxHistOffset, "start the input this many bytes past a 16-byte boundary");
  cli.add_flag("--large", &h->large, "with --verify-only: the checks above 2^32 bytes");
}

// The ByteSpec the options ask for; notes whether the user chose an input.
inline ByteSpec histogram_spec(const Cli& cli, HistOptions* h) {
  ByteSpec spec;
  parse_byte_dist(h->dist, &spec.dist);  // add_choice has already validated the name
  spec.value = h->value;
  spec.p = h->p;
  h->custom_input = cli.was_given("--dist") || cli.was_given("--value") || cli.was_given("--p");
  return spec;
}

// A short name for an input: "uniform", "equal-0", "skewed", "mix-0.90-v0".
inline std::string spec_note(ByteSpec s) {
  char buf[48];
  switch (s.dist) {
    case ByteDist::Equal: std::snprintf(buf, sizeof buf, "equal-%d", s.value); break;
    case ByteDist::Mix: std::snprintf(buf, sizeof buf, "mix-%.2f-v%d", s.p, s.value); break;
    default: std::snprintf(buf, sizeof buf, "%s", byte_dist_name(s.dist));
  }
  return buf;
}

// --- --file ------------------------------------------------------------------------

// Exits 2 with one line when --file names nothing readable or an empty file.
inline int64_t check_histogram_file_or_exit(const HistOptions& h) {
  if (h.file.empty()) return 0;
  FILE* f = std::fopen(h.file.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "error: --file cannot read '%s': %s\n", h.file.c_str(), std::strerror(errno));
    std::exit(kExitBadInput);
  }
  int64_t size = -1;
  if (std::fseek(f, 0, SEEK_END) == 0) size = static_cast<int64_t>(std::ftell(f));
  std::fclose(f);
  if (size <= 0) {
    std::fprintf(stderr, "error: --file '%s' is %s\n", h.file.c_str(),
                 size == 0 ? "empty: nothing to histogram" : "not a regular file whose size can be read");
    std::exit(kExitBadInput);
  }
  return size;
}

// --- checks ------------------------------------------------------------------------

// The CPU reference: sw::histogram_cpu on slices of the bytes, on all cores.
inline void histogram_reference(const uint8_t* bytes, int64_t n, uint64_t out[kBins]) {
  std::fill(out, out + kBins, uint64_t{0});
  std::mutex m;
  parallel_for(n, [&](int64_t b, int64_t e) {
    uint64_t part[kBins];
    histogram_cpu(bytes + b, e - b, part);
    std::lock_guard<std::mutex> lock(m);
    for (int i = 0; i < kBins; ++i) out[i] += part[i];
  });
}

// The seed's check, independent of histogram_cpu: take one count off the bin of
// every byte; every bin must end at exactly zero. Prints the first bins that do not.
inline bool decrements_to_zero(const HistCount got[kBins], const uint8_t* bytes, int64_t n) {
  uint64_t left[kBins];
  for (int i = 0; i < kBins; ++i) left[i] = got[i];
  std::mutex m;
  parallel_for(n, [&](int64_t b, int64_t e) {
    uint64_t taken[kBins] = {};
    for (int64_t i = b; i < e; ++i) --taken[bytes[i]];  // wraps: taken = -count
    std::lock_guard<std::mutex> lock(m);
    for (int i = 0; i < kBins; ++i) left[i] += taken[i];
  });
  int bad = 0;
  for (int i = 0; i < kBins; ++i) {
    if (left[i] == 0) continue;
    if (bad++ < 5)
      std::printf("  decrement-to-zero: bin %d ends at %lld\n", i, static_cast<long long>(left[i]));
  }
  return bad == 0;
}

// --- variants ----------------------------------------------------------------------

// One way to compute the histogram. run() must zero its output itself (that is
// part of the operation) and may not keep state between calls.
struct HistVariant {
  std::string name;
  std::function<void(const uint8_t* d_in, int64_t n)> run;
  std::function<void()> poison;                  // fills the output with 0xFF bytes
  std::function<void(HistCount* out)> fetch;     // the output on the host, kBins totals
  std::string role = "step";
  int64_t max_n = kMaxElements;                  // larger inputs are skipped with a note
};

// The common case: the variant writes kBins HistCount totals to d_hist.
inline HistVariant device_histogram_variant(
    std::string name, HistCount* d_hist,
    std::function<void(const uint8_t* d_in, int64_t n, HistCount* d_hist)> launch,
    std::string role = "step") {
  HistVariant v;
  v.name = std::move(name);
  v.role = std::move(role);
  v.run = [=](const uint8_t* d_in, int64_t n) { launch(d_in, n, d_hist); };
  v.poison = [=] { sw::poison(d_hist, kBins * sizeof(HistCount)); };
  v.fetch = [=](HistCount* out) {
    CUDA_CHECK(cudaMemcpy(out, d_hist, kBins * sizeof(HistCount), cudaMemcpyDeviceToHost));
  };
  return v;
}

// cub::DeviceHistogram::HistogramEven with 32-bit counters, the type its tuned
// Hopper policy is for. Its temporary storage is sized for the largest input it
// takes and allocated here, outside any timed loop. Inputs beyond 2^31 - 1 bytes
// are skipped: a 32-bit counter could wrap and CUB's int offsets could not index them.
class CubHistogram {
 public:
  CubHistogram() : counts_(kBins) {
    size_t bytes = 0;
    CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, static_cast<const uint8_t*>(nullptr),
                                                   counts_.get(), kBins + 1, 0, kBins, kMaxCubBytes));
    temp_.allocate(static_cast<int64_t>(std::max<size_t>(bytes, 1)));
    temp_bytes_ = bytes;
  }

  HistVariant variant() {
    HistVariant v;
    v.name = "cub";
    v.role = "vendor";
    v.max_n = kMaxCubBytes;
    v.run = [this](const uint8_t* d_in, int64_t n) {
      size_t bytes = temp_bytes_;  // CUB returns an error if n needed more than kMaxCubBytes did
      CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp_.get(), bytes, d_in, counts_.get(), kBins + 1, 0,
                                                     kBins, static_cast<int>(n)));
    };
    v.poison = [this] { sw::poison(counts_.get(), kBins * sizeof(unsigned)); };
    v.fetch = [this](HistCount* out) {
      unsigned c[kBins];
      CUDA_CHECK(cudaMemcpy(c, counts_.get(), sizeof c, cudaMemcpyDeviceToHost));
      for (int i = 0; i < kBins; ++i) out[i] = c[i];
    };
    return v;
  }

 private:
  static constexpr int kMaxCubBytes = 0x7FFFFFFF;
  DeviceBuffer<unsigned> counts_;
  DeviceBuffer<uint8_t> temp_;
  size_t temp_bytes_ = 0;
};

// --- one input on the device, with its CPU reference ----------------------------------

class HistData {
 public:
  // Room for `capacity` bytes at any offset up to kMaxHistOffset; exits 2 when
  // that does not fit in device memory (`option` names the size in the message).
  HistData(const Gpu& gpu, const std::string& option, int64_t capacity) {
    require_fits(gpu, option, capacity, 1.0, kMaxHistOffset + 1.0 + 2 * kHistOutputBytes);
    capacity_ = capacity;
    device_.allocate(capacity + kMaxHistOffset + 1);
    host_.reset(new uint8_t[static_cast<size_t>(capacity)]);
  }

  // Generates n bytes on the GPU at `offset`, copies them back, computes the reference.
  void generate(int64_t n, ByteSpec spec, uint64_t seed, std::string note, int64_t offset = 0) {
    set_shape(n, offset, std::move(note));
    fill_bytes(device(), n, seed, spec);
    CUDA_CHECK(cudaMemcpy(host_.get(), device(), static_cast<size_t>(n), cudaMemcpyDeviceToHost));
    finish();
  }

  // The host buffer to fill before upload(n, ...): room for capacity() bytes.
  uint8_t* host_buffer() { return host_.get(); }
  void upload(int64_t n, std::string note, int64_t offset = 0) {
    set_shape(n, offset, std::move(note));
    CUDA_CHECK(cudaMemcpy(device(), host_.get(), static_cast<size_t>(n), cudaMemcpyHostToDevice));
    finish();
  }

  const uint8_t* device() const { return device_.get() + offset_; }
  uint8_t* device() { return device_.get() + offset_; }
  const uint8_t* host() const { return host_.get(); }
  int64_t n() const { return n_; }
  int64_t offset() const { return offset_; }
  int64_t capacity() const { return capacity_; }
  const std::string& note() const { return note_; }
  const uint64_t* want() const { return want_; }

  // Exact comparison with the CPU reference; `decrement` adds the seed's check.
  bool check(const HistCount got[kBins], bool decrement) const {
    bool ok = count_mismatches("bin", reinterpret_cast<const uint64_t*>(got), want_, kBins) == 0;
    if (decrement) ok = decrements_to_zero(got, host_.get(), n_) && ok;
    return ok;
  }

  // Poisons the output, runs, checks; then runs again without poisoning and
  // checks again, so that a variant that forgets to zero (and adds onto the
  // last run's counts) fails. The decrement check runs on the first result.
  bool run_and_check(const HistVariant& v, bool decrement) const {
    HistCount got[kBins];
    v.poison();
    v.run(device(), n_);
    CHECK_LAUNCH();
    v.fetch(got);
    bool ok = check(got, decrement);
    v.run(device(), n_);
    CHECK_LAUNCH();
    v.fetch(got);
    ok = check(got, false) && ok;
    return ok;
  }

 private:
  void set_shape(int64_t n, int64_t offset, std::string note) {
    if (n < 1 || n > capacity_ || offset < 0 || offset > kMaxHistOffset) {
      std::fprintf(stderr, "internal error: HistData input of %lld bytes at offset %lld, capacity %lld\n",
                   static_cast<long long>(n), static_cast<long long>(offset), static_cast<long long>(capacity_));
      std::exit(kExitFailed);
    }
    n_ = n;
    offset_ = offset;
    note_ = std::move(note);
  }
  void finish() { histogram_reference(host_.get(), n_, want_); }

  DeviceBuffer<uint8_t> device_;
  std::unique_ptr<uint8_t[]> host_;
  int64_t capacity_ = 0, n_ = 0, offset_ = 0;
  std::string note_;
  uint64_t want_[kBins] = {};
};

// --- benchmark -------------------------------------------------------------------

// Checks one variant on the current input (poisoned output; the seed's
// decrement check when `decrement`), times it with sw::time_gpu, checks the
// last timed result again, and reports it. Bytes moved: the input once, the
// 256 64-bit totals once.
inline void bench_histogram(Report& report, const CommonOptions& opt, const HistData& data,
                            const HistVariant& v, bool decrement, std::string role = "",
                            std::map<std::string, double> extra = {}, std::string note_suffix = "") {
  if (data.n() > v.max_n) {
    report.note(v.name + " skipped on " + data.note() + ": it takes at most " + std::to_string(v.max_n) +
                " bytes");
    return;
  }
  bool ok = data.run_and_check(v, decrement);
  const Timing t = time_gpu(opt, [&] { v.run(data.device(), data.n()); });
  HistCount got[kBins];
  v.fetch(got);
  ok = data.check(got, false) && ok;
  Result r{v.name, data.n(), static_cast<double>(data.n()) + kHistOutputBytes, t, ok,
           role.empty() ? v.role : role};
  r.note = data.note() + note_suffix;
  r.extra = std::move(extra);
  report.add(r);
}

// Every variant on one input. Besides the exact comparison of every result, the
// decrement check (a full pass over the input on the host) runs once per input,
// on the last variant: the chapter's final kernel.
inline void bench_all(Report& report, const CommonOptions& opt, const HistData& data,
                      const std::vector<HistVariant>& variants, std::string note_suffix = "") {
  for (const auto& v : variants) bench_histogram(report, opt, data, v, &v == &variants.back(), "", {}, note_suffix);
}

// The distribution sweep: Mix with probability p of byte `value`, from uniform
// (p = 0) to all equal (p = 1); role "sweep", extra {"p": p}.
inline void sweep_histogram(Report& report, const CommonOptions& opt, HistData& data, int64_t n,
                            const std::vector<HistVariant>& variants, const std::vector<double>& ps,
                            int value = 0, int64_t offset = 0) {
  for (double p : ps) {
    ByteSpec spec{ByteDist::Mix, value, p};
    data.generate(n, spec, opt.seed, spec_note(spec), offset);
    for (const auto& v : variants)
      bench_histogram(report, opt, data, v, &v == &variants.back(), "sweep", {{"p", p}});
  }
}

// --- --file -------------------------------------------------------------------------

// Histograms the file in chunks of at most kFileChunkBytes (a file larger than
// device memory streams through). Each variant is checked on every chunk; its
// chunk totals add up on the host in 64 bits and must equal the file's CPU
// histogram. Without --verify-only, each chunk is also timed (the disk and the
// host-to-device copy are not) and the times add up.
inline int histogram_file(Report& report, const CommonOptions& opt, const Gpu& gpu, const HistOptions& h,
                          const std::vector<HistVariant>& variants) {
  const int64_t size = check_histogram_file_or_exit(h);
  const int64_t chunk = std::min(size, kFileChunkBytes);
  HistData data(gpu, "--file chunk", chunk);
  FILE* f = std::fopen(h.file.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "error: --file cannot read '%s': %s\n", h.file.c_str(), std::strerror(errno));
    return kExitBadInput;
  }
  struct Tally {
    uint64_t totals[kBins] = {};
    double ms_median = 0, ms_min = 0;
    int reps = 0;
    bool ok = true;
  };
  std::vector<Tally> tally(variants.size());
  uint64_t want[kBins] = {};
  int64_t done = 0;
  while (done < size) {
    const int64_t n = std::min(chunk, size - done);
    if (std::fread(data.host_buffer(), 1, static_cast<size_t>(n), f) != static_cast<size_t>(n)) {
      std::fprintf(stderr, "error: --file '%s': read failed after %lld of %lld bytes: %s\n", h.file.c_str(),
                   static_cast<long long>(done), static_cast<long long>(size),
                   std::ferror(f) ? std::strerror(errno) : "the file got shorter");
      std::fclose(f);
      return kExitFailed;
    }
    data.upload(n, "file", h.offset);
    for (int i = 0; i < kBins; ++i) want[i] += data.want()[i];
    for (size_t k = 0; k < variants.size(); ++k) {
      const HistVariant& v = variants[k];
      Tally& t = tally[k];
      t.ok = data.run_and_check(v, true) && t.ok;
      if (!opt.verify_only) {
        const Timing tm = time_gpu(opt, [&] { v.run(data.device(), n); });
        t.ms_median += tm.ms_median;
        t.ms_min += tm.ms_min;
        t.reps = tm.reps;
      }
      HistCount got[kBins];
      v.fetch(got);
      t.ok = data.check(got, false) && t.ok;
      for (int i = 0; i < kBins; ++i) t.totals[i] += got[i];
    }
    done += n;
  }
  std::fclose(f);
  if (size > chunk)
    report.note("file of " + std::to_string(size) + " bytes in chunks of " + std::to_string(chunk) +
                "; times add up the chunks' medians");
  for (size_t k = 0; k < variants.size(); ++k) {
    const bool ok = tally[k].ok && count_mismatches("file bin", tally[k].totals, want, kBins) == 0;
    if (opt.verify_only) {
      report.check(ok, variants[k].name + " file=" + h.file);
    } else {
      Result r{variants[k].name, size, static_cast<double>(size) + kHistOutputBytes,
               Timing{tally[k].ms_median, tally[k].ms_min, tally[k].reps}, ok, variants[k].role};
      r.note = "file";
      report.add(r);
    }
  }
  return report.exit_code();
}

// --- --verify-only ----------------------------------------------------------------------

// The correctness sweep: every variant on awkward sizes, start offsets and
// distributions, compared exactly with histogram_cpu and by the decrement check;
// each run on a poisoned output and once more unpoisoned. With --large instead:
// 2^32 + 2^20 + 3 bytes, all equal to 255 (bin 255 passes 2^32) and uniform
// (every byte read from a 64-bit index). With --file: the file's bytes.
inline int verify_histogram(Report& report, const CommonOptions& opt, const Gpu& gpu, const HistOptions& h,
                            const std::vector<HistVariant>& variants) {
  if (!h.file.empty()) return histogram_file(report, opt, gpu, h, variants);
  struct Case {
    int64_t n;
    ByteSpec spec;
    int64_t offset;
  };
  const ByteSpec uniform{}, skewed{ByteDist::Skewed}, zeros{ByteDist::Equal, 0}, ones{ByteDist::Equal, 255};
  const ByteSpec mix{ByteDist::Mix, 7, 0.9};
  std::vector<Case> cases;
  if (h.large) {
    cases = {{kLargeHistBytes, ones, 5}, {kLargeHistBytes, uniform, 0}};
  } else {
    for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{31}, int64_t{255},
                      int64_t{256}, int64_t{257}, int64_t{4095}, int64_t{4097}, int64_t{65537}, int64_t{1000003}})
      for (int64_t offset : {int64_t{0}, int64_t{1}, int64_t{15}}) cases.push_back({n, uniform, offset});
    for (int64_t n : {int64_t{1}, int64_t{257}, int64_t{65536}, (int64_t{1} << 24) + 13})
      for (ByteSpec s : {zeros, ones}) cases.push_back({n, s, n % 7});
    cases.push_back({(int64_t{1} << 24) + 13, skewed, 3});
    cases.push_back({(int64_t{1} << 24) + 5, mix, 9});          // long enough for every unrolled loop
    cases.push_back({(int64_t{1} << 24) + 5, uniform, h.offset});  // and --offset, whatever it is
  }
  int64_t capacity = 1;
  for (const Case& c : cases) capacity = std::max(capacity, c.n);
  HistData data(gpu, h.large ? "--large" : "--bytes", capacity);
  for (const Case& c : cases) {
    data.generate(c.n, c.spec, opt.seed, spec_note(c.spec), c.offset);
    const std::string at = " n=" + std::to_string(c.n) + " offset=" + std::to_string(c.offset) + " " + data.note();
    if (h.large && c.spec.dist == ByteDist::Equal)
      report.check(data.want()[c.spec.value] == static_cast<uint64_t>(c.n) &&
                       data.want()[c.spec.value] > 0xFFFFFFFFull,
                   "reference bin " + std::to_string(c.spec.value) + " holds all " + std::to_string(c.n) +
                       " bytes, beyond 2^32");
    for (const HistVariant& v : variants) {
      if (c.n > v.max_n) continue;
      report.check(data.run_and_check(v, true), v.name + at);
    }
  }
  return report.exit_code();
}

}  // namespace sw
