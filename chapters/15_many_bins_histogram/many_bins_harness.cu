// Chapter 15's problem (see many_bins_harness.h): its options, the input, the rows
// and their measured runs. Every timed row goes through sw::bench::measure
// (common/bench/protocol.h) with the row's launcher and its job:
//   main -> sw::bench::run -> ManyBins::bench -> bench_rows
//   -> sw::bench::measure(opt, row, data, launch, job) -> launch_<step> -> <<<>>>
// (CUB's row: launch_cub<T>, which calls CUB), and --verify-only's:
//   main -> sw::bench::run -> ManyBins::verify -> verify_row
//   -> sw::bench::check_twice(data, launch, job) -> launch_<step> -> <<<>>>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "common/bench/protocol.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/problems/histogram.h"
#include "many_bins_harness.h"

namespace ch15 {

namespace hg = sw::histogram;

// CUB's HistogramEven for 16-bit values (up to 2^16 bins) and 32-bit ones (2^20).
struct CubLines {
  std::tuple<hg::CubHistogramEven<uint16_t>, hg::CubHistogramEven<uint32_t>> at{int64_t{1} << 16,
                                                                                int64_t{1} << 20};
  template <class T>
  hg::CubHistogramEven<T>& of() {
    return std::get<hg::CubHistogramEven<T>>(at);
  }
  template <class T>
  const hg::CubHistogramEven<T>& of() const {
    return std::get<hg::CubHistogramEven<T>>(at);
  }
};

namespace {

// CUB's row: the launcher calls CUB on the job's values with what prepare_cub sized.
template <class T>
void launch_cub(const Job& j) {
  const hg::CubHistogramEven<T>& cub = j.cub->of<T>();
  size_t bytes = cub.temp_bytes();
  CUDA_CHECK(sw::cub_histogram_even(cub.temp(), bytes, j.values<T>(), cub.counts(), cub.levels(),
                                    typename hg::CubHistogramEven<T>::Level{0}, cub.upper(),
                                    static_cast<int>(j.n)));
  CHECK_LAUNCH();
}

// A row whose measurement with one timed run (and no warm-up) takes longer than this
// keeps that measurement instead of being measured again with opt.reps.
constexpr double kSlowRunMs = 20;

// The default run: the regime map's bin counts and the p-sweep, with a quarter of the reps.
const uint32_t kMapBins[] = {256,   512,   1024,  2048,   4096,   8192,   16384,  32768,
                             49152, 65536, 98304, 131072, 262144, 524288, 1048576};
const double kSweepP[] = {0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0};
constexpr double kMapRepsFraction = 0.25;

Job job_for(Context& c, const Input& in, uint32_t bins, int cluster) {
  return Job{in.device(), in.n(), in.bits(), bins, cluster, c.hist.get(), &c.ws, c.cub.get()};
}

// The row's launcher for this job, instantiated for its value width: the step table's
// (auto's: the step it picks), or launch_cub<T>. Chosen before any timed loop.
Launch launcher(const Row& r, const Job& j) {
  if (r.step) return r.step->more.pick ? r.step->more.pick(j) : r.step->launch;
  return dispatch_bits(j.value_bits, [](auto t) -> Launch { return launch_cub<decltype(t)>; });
}

// CUB's HistogramEven with the steps' levels: bins over [0, 2^16) for 16-bit values,
// [0, 2^20) for 32-bit ones.
void prepare_cub(Context& c, const Input& in, uint32_t bins) {
  if (!c.cub) c.cub = std::make_unique<CubLines>();
  dispatch_bits(in.bits(), [&](auto t) {
    using Cub = hg::CubHistogramEven<decltype(t)>;
    c.cub->of<decltype(t)>().prepare(static_cast<int>(bins),
                                     typename Cub::Level{1} << range_bits(in.bits()), in.n());
  });
}

// A row's data for sw::bench::measure and check_once: the row's output (and
// the steps' workspace) to poison, its totals against the reference, and new values
// from another seed for --graded-timing (reseed: Input::reseed, with the reference
// of that seed; `want` stays the reference of the first seed).
struct RowData {
  Context& c;
  Input& in;
  uint32_t bins;
  const Row& r;
  const std::vector<uint64_t>& want;  // of first_seed
  uint64_t first_seed;
  mutable std::vector<uint64_t> other;  // the reference of the current seed, if another

  void poison() const {
    if (r.step) {
      sw::poison(c.hist.get(), sizeof(HistCount) * bins);
      c.ws.poison();
    } else {
      dispatch_bits(in.bits(), [&](auto t) { c.cub->of<decltype(t)>().poison(); });
    }
  }
  sw::bench::Verdict check() const {
    const std::vector<HistCount> got =
        r.step ? sw::read(c.hist.get(), bins)
               : dispatch_bits(in.bits(), [&](auto t) { return c.cub->of<decltype(t)>().read(); });
    const std::vector<uint64_t>& ref = in.seed() == first_seed ? want : other;
    return sw::compare_bins("bin", got.data(), ref.data(), static_cast<int64_t>(ref.size()));
  }
  bool reseed(uint64_t s) const {
    in.reseed(s);
    if (s != first_seed) other = in.want(bins);
    return true;
  }
  uint64_t seed() const { return in.seed(); }
};

// Every row at this bin count (rows_for), each measured by sw::bench::measure with
// its launcher and job, and reported (role "step" or "sweep"; CUB's rows are "vendor"
// where the steps' are "step"; `extra` adds the sweep's p): first with one timed run
// and no warm-up, then, unless that run took longer than kSlowRunMs, again with opt's
// reps (the first measurement is not reported then). With --graded-timing measure()
// reseeds the input for every call of a step's row (CUB's rows are timed the ordinary way)
// and restores it after each row.
void bench_rows(Context& c, const sw::CommonOptions& opt, Input& in, uint32_t bins,
                const std::string& role, bool all_sizes,
                const std::map<std::string, double>& extra = {}) {
  const std::vector<uint64_t> want = in.want(bins);
  for (const Row& r : rows_for(c, in, bins, true, all_sizes)) {
    if (!r.step) prepare_cub(c, in, bins);
    const Job job = job_for(c, in, bins, r.cluster);
    const Launch launch = launcher(r, job);
    const RowData data{c, in, bins, r, want, in.seed(), {}};
    const double bytes = static_cast<double>(in.n()) * (in.bits() / 8) +
                         sizeof(HistCount) * static_cast<double>(bins);
    const std::string row_role = r.step ? role : (role == "step" ? "vendor" : role);  // CUB's
    const sw::bench::Row row{r.name(), in.n(), bytes, 1, false, row_role};
    sw::CommonOptions once = opt;
    once.reps = 1;
    once.warmup = 0;
    sw::Result res = sw::bench::measure(once, row, data, launch, job);
    if (res.timing.ms_median <= kSlowRunMs) res = sw::bench::measure(opt, row, data, launch, job);
    res.problem = "histogram-" + std::to_string(bins);
    res.note = in.note();
    for (const auto& e : extra) res.extra[e.first] = e.second;
    res.extra["bins"] = bins;
    res.extra["value_bits"] = in.bits();
    if (r.step && r.step->more.clusters) {
      res.extra["cluster"] = r.cluster;  // blocks per cluster, and clusters resident at once:
      res.extra["clusters"] = r.step->more.clusters(job);
    }
    if (in.offset()) res.extra["offset"] = static_cast<double>(in.offset());
    res.extra["gvalues_s"] =
        res.timing.ms_median > 0 ? static_cast<double>(in.n()) / (res.timing.ms_median * 1e6) : 0.0;
    c.report.add(res);
  }
}

}  // namespace

Context::Context(sw::Report& r, std::string variant) : report(r), only(std::move(variant)) {}
Context::~Context() = default;

Input::Input(const sw::Gpu& gpu, const std::string& option, int64_t max_n, int max_bits,
             double extra_per_value)
    : capacity_(max_n * (max_bits / 8) + (kMaxOffset + 1) * 4) {
  sw::require_fits(gpu, option, max_n, max_bits / 8 + extra_per_value,
                   static_cast<double>(capacity_ - max_n * (max_bits / 8)));
  device_.allocate(capacity_);
  host_.reset(new uint8_t[static_cast<size_t>(capacity_)]);
}

void Input::generate(int value_bits, int64_t n, const ValueSpec& spec, uint64_t seed,
                     int64_t offset) {
  bits_ = value_bits;
  n_ = n;
  offset_ = offset;
  spec_ = spec;
  if (n * (value_bits / 8) + offset * 4 > capacity_) {
    std::fprintf(stderr, "internal error: input of %lld values does not fit\n",
                 static_cast<long long>(n));
    std::exit(sw::kExitFailed);
  }
  seed_ = seed;
  fill_values(device_.get() + offset_ * (bits_ / 8), value_bits, n, seed, spec);
  CUDA_CHECK(cudaMemcpy(host_.get(), device(), static_cast<size_t>(n * (value_bits / 8)),
                        cudaMemcpyDeviceToHost));
  counts_ = count_values(host_.get(), value_bits, n);
}

std::vector<Row> rows_for(Context& c, const Input& in, uint32_t bins, bool with_cub,
                          bool all_sizes) {
  std::vector<Row> out;
  const bool cub_fits = in.n() <= hg::CubHistogramEven<uint32_t>::kMaxN;
  if (with_cub && (c.only == "all" || c.only == "cub") && cub_fits) out.push_back({nullptr, 0});
  for (const Step& s : steps_for(in.bits())) {
    if (c.only != "all" && c.only != s.name) continue;
    if (!s.more.clusters) {
      if (s.more.fits(job_for(c, in, bins, 0))) out.push_back({&s, 0});
      continue;
    }
    for (int k : kClusterSizes) {
      if (!s.more.fits(job_for(c, in, bins, k))) continue;
      out.push_back({&s, k});
      if (!all_sizes) break;  // the smallest cluster that fits
    }
  }
  return out;
}

sw::bench::Verdict verify_row(Context& c, Input& in, uint32_t bins,
                              const std::vector<uint64_t>& want, const Row& r) {
  if (!r.step) prepare_cub(c, in, bins);
  const Job job = job_for(c, in, bins, r.cluster);
  const Launch launch = launcher(r, job);
  const RowData data{c, in, bins, r, want, in.seed(), {}};
  return sw::bench::check_twice(data, launch, job);
}

// --- the problem ------------------------------------------------------------------------

void ManyBins::add_options(sw::Cli& cli, const sw::bench::Program<Step>&) {
  cli.add_int("--n", &n, 1, sw::kMaxElements,
              "values to histogram (16-bit up to 65536 bins, 32-bit beyond)");
  cli.add_int("--bins", &bins, 256, int64_t{1} << 20,
              "bins, evenly spaced over the values' range (benchmarks this count only)");
  cli.add_choice("--dist", &dist, {"uniform", "equal", "mix", "image"},
                 "distribution of the values (benchmarks this input only)");
  cli.add_int("--value", &value, 0, 65535, "the repeated value of --dist equal and mix");
  cli.add_number("--p", &p, 0.0, 1.0, "--dist mix: probability that a value is --value");
  cli.add_int("--offset", &offset, 0, kMaxOffset,
              "start the input this many values past a 16-byte boundary");
  cli.add_flag("--large", &large, "with --verify-only: the checks above 2^32 values");
}

void ManyBins::validate(const sw::bench::Request<Step>& asked) const {
  const sw::Cli& cli = asked.cli;
  const sw::CommonOptions& opt = asked.opt;
  if (opt.verify_only && asked.variant == "cub")
    cli.reject("--variant cub: --verify-only checks the steps");
  if (opt.verify_only) {
    for (const char* o : {"--n", "--bins", "--dist", "--value", "--p", "--offset"})
      if (cli.was_given(o))
        cli.reject(std::string(o) + ": --verify-only checks its own sizes and inputs");
  } else if (cli.was_given("--large")) {
    cli.reject("--large: only with --verify-only");
  }
  if (cli.was_given("--value") && dist != "equal" && dist != "mix")
    cli.reject("--value: only with --dist equal or mix");
  if (cli.was_given("--p") && dist != "mix") cli.reject("--p: only with --dist mix");
}

void ManyBins::start(const sw::bench::Session<Step>& s) const {
  std::string why;
  if (!has_clusters(&why))
    for (const char* step : {"cluster-dsmem", "cluster-packed16"}) s.report.skip(step, why);
}

// Without --bins, --dist, --value and --p, per value width: the headline inputs at
// 65,536 (16-bit) or 2^20 (32-bit) bins with every cluster size, the regime map on
// uniform and all-equal values at every bin count of that width, and (16-bit) the
// p-sweep. With them, that one input: 16-bit values up to 65,536 bins, 32-bit ones
// beyond. The input has room for partition's 2 bytes per value of scratch.
void ManyBins::bench(const sw::bench::Session<Step>& s) {
  start(s);
  Context c{s.report, s.variant};
  const sw::CommonOptions& opt = s.opt;
  if (s.cli.was_given("--bins") || s.cli.was_given("--dist") || s.cli.was_given("--value") ||
      s.cli.was_given("--p")) {
    const int bits = bins <= kHeadlineSmall ? 16 : 32;
    Input in(s.gpu, "--n", n, bits, 2.0);
    const Dist d = dist == "equal"   ? Dist::Equal
                   : dist == "mix"   ? Dist::Mix
                   : dist == "image" ? Dist::Image
                                     : Dist::Uniform;
    in.generate(bits, n, {d, static_cast<uint32_t>(value), p}, opt.seed, offset);
    bench_rows(c, opt, in, static_cast<uint32_t>(bins), "step", true);
    return;
  }
  Input in(s.gpu, "--n", n, 32, 2.0);
  sw::CommonOptions map = opt;
  map.reps = std::max(1, static_cast<int>(opt.reps * kMapRepsFraction));
  map.warmup = std::min(opt.warmup, 1);
  for (int bits : {16, 32}) {
    const uint32_t headline = bits == 16 ? kHeadlineSmall : kHeadlineLarge;
    const ValueSpec specs[] = {
        {Dist::Uniform}, {Dist::Equal, 0}, {Dist::Mix, 0, 0.9}, {Dist::Image}};
    for (const ValueSpec& spec : specs) {
      in.generate(bits, n, spec, opt.seed, offset);
      bench_rows(c, opt, in, headline, "step", true);
      if (spec.dist == Dist::Image) continue;
      for (uint32_t b : kMapBins)
        if ((bits == 16) == (b <= kHeadlineSmall)) bench_rows(c, map, in, b, "sweep", false);
    }
  }
  for (double q : kSweepP) {
    in.generate(16, n, {Dist::Mix, 0, q}, opt.seed, offset);
    bench_rows(c, map, in, kHeadlineSmall, "sweep", false, {{"p", q}});
  }
}

}  // namespace ch15
