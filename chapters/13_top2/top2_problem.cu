// Chapter 13's data (Values, Top2Data, Buffers: top2_problem.h), its CPU reference and
// baseline, and its rows (Top2Problem::bench): every GPU row by sw::bench::measure
// (common/bench/protocol.h), which calls the step's launcher (13_top2.cu) itself.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/parallel.h"
#include "common/report.h"
#include "common/timing.h"
#include "top2_merge.cuh"
#include "top2_problem.h"

using ch13::kNoIndex;
using ch13::Top2;

namespace {
constexpr int kRefChunks = 64;  // parallel chunks of the CPU reference
}  // namespace

// The first position of the largest key, then the first position of the largest key
// among the others: written independently of insert/merge. Two passes, each split
// over chunks in parallel.
Top2 ch13::top2_reference(const int32_t* x, int64_t n) {
  auto best_except = [&](int64_t skip) {
    std::vector<int32_t> key(kRefChunks);
    std::vector<int64_t> at(kRefChunks, kNoIndex);
    sw::parallel_for(
        kRefChunks,
        [&](int64_t cb, int64_t ce) {
          for (int64_t c = cb; c < ce; ++c) {
            for (int64_t i = n * c / kRefChunks; i < n * (c + 1) / kRefChunks; ++i) {
              if (i == skip) continue;
              if (at[c] < 0 || x[i] > key[c])
                key[c] = x[i], at[c] = i;  // strict: the first of equals
            }
          }
        },
        1);  // the items are chunks: one thread per core
    int32_t k = 0;
    int64_t i = kNoIndex;
    for (int c = 0; c < kRefChunks; ++c)  // chunks in index order: strict > keeps the first
      if (at[c] >= 0 && (i < 0 || key[c] > k)) k = key[c], i = at[c];
    return std::pair<int32_t, int64_t>{k, i};
  };
  const auto first = best_except(kNoIndex);
  const auto second = best_except(first.second);
  return {first.first, second.first, first.second, second.second};
}

std::string ch13::describe(const Top2& t) {
  return "(" + std::to_string(t.k1) + " at " + std::to_string(t.i1) + ", " + std::to_string(t.k2) +
         " at " + std::to_string(t.i2) + ")";
}

void ch13::Values::generate(uint64_t from) {  // the same values on the GPU and on the host
  seed = from;
  sw::fill_ints(d.get(), n, from);
  sw::host_fill_ints(h.get(), n, from);
  want = top2_reference(h.get(), n);
}

void ch13::Top2Data::poison() const { sw::poison(out, sizeof(Top2)); }

sw::bench::Verdict ch13::Top2Data::check() const {
  const Top2 got = sw::read(out);
  if (check_input && sw::device_digest(x, static_cast<size_t>(n) * sizeof(int32_t)) != digest)
    return {false, "input changed: the version wrote into x"};
  if (!same(got, *want)) return {false, "got " + describe(got) + ", want " + describe(*want)};
  return {};
}

bool ch13::Top2Data::reseed(uint64_t from) const {
  if (values) values->generate(from);
  return values != nullptr;
}

uint64_t ch13::Top2Data::seed() const { return values ? values->seed : 0; }

// The CPU baseline: one core, the same insert as the GPU threads.
Top2 ch13::top2_serial(const int32_t* x, int64_t n) {
  Top2 t = empty_top2();
  for (int64_t i = 0; i < n; ++i) insert(t, x[i], i);
  return t;
}

int64_t ch13::partial_capacity() {
  return int64_t{sw::device_attribute<cudaDevAttrMaxThreadsPerMultiProcessor>()} * sw::sm_count();
}
double ch13::workspace_bytes() {
  return 2.0 * partial_capacity() * sizeof(Top2);
}  // and CUB's, smaller

void ch13::Top2Problem::add_options(sw::Cli& cli, const sw::bench::Program<Step>&) {
  cli.add_int("--n", &n, 2, sw::kMaxElements,
              "number of int32 elements (top-2 needs at least 2; --verify-only: one size)");
  cli.add_flag("--large", &large,
               "instead of the benchmark or the sweep: check every version on 2^31 + 2^20 + 3 "
               "elements (not with --n)");
}

void ch13::Top2Problem::bench(const sw::bench::Session<Step>& s) {
  if (large) return check_large(s);
  // Every version by sw::bench::measure (poisoned result, one checked run, the timed runs,
  // the last one checked again; --graded-timing: new values and a check every call).
  sw::require_fits(s.gpu, "--n", n, sizeof(int32_t), workspace_bytes());
  Values v(n);
  v.generate(static_cast<uint64_t>(s.opt.seed));
  const double bytes = static_cast<double>(n) * sizeof(int32_t);  // every element read once
  s.report.note("answer: " + describe(v.want));
  Buffers b;
  const Top2Data data = {b.out.get(), &v.want, v.d.get(), n, false, 0, &v};  // x not checked
  std::vector<Step> rows = {vendor};
  rows.insert(rows.end(), s.steps.begin(), s.steps.end());
  for (const Step& st : rows) {
    // The first pass's grid, for the row: one run before the protocol's, neither
    // checked nor timed, so that the timed call stays the launcher call alone.
    const int64_t blocks = st.launch(v.d.get(), n, b);
    const sw::bench::Row row{st.name, n, bytes, 1, false, st.role};
    sw::Result r = sw::bench::measure(s.opt, row, data, st.launch, v.d.get(), n, std::ref(b));
    r.note = "uniform";  // every int32 equally likely
    if (blocks > 0) r.extra["blocks"] = static_cast<double>(blocks);
    s.report.add(r);
  }
  if (s.variant != "all") return;
  // The CPU baselines: one core (a lesson), then every core ("vs CPU" compares with it;
  // it is the reference's own loop, so it is checked against the one-core result).
  Top2 cpu{}, all{};
  const sw::Timing t1 = sw::time_cpu(0, 1, [&] { cpu = top2_serial(v.h.get(), n); });
  sw::Result serial{"cpu-serial", n, bytes, t1, same(cpu, v.want), "lesson"};
  serial.note = "uniform";
  serial.extra = {{"threads", 1.0}};
  s.report.add(serial);
  const sw::Timing tn = sw::time_cpu(0, 1, [&] { all = top2_reference(v.h.get(), n); });
  sw::Result every{"cpu-all-cores", n, bytes, tn, same(all, cpu), "cpu"};
  every.note = "uniform";
  every.extra = {{"threads", static_cast<double>(sw::host_threads())}};
  s.report.add(every);
}
