// Chapter 18's inputs, reference and checks, CUB's sort, and its problem's options,
// --verify-only checks and rows (part of the program 18_radix_sort; the sorts
// themselves are in 18_radix_sort.cu).
//
// The reference sorts (key << 32 | index) on all cores: a pass that splits the
// pairs by the key's top 16 bits, then std::sort of each part. Its order is the
// stable order: equal keys by their index. Pairs are checked against it exactly,
// value by value (a value is its key's index in the input, so an unstable sort, a
// lost or a doubled key all show); keys alone against its keys.
#include <algorithm>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <string>
#include <vector>

#include "common/bench/protocol.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/parallel.h"
#include "common/timing.h"
#include "sort_problem.h"

namespace ch18 {
namespace {

constexpr int kFillBlock = 256;
constexpr int kBucketBits = 16;  // the reference's first split: by the top 16 bits

__global__ void fill_keys(uint32_t* keys, uint32_t* values, int64_t n, Keys pattern,
                          uint64_t seed) {
  const int64_t stride = int64_t{gridDim.x} * kFillBlock;
  for (int64_t i = int64_t{blockIdx.x} * kFillBlock + threadIdx.x; i < n; i += stride) {
    keys[i] = key_value(pattern, seed, i, n);
    if (values) values[i] = static_cast<uint32_t>(i);
  }
}

}  // namespace

SortData::SortData(int64_t n, bool with_values, Keys k, uint64_t s)
    : n(n), pairs(with_values), pattern(k), seed(s) {
  keys_in.allocate(n);
  keys_out.allocate(n);
  tmp.allocate(pairs ? 2 * values_tmp_at() : n);
  if (pairs) {
    values_in.allocate(n);
    values_out.allocate(n);
  }
  scratch.allocate(2 * kDigits * (n / kMinTile + 1) + 2);
  digits.allocate(2 * kPasses * kDigits);
  state.allocate(kDigits * (n / kMinTile + 1) + 1);
  reseed(s);
}

void SortData::reseed(uint64_t s) const {
  seed = s;
  fill_keys<<<static_cast<unsigned>(
                  std::min<int64_t>(sw::ceil_div(n, kFillBlock), 8 * sw::sm_count())),
              kFillBlock>>>(keys_in.get(), values_in.get(), n, pattern, seed);
  CHECK_LAUNCH();
  keys_digest = sw::device_digest(keys_in.get(), keys_in.bytes());
  if (pairs) values_digest = sw::device_digest(values_in.get(), values_in.bytes());
}

SortCall SortData::call(sw::scan::Tile t, cudaStream_t stream) const {
  return {keys_in.get(),
          pairs ? values_in.get() : nullptr,
          keys_out.get(),
          values_out.get(),
          tmp.get(),
          pairs ? tmp.get() + values_tmp_at() : nullptr,
          n,
          t,
          scratch.get(),
          digits.get(),
          state.get(),
          &tickets,
          stream};
}

void SortData::poison() const {
  tickets = 0;
  for (const auto* b : {&keys_out, &values_out, &tmp})
    if (b->get()) sw::poison(b->get(), b->bytes());
  for (const auto* b : {&scratch, &digits, &state}) sw::poison(b->get(), b->bytes());
}

std::vector<uint64_t> reference_sort(Keys pattern, uint64_t seed, int64_t n) {
  constexpr int64_t kBuckets = int64_t{1} << kBucketBits;
  const int64_t slices = sw::host_threads();
  const auto pair = [&](int64_t i) {
    return uint64_t{key_value(pattern, seed, i, n)} << 32 | static_cast<uint64_t>(i);
  };
  std::vector<int64_t> at(slices * kBuckets, 0);  // slice s, bucket b: at[s * kBuckets + b]
  sw::parallel_for(
      slices,
      [&](int64_t b, int64_t e) {
        for (int64_t s = b; s < e; ++s)
          for (int64_t i = n * s / slices; i < n * (s + 1) / slices; ++i)
            ++at[s * kBuckets + (pair(i) >> (64 - kBucketBits))];
      },
      1);
  std::vector<int64_t> bucket_start(kBuckets + 1, 0);
  int64_t next = 0;
  for (int64_t bucket = 0; bucket < kBuckets;
       ++bucket) {  // bucket-major: each slice's part of a bucket in turn
    bucket_start[bucket] = next;
    for (int64_t s = 0; s < slices; ++s) {
      const int64_t c = at[s * kBuckets + bucket];
      at[s * kBuckets + bucket] = next;
      next += c;
    }
  }
  bucket_start[kBuckets] = next;
  std::vector<uint64_t> out(static_cast<size_t>(n));
  sw::parallel_for(
      slices,
      [&](int64_t b, int64_t e) {
        for (int64_t s = b; s < e; ++s)
          for (int64_t i = n * s / slices; i < n * (s + 1) / slices; ++i) {
            const uint64_t p = pair(i);
            out[at[s * kBuckets + (p >> (64 - kBucketBits))]++] = p;
          }
      },
      1);
  sw::parallel_for(
      kBuckets,
      [&](int64_t b, int64_t e) {
        for (int64_t bucket = b; bucket < e; ++bucket)
          std::sort(out.begin() + bucket_start[bucket], out.begin() + bucket_start[bucket + 1]);
      },
      1024);
  return out;
}

sw::bench::Verdict check_sort(const SortData& d, const std::vector<uint64_t>& ref) {
  sw::scan::Mismatches bad;
  const auto compare = [&](const uint32_t* device, const char* what, auto want) {
    sw::scan::for_each_piece(device, d.n, [&](const uint32_t* host, int64_t first, int64_t count) {
      sw::parallel_for(count, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          if (host[i] != want(ref[first + i]))
            bad.add(first + i, sw::scan::got_want(what, first + i, host[i], want(ref[first + i])));
      });
    });
  };
  compare(d.keys_out.get(), "keys", [](uint64_t p) { return static_cast<uint32_t>(p >> 32); });
  if (d.pairs)
    compare(d.values_out.get(), "values", [](uint64_t p) { return static_cast<uint32_t>(p); });
  sw::bench::Verdict v = bad.verdict();
  if (v.ok) v = sw::scan::tickets_drawn(d.state.get(), d.tickets);
  const bool kept =
      sw::device_digest(d.keys_in.get(), d.keys_in.bytes()) == d.keys_digest &&
      (!d.pairs || sw::device_digest(d.values_in.get(), d.values_in.bytes()) == d.values_digest);
  if (v.ok && !kept) v = {false, "input changed: the step wrote into its input"};
  return v;
}

namespace {

// A row's data as sw::bench::measure and check_once see it. reseed (--graded-timing)
// writes new keys and sorts them again on the host; the reference of the first seed is kept.
struct SortRow {
  const SortData& d;
  const std::vector<uint64_t>& ref;  // of first_seed
  uint64_t first_seed;
  mutable std::vector<uint64_t> other;  // the reference of the current seed, if another
  void poison() const { d.poison(); }
  sw::bench::Verdict check() const { return check_sort(d, d.seed == first_seed ? ref : other); }
  std::vector<sw::bench::Buffer> outputs() const {  // what check_sort reads (keys alone: no values)
    return {{d.keys_out.get(), static_cast<int64_t>(d.keys_out.bytes())},
            {d.values_out.get(), static_cast<int64_t>(d.values_out.bytes())},
            {d.state.get(), sizeof(Count)},
            {&d.tickets, sizeof d.tickets}};
  }
  bool reseed(uint64_t s) const {
    d.reseed(s);
    if (s != first_seed) other = reference_sort(d.pattern, s, d.n);
    return true;
  }
  uint64_t seed() const { return d.seed; }
};

// A row after measure(): its problem, its keys' pattern, GKey/s, and a step's tile.
void describe_row(sw::Result& r, const SortData& d, const sw::scan::Tile* t) {
  r.problem = d.pairs ? "sort-pairs" : "sort-keys";
  r.note = keys_name(d.pattern);
  r.extra["gkeys_s"] = static_cast<double>(d.n) / (r.timing.ms_median * 1e6);
  if (t) r.extra.insert({{"tile_rows", t->rows}, {"block", t->block}});
}

}  // namespace

CubSort::CubSort(const SortData& d) : d_(d) {
  // no storage yet: CUB only writes the bytes it needs into bytes_
  if (d.pairs)
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes_, d.keys_in.get(), d.keys_out.get(),
                                               d.values_in.get(), d.values_out.get(), d.n, 0, 32));
  else
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes_, d.keys_in.get(), d.keys_out.get(),
                                              d.n, 0, 32));
  temp_.allocate(static_cast<int64_t>(std::max<size_t>(bytes_, 1)));
}

void CubSort::operator()(cudaStream_t stream) const {
  size_t bytes = bytes_;
  if (d_.pairs)
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.get(), bytes, d_.keys_in.get(),
                                               d_.keys_out.get(), d_.values_in.get(),
                                               d_.values_out.get(), d_.n, 0, 32, stream));
  else
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp_.get(), bytes, d_.keys_in.get(),
                                              d_.keys_out.get(), d_.n, 0, 32, stream));
}

// --- the problem -------------------------------------------------------------------------------

void SortProblem::add_options(sw::Cli& cli, const sw::bench::Program<Step>&) {
  cli.add_int("--n", &n, 1, sw::kMaxElements,
              "keys to sort (at most 2^32 - 1: a value is its key's u32 index)");
  cli.add_choice("--sort", &sort, {"both", "keys", "pairs"},
                 "keys alone, key-value pairs, or both");
  sw::scan::add_tile_options(cli, &rows, &block, tiles);
  cli.add_flag("--large", &large, "with --verify-only: 2^31 + 17 keys (64-bit offsets)");
}

// Every step on every pattern, keys and (or) pairs, at the tile: a PASS/FAIL line each.
void SortProblem::verify(const sw::bench::Session<Step>& s) const {
  const bool n_given = s.cli.was_given("--n");
  const std::vector<int64_t> sizes = large     ? std::vector<int64_t>{(int64_t{1} << 31) + 17}
                                     : n_given ? std::vector<int64_t>{n}
                                               : sw::scan::verify_sizes();
  sw::require_fits(s.gpu, large ? "--large" : "--n", *std::max_element(sizes.begin(), sizes.end()),
                   bytes_per_key(sort != "keys"));
  for (int64_t size : sizes)
    for (Keys pattern : large ? std::vector<Keys>{Keys::kRandom} : kAllKeys) {
      const std::vector<uint64_t> ref = reference_sort(pattern, s.opt.seed, size);
      for (bool pairs : {false, true}) {
        if (sort == (pairs ? "keys" : "pairs")) continue;
        const SortData d(size, pairs, pattern, s.opt.seed);
        for (const Step& st : s.steps) {
          const sw::scan::Tile t = tile_of(st, sw::scan::Tile{default_rows, tiles.block});
          const sw::bench::Verdict v =
              sw::bench::check_once(SortRow{d, ref, d.seed, {}}, st.launch, d.call(t));
          s.report.check(v.ok,
                         std::string(st.name) + (pairs ? " pairs " : " keys ") +
                             keys_name(pattern) + " n=" + std::to_string(size) + " rows=" +
                             std::to_string(t.rows) + " block=" + std::to_string(t.block),
                         v.detail);
        }
      }
    }
}

// Random keys, CUB and each step, keys and pairs: at 2^20, 2^22, ... up to --n and at --n
// with every step (onesweep's tile swept first); at --n alone with --variant (what the
// lab checker times). Bytes: one read and one write of every key (and value).
void SortProblem::bench(const sw::bench::Session<Step>& s) const {
  const bool with_pairs = sort != "keys";
  sw::require_fits(s.gpu, "--n", n,
                   bytes_per_key(with_pairs) + (with_pairs ? 8 : 4));  // and CUB's buffers
  const bool every = s.variant == "all";
  sw::scan::Tile tuned = sw::scan::pick_tile(rows, block, default_rows, tiles);
  const int64_t smallest = every ? std::min(sw::scan::kLatencyN, n) : n;
  for (int64_t size = smallest; size <= n; size = size < n ? std::min(size * 4, n) : n + 1) {
    std::vector<uint64_t> ref;
    const sw::Timing cpu =
        sw::time_cpu(0, 1, [&] { ref = reference_sort(Keys::kRandom, s.opt.seed, size); });
    if (size == n &&
        with_pairs) {  // the reference itself, on every core: a bucket split, then std::sort
      sw::Result r{"cpu-all-cores", size, 16.0 * size, cpu, true, "cpu"};
      r.problem = "sort-pairs";
      r.note = keys_name(Keys::kRandom);
      r.extra = {{"threads", static_cast<double>(sw::host_threads())},
                 {"gkeys_s", size / (cpu.ms_median * 1e6)}};
      s.report.add(r);
    }
    for (bool pairs : {false, true}) {
      if (sort == (pairs ? "keys" : "pairs")) continue;
      const SortData d(size, pairs, Keys::kRandom, s.opt.seed);
      const double bytes = 2.0 * (pairs ? 8 : 4) * static_cast<double>(size);
      if (size == n && !pairs && every && rows.empty() && block.empty()) {  // onesweep's tile
        const Step& sweep = *std::find_if(s.program.steps.begin(), s.program.steps.end(),
                                          [](const Step& st) { return st.name == kSwept; });
        double best = -1;
        for (int r : tiles.sweep_rows)
          for (int b : tiles.sweep_blocks) {
            const sw::scan::Tile t{r, b};
            const sw::bench::Row row{
                std::string(sweep.name) + "-sweep", size, bytes, 1, false, "sweep"};
            sw::Result res =
                sw::bench::measure(sw::scan::sweep_options(s.opt), row, SortRow{d, ref, d.seed, {}},
                                   sweep.launch, d.call(t));
            describe_row(res, d, &t);
            s.report.add(res);
            if (res.ok && res.extra["gkeys_s"] > best) best = res.extra["gkeys_s"], tuned = t;
          }
      }
      {
        const CubSort cub(d);
        const sw::bench::Row row{"cub", size, bytes, 1, false, "vendor"};
        sw::Result res = sw::bench::measure(s.opt, row, SortRow{d, ref, d.seed, {}}, cub);
        describe_row(res, d, nullptr);
        s.report.add(res);
      }
      for (const Step& st : s.steps) {
        const sw::bench::Row row{st.name, size, bytes, 1, false, "step"};
        const sw::scan::Tile t = tile_of(st, tuned);
        sw::Result res =
            sw::bench::measure(s.opt, row, SortRow{d, ref, d.seed, {}}, st.launch, d.call(t));
        describe_row(res, d, &t);
        s.report.add(res);
      }
    }
  }
}

}  // namespace ch18
