// Chapter 12's data (Split, Dot, DotData, CopyData: dot_problem.h) and its rows
// (DotProblem::bench): every row by sw::bench::measure (common/bench/protocol.h), which
// calls the row's launcher (12_dot_product.cu) itself: main -> sw::bench::run ->
// DotProblem::bench -> bench_size -> measure -> launch_<step> -> <<<>>>.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/cublas_check.h"
#include "common/data.h"
#include "common/parallel.h"
#include "common/report.h"
#include "common/timing.h"
#include "common/verify.h"
#include "dot_problem.h"

namespace {

using ch12::Dot;
using ch12::From;
constexpr int64_t kSmallN = int64_t{1} << 20;  // 4 MiB per vector: fits in L2
constexpr double kBigCall = 64e6;              // bytes; slower calls are timed fewer times
constexpr int kBigCallReps = 5;
constexpr int kBigCallWarmup = 1;

// The median of the last `count` samples: those of the timed calls (the checked
// call and the warm-up calls come first).
double median_of_last(const std::vector<double>& ms, int count) {
  const auto k = static_cast<std::ptrdiff_t>(std::min(ms.size(), static_cast<size_t>(count)));
  return sw::summarize(std::vector<double>(ms.end() - k, ms.end())).ms_median;
}

// One size: the vendor and the chosen steps (poisoned result, one checked call, the
// timed calls, the last one checked again; --graded-timing: new vectors and a check
// for every call), the copy ceiling before the first end-to-end row, and with `cpu`
// the CPU baselines, once each.
void bench_size(const sw::bench::Session<ch12::Step>& s, const ch12::Step& vendor, int64_t n,
                bool cpu) {
  const sw::CommonOptions& opt = s.opt;
  Dot d(n);
  d.generate(static_cast<uint64_t>(opt.seed));  // x and y, uploaded, and their reference
  const ch12::DotRef& ref = d.ref;
  const double bytes = 8.0 * n;  // x and y, read once (end to end: copied once)
  sw::CommonOptions e2e = opt;   // end-to-end calls over kBigCall bytes take tenths of a second
  if (bytes > kBigCall)
    e2e.reps = std::min(opt.reps, kBigCallReps), e2e.warmup = std::min(opt.warmup, kBigCallWarmup);

  std::vector<ch12::Step> rows = {vendor};
  rows.insert(rows.end(), s.steps.begin(), s.steps.end());
  bool ceiling_done = false;
  for (const ch12::Step& st : rows) {
    const bool device = st.more.from == From::Device;
    const ch12::DotData data{{d}, st.more.from, st.more.depth(d), false, false, 0, !device};
    sw::Result r;
    if (device) {
      r = sw::bench::measure(opt, {st.name, n, bytes, 1, false, st.role}, data, st.launch,
                             std::ref(d));
      r.extra["rel_bound"] = data.bound() / ref.abs_sum;
    } else {
      if (!ceiling_done) {  // the ceiling of every end-to-end row: the copies alone
        sw::Result c = sw::bench::measure(e2e, {"h2d-copy-pinned", n, bytes, 1, false, "ceiling"},
                                          ch12::CopyData{{d}}, ch12::copy_inputs, std::ref(d));
        c.note = "copies only";
        s.report.add(c);
        ceiling_done = true;
      }
      // The row's time is the protocol's, the events around the call, as for every row.
      // Inside it the call records the events of d.split, which split it into copy,
      // kernel and other time; before the next call, outside the timed events, the
      // data's restore() collects them.
      d.split.clear();
      const double moved = bytes + sizeof(float);  // x and y to the device, the result back
      r = sw::bench::measure(e2e, {st.name, n, moved, 1, false, st.role}, data, st.launch,
                             std::ref(d));
      d.split.collect();  // the last timed call
      const double copy_ms = median_of_last(d.split.copy_ms, e2e.reps);
      r.note = "end-to-end";  // a different measure from the kernel rows: no "vs cuBLAS" ratio
      r.extra["pinned"] = st.more.from == From::Pinned ? 1.0 : 0.0;
      r.extra["streams"] = static_cast<double>(st.more.streams);
      r.extra["copy_ms"] = copy_ms;
      r.extra["copy_gbps"] = sw::gbps(bytes, copy_ms);
      r.extra["kernel_ms"] = median_of_last(d.split.kernel_ms, e2e.reps);
      r.extra["other_ms"] = median_of_last(d.split.other_ms, e2e.reps);
    }
    if (st.more.blocks) r.extra["blocks"] = static_cast<double>(st.more.blocks(d));
    s.report.add(r);
  }
  if (!cpu) return;
  double got = 0;
  sw::Timing t =
      sw::time_cpu(0, 1, [&] { got = ch12::dot_serial_double(d.hx.data(), d.hy.data(), n); });
  sw::Result serial{"cpu-serial-double",
                    n,
                    bytes,
                    t,
                    sw::check_sum(got, ref.value, ref.abs_sum, 1, n).ok,
                    "lesson"};
  serial.extra = {{"threads", 1.0}};
  s.report.add(serial);
  t = sw::time_cpu(0, 1, [&] { got = ch12::dot_all_cores_double(d.hx.data(), d.hy.data(), n); });
  const int64_t threads = sw::host_threads();
  sw::Result all{"cpu-all-cores-double",
                 n,
                 bytes,
                 t,
                 sw::check_sum(got, ref.value, ref.abs_sum, threads, n).ok,
                 "cpu"};
  all.extra = {{"threads", static_cast<double>(threads)}};
  s.report.add(all);
}

}  // namespace

// --- Split, Dot ---------------------------------------------------------------------------

ch12::Split::Split() {
  for (cudaEvent_t* e : {&start, &copy_begin, &copied, &computed, &finished})
    CUDA_CHECK(cudaEventCreate(e));
  for (cudaEvent_t& e : chunk) CUDA_CHECK(cudaEventCreate(&e));
}
ch12::Split::~Split() {
  for (cudaEvent_t e : {start, copy_begin, copied, computed, finished}) cudaEventDestroy(e);
  for (cudaEvent_t e : chunk) cudaEventDestroy(e);
}
double ch12::Split::since_start(cudaEvent_t e) const {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, e));
  return ms;
}
void ch12::Split::collect() {
  CUDA_CHECK(cudaEventSynchronize(finished));
  double copy_end = chunks == 0 ? since_start(copied) : 0;
  for (int c = 0; c < chunks; ++c)
    copy_end = std::max(copy_end, since_start(chunk[c]));  // the last chunk's
  const double total = since_start(finished);
  copy_ms.push_back(copy_end - since_start(copy_begin));
  kernel_ms.push_back(since_start(computed) - copy_end);  // overlapped: the part not hidden
  other_ms.push_back(total - copy_ms.back() - kernel_ms.back());
  total_ms.push_back(total);
}

ch12::Dot::Dot(int64_t n)
    : n(n), hx(n), hy(n), px(n), py(n), x(n), y(n), partials(max_blocks * kChunks), result(1) {
  for (int k = 0; k < kStreams; ++k) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream[k], cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&joined[k], cudaEventDisableTiming));
  }
  CUBLAS_CHECK(cublasCreate(&blas));
  CUBLAS_CHECK(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE));
}
ch12::Dot::~Dot() {
  for (int k = 0; k < kStreams; ++k) cudaStreamDestroy(stream[k]), cudaEventDestroy(joined[k]);
  cublasDestroy(blas);
}
void ch12::Dot::upload() {
  std::copy(hx.begin(), hx.end(), px.get());
  std::copy(hy.begin(), hy.end(), py.get());
  copy_inputs(*this);
  uploaded = input_digest();
}
void ch12::Dot::generate(uint64_t from) {
  seed = from;
  sw::host_fill_floats(hx.data(), n, from);
  sw::host_fill_floats(hy.data(), n, from + 1);
  upload();
  ref = dot_reference(hx.data(), hy.data(), n);
}
uint64_t ch12::Dot::input_digest() const {
  return sw::device_digest(x.get(), x.bytes()) + 3 * sw::device_digest(y.get(), y.bytes());
}

// --- what the protocol checks --------------------------------------------------------------

double ch12::DotData::bound() const { return sw::float_sum_bound(depth, d.ref.abs_sum, d.n); }
void ch12::DotData::poison() const {
  sw::poison(d.result.get(), sizeof(float));
  d.answer = std::numeric_limits<float>::quiet_NaN();
  d.poison_fresh = true;
}
sw::bench::Verdict ch12::DotData::check() const {
  d.poison_fresh = false;  // calls that follow unpoisoned (the timed ones) poison nothing
  const float got = from == From::Device ? sw::read(d.result.get()) : d.answer;
  const sw::SumCheck c = sw::check_sum(got, d.ref.value, d.ref.abs_sum, depth, d.n);
  const bool kept = !check_input || d.input_digest() == digest;
  sw::bench::Verdict v{(exact ? got == d.ref.value : c.ok) && kept, "", NAN, 0};
  if (from == From::Device) v.rel_error = c.abs_error / d.ref.abs_sum;
  if (!kept) {
    v.detail = "input changed: the version wrote into x or y";
  } else if (!v.ok) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "got %.9g, want %.9g, error %.3g, bound %.3g", got, d.ref.value,
                  c.abs_error, exact ? 0.0 : c.bound);
    v.detail = buf;
  }
  return v;
}

void ch12::CopyData::poison() const {
  sw::poison(d.x.get(), d.x.bytes());
  sw::poison(d.y.get(), d.y.bytes());
}
sw::bench::Verdict ch12::CopyData::check() const {
  if (d.input_digest() == d.uploaded) return {};
  return {false, "x or y on the device differ from the pinned host copies"};
}
void ch12::copy_inputs(Dot& d) {
  CUDA_CHECK(cudaMemcpy(d.x.get(), d.px.get(), d.n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d.y.get(), d.py.get(), d.n * sizeof(float), cudaMemcpyHostToDevice));
}

// --- the problem ---------------------------------------------------------------------------

void ch12::DotProblem::add_options(sw::Cli& cli, const sw::bench::Program<Step>&) {
  cli.add_int("--n", &n, 1, sw::kMaxElements,
              "floats per vector (default: 2^28, then 2^20; --verify-only: one size)");
}

void ch12::DotProblem::bench(const sw::bench::Session<Step>& s) {
  // Device: x, y of the context and of one allocate-per-call call at the same time.
  sw::require_fits(s.gpu, "--n", n, 4.0 * sizeof(float),
                   2.0 * first_pass_max_blocks() * kChunks * sizeof(float));
  s.report.note(
      "kernel-only rows read x and y in device memory; end-to-end rows start from host memory "
      "and end with the result on the host");
  bench_size(s, vendor, n, s.variant == "all");
  if (!s.cli.was_given("--n")) bench_size(s, vendor, kSmallN, false);
}
