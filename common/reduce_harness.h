// Host-side harness of the reduction chapters (02-06): the inputs and their CPU
// references, the verify sweep, CUB as the vendor line, the standard benchmark
// of a sum, chapter 01's 1.23 precision lesson, and the repeated launches that
// chapters 03-05 finish with. The kernels stay in their chapters; only what all
// five would otherwise repeat lives here.
//
//   namespace rd = sw::reduce;
//   const rd::Input in = rd::make_input(n, opt.seed);    // GPU data + CPU reference
//   rd::Variant v = my_variant(in);                      // name, run, read, poison, depth
//   rd::verify(report, v, in, "my-variant n=257");       // --verify-only: one PASS/FAIL line
//   rd::bench(opt, report, rd::cub_variant(in, sms), in);  // the vendor line first
//   rd::bench(opt, report, v, in);                       // then each variant
//   rd::lesson(opt, report, [&](const rd::Input& l) { return my_variant(l); });
//
// CUDA only (it includes CUB): include it from .cu files.
#pragma once

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common/check.h"
#include "common/cli.h"
#include "common/data.h"
#include "common/device.h"
#include "common/gpu_timer.h"
#include "common/parallel.h"
#include "common/report.h"
#include "common/verify.h"

namespace sw::reduce {

constexpr int64_t kDefaultN = int64_t{1} << 28;     // 1 GiB of floats, far beyond any L2
constexpr int kDefaultBlock = 256;
constexpr int64_t kLessonCount = 100000000;         // chapter 01's lesson: 1e8 copies of 1.23f
constexpr float kLessonValue = 1.23f;
constexpr int kLessonReps = 3;
constexpr int kSweepReps = 10;                      // sweeps: fewer timed runs per point

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// --- what --verify-only covers ------------------------------------------------------

// Tiny, around warp and block sizes, odd, a prime near 1e6, and just past 2^24.
inline std::vector<int64_t> verify_sizes() {
  return {1, 2, 31, 32, 33, 255, 256, 257, 1000, 65537, 1000003, (int64_t{1} << 24) + 1};
}
// --verify-only --large: past 2^31 (a signed 32-bit index wraps) and past 2^32
// (an unsigned one wraps); odd, so the tails are exercised too.
inline std::vector<int64_t> large_sizes() {
  return {(int64_t{1} << 31) + 17, (int64_t{1} << 32) + 5};
}
// The sizes to verify: --large, a single --n, or the sweep.
inline std::vector<int64_t> sizes_to_verify(bool large, bool n_given, int64_t n) {
  if (large) return large_sizes();
  if (n_given) return {n};
  return verify_sizes();
}

// Every power-of-two block size from one warp to the hardware limit.
inline std::vector<int> block_sizes() { return {32, 64, 128, 256, 512, 1024}; }

// What one --verify-only run covers: the sizes (see sizes_to_verify) and the
// block sizes (every one, unless --block or --large picks one), after checking
// that the largest size fits in device memory at bytes_per_float.
struct VerifyPlan {
  std::vector<int64_t> sizes;
  std::vector<int> blocks;
};
inline VerifyPlan verify_plan(const Cli& cli, const Gpu& gpu, bool large, int64_t n, int block,
                              double bytes_per_float) {
  VerifyPlan plan;
  plan.sizes = sizes_to_verify(large, cli.was_given("--n"), n);
  plan.blocks = large || cli.was_given("--block") ? std::vector<int>{block} : block_sizes();
  require_fits(gpu, large ? "--large" : "--n", *std::max_element(plan.sizes.begin(), plan.sizes.end()),
               bytes_per_float);
  return plan;
}

// --block as a choice among block_sizes(), so a bad value exits 2 naming the option.
inline void add_block_option(Cli& cli, std::string* text, const std::string& help) {
  std::vector<std::string> choices;
  for (int b : block_sizes()) choices.push_back(std::to_string(b));
  cli.add_choice("--block", text, choices, help);
}

// Calls f(std::integral_constant<int, B>{}) for the run-time block size B, so a
// kernel templated on its block size can be launched from a command-line value.
template <class F>
void dispatch_block(int block, F&& f) {
  switch (block) {
    case 32: f(std::integral_constant<int, 32>{}); break;
    case 64: f(std::integral_constant<int, 64>{}); break;
    case 128: f(std::integral_constant<int, 128>{}); break;
    case 256: f(std::integral_constant<int, 256>{}); break;
    case 512: f(std::integral_constant<int, 512>{}); break;
    case 1024: f(std::integral_constant<int, 1024>{}); break;
    default:
      std::fprintf(stderr, "error: no kernel for block size %d\n", block);
      std::exit(kExitFailed);
  }
}

// A grid dimension, checked against the hardware limit of gridDim.x.
inline unsigned grid_size(int64_t blocks) {
  constexpr int64_t kMaxGridX = 2147483647;
  if (blocks < 1 || blocks > kMaxGridX) {
    std::fprintf(stderr, "error: %lld blocks do not fit in gridDim.x\n", static_cast<long long>(blocks));
    std::exit(kExitFailed);
  }
  return static_cast<unsigned>(blocks);
}

// --- inputs -------------------------------------------------------------------------

// The CPU reference straight from the generator (data.h), without a host copy of
// the data: fixed chunks summed in double on all cores, then the chunk sums in
// order. No element passes through more than n additions, so the reference's own
// error is within the n * 2^-53 * sum|x| that float_sum_bound already allows.
inline void reference_sum(int64_t n, uint64_t seed, double* sum, double* abs_sum) {
  constexpr int64_t kChunk = int64_t{1} << 16;
  const int64_t chunks = ceil_div(n, kChunk);
  std::vector<double> s(chunks, 0.0), a(chunks, 0.0);
  // parallel_for sizes its pool by the count it is given, so it gets the element
  // count; each thread takes the chunks that start inside its range.
  parallel_for(chunks * kChunk, [&](int64_t begin, int64_t end) {
    for (int64_t c = ceil_div(begin, kChunk); c < ceil_div(end, kChunk); ++c) {
      double cs = 0, ca = 0;
      for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
        const double v = float_value(seed, static_cast<uint64_t>(i));
        cs += v;
        ca += std::fabs(v);
      }
      s[c] = cs;
      a[c] = ca;
    }
  });
  *sum = 0;
  *abs_sum = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    *sum += s[c];
    *abs_sum += a[c];
  }
}

// The floats of one sum, on the GPU, with their CPU reference.
struct Input {
  int64_t n = 0;
  uint64_t seed = 0;
  bool constant = false;  // the lesson's input: every element is kLessonValue
  double ref = 0;         // the sum, in double
  double abs_sum = 0;     // sum of |x_i|, for the error bound
  DeviceBuffer<float> x;

  // Writes the data (again): chapter 02's kernel overwrites its input.
  void refill() const {
    if (constant)
      fill_constant(x.get(), n, kLessonValue);
    else
      fill_floats(x.get(), n, seed);
  }
};

// Mixed signs and magnitudes from the seed (never zeros, never all equal).
inline Input make_input(int64_t n, uint64_t seed) {
  Input in;
  in.n = n;
  in.seed = seed;
  in.x.allocate(n);
  in.refill();
  reference_sum(n, seed, &in.ref, &in.abs_sum);
  CUDA_CHECK(cudaDeviceSynchronize());
  return in;
}

// 1e8 copies of 1.23f. The exact sum of these floats is 1.23f * 1e8 in double
// (24 + 27 significant bits: exact), not the decimal 123000000.
inline Input make_lesson_input() {
  Input in;
  in.n = kLessonCount;
  in.constant = true;
  in.x.allocate(in.n);
  in.refill();
  in.ref = static_cast<double>(kLessonValue) * static_cast<double>(kLessonCount);
  in.abs_sum = in.ref;
  CUDA_CHECK(cudaDeviceSynchronize());
  return in;
}

// --- one way to sum -------------------------------------------------------------------

struct Variant {
  std::string name;                // short kebab-case, a table row
  std::function<void()> run;       // the timed work: every launch of one whole sum
  std::function<double()> read;    // the result of the last run, on the host (untimed)
  std::function<void()> poison;    // poisons every output run() writes
  int64_t depth = 1;               // the most additions any element passes through
  std::function<void()> before;    // optional, untimed before every run (restores an input)
  std::string role = "step";
  bool deterministic = false;      // the result must be bitwise the same on every run
};

// A float read back from the GPU.
inline double read_scalar(const float* d) {
  float v = 0;
  CUDA_CHECK(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
  return v;
}

inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// One run on poisoned outputs; returns its result.
inline double run_once(const Variant& v) {
  if (v.before) v.before();
  v.poison();
  v.run();
  CUDA_CHECK(cudaDeviceSynchronize());
  return v.read();
}

inline SumCheck check(const Variant& v, const Input& in, double got) {
  return check_sum(got, in.ref, in.abs_sum, v.depth, in.n);
}

inline std::string describe(double got, const Input& in, const SumCheck& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "got %.9g, want %.9g: error %.3g > bound %.3g", got, in.ref,
                c.abs_error, c.bound);
  return buf;
}

// One poisoned run compared with the reference: one PASS/FAIL line. `what` names
// the case (default: "<variant> n=<n>").
inline bool verify(Report& report, const Variant& v, const Input& in, const std::string& what = "") {
  const double got = run_once(v);
  const SumCheck c = check(v, in, got);
  report.check(c.ok, what.empty() ? v.name + " n=" + std::to_string(in.n) : what,
               c.ok ? "" : describe(got, in, c));
  return c.ok;
}

// `runs` poisoned runs; passes when every result is bitwise the same as the first
// (and that one is right).
inline bool verify_repeatable(Report& report, const Variant& v, const Input& in, int runs,
                              const std::string& what) {
  const double first = run_once(v);
  int differing = 0;
  for (int r = 1; r < runs; ++r) differing += !same_bits(run_once(v), first);
  const SumCheck c = check(v, in, first);
  const bool ok = c.ok && differing == 0;
  report.check(ok, what,
               ok ? "" : (c.ok ? std::to_string(differing) + " of " + std::to_string(runs) +
                                     " runs gave other bits"
                               : describe(first, in, c)));
  return ok;
}

// The standard benchmark of a sum: one checked run on poisoned outputs, then
// time_gpu (before() outside the timed region), then the last timed run's result
// checked again (and, for a deterministic variant, compared bit for bit).
// Bytes: the input read once and the result written once.
inline Result bench(const CommonOptions& opt, Report& report, const Variant& v, const Input& in,
                    std::map<std::string, double> extra = {}, const std::string& note = "") {
  const double first = run_once(v);
  const Timing t = time_gpu(opt, v.run, [&] {
    if (v.before) v.before();
  });
  const double last = v.read();
  const SumCheck c_first = check(v, in, first), c_last = check(v, in, last);
  bool ok = c_first.ok && c_last.ok;
  if (v.deterministic) ok = ok && same_bits(first, last);
  Result r{v.name, in.n, sizeof(float) * (static_cast<double>(in.n) + 1), t, ok, v.role};
  r.extra = std::move(extra);
  r.extra["rel_error"] = c_last.rel_error;
  r.note = note;
  report.add(r);
  return r;
}

// Chapter 01's precision lesson, on this chapter's best variant: 1e8 copies of
// 1.23f (the float loop stalls at 2^25). make(input) builds the variant for an
// input. Recorded as role "lesson", problem "sum-of-1.23", with extra rel_error
// against the exact sum of the floats and the value itself.
template <class Make>
Result lesson(const CommonOptions& opt, Report& report, Make&& make) {
  const Input in = make_lesson_input();
  const Variant v = make(in);
  CommonOptions few = opt;
  few.reps = std::min(opt.reps, kLessonReps);
  few.warmup = std::min(opt.warmup, 1);
  const double got = run_once(v);
  const Timing t = time_gpu(few, v.run, [&] {
    if (v.before) v.before();
  });
  const SumCheck c = check(v, in, got);
  Result r{v.name, in.n, sizeof(float) * static_cast<double>(in.n), t, c.ok, "lesson"};
  r.problem = "sum-of-1.23";
  r.extra = {{"value", got}, {"rel_error", std::fabs(got - in.ref) / in.ref}};
  report.add(r);
  return r;
}

// --- the vendor line ------------------------------------------------------------------

// cub::DeviceReduce::Sum, with its temporary storage allocated here, once,
// outside any timed loop. The variant owns its buffers; `in` must outlive it.
//
// CUB does not document its order of additions. The bound assumes what CUB
// does: a grid of at least one 128-thread block per SM, each thread adding its
// items in sequence, then trees of fewer than 64 levels.
inline Variant cub_variant(const Input& in, int sm_count) {
  struct State {
    DeviceBuffer<float> out{1};
    DeviceBuffer<unsigned char> temp;
    size_t temp_bytes = 0;
  };
  auto s = std::make_shared<State>();
  const float* x = in.x.get();
  const int64_t n = in.n;
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, s->temp_bytes, x, s->out.get(), n));
  s->temp.allocate(static_cast<int64_t>(std::max<size_t>(s->temp_bytes, 1)));
  Variant v;
  v.name = "cub";
  v.role = "vendor";
  v.run = [s, x, n] {
    CUDA_CHECK(cub::DeviceReduce::Sum(s->temp.get(), s->temp_bytes, x, s->out.get(), n));
  };
  v.read = [s] { return read_scalar(s->out.get()); };
  v.poison = [s] { sw::poison(s->out.get(), s->out.bytes()); };
  v.depth = ceil_div(n, int64_t{128} * std::max(sm_count, 1)) + 64;
  return v;
}

// --- chapters 03-05: finish by launching again ------------------------------------------

// Chapters 03-05 finish on the GPU: the same kernel runs again over the block sums
// until one value is left (the paper's recursive launches). This owns the two
// ping-pong buffers of block sums and the result; a chapter's variant holds it
// in a shared_ptr, so the variant owns its buffers.
class MultiPass {
 public:
  // per_block: how many values one block of the kernel sums.
  MultiPass(int64_t n, int64_t per_block)
      : n_(n),
        per_block_(per_block),
        a_(std::max<int64_t>(1, ceil_div(n, per_block))),
        b_(std::max<int64_t>(1, ceil_div(a_.count(), per_block))),
        result_(1) {}

  // launch(in, out, count, blocks) launches one pass: `blocks` blocks turn the
  // `count` values of `in` into `blocks` sums in `out`. A pass never reads the
  // buffer it writes.
  template <class Launch>
  void run(const float* x, Launch&& launch) const {
    const float* in = x;
    int64_t count = n_;
    for (int pass = 0;; ++pass) {
      const int64_t blocks = ceil_div(count, per_block_);
      float* out = blocks == 1 ? result_.get() : (pass % 2 == 0 ? a_.get() : b_.get());
      launch(in, out, count, blocks);
      if (blocks == 1) return;
      in = out;
      count = blocks;
    }
  }

  int passes() const {
    int p = 1;
    for (int64_t count = n_; count > per_block_; count = ceil_div(count, per_block_)) ++p;
    return p;
  }
  // Every pass is a tree of per_pass levels over its values.
  int64_t depth(int64_t per_pass) const { return passes() * per_pass; }
  void poison() const {
    sw::poison(a_.get(), a_.bytes());
    sw::poison(b_.get(), b_.bytes());
    sw::poison(result_.get(), result_.bytes());
  }
  double read() const { return read_scalar(result_.get()); }

 private:
  int64_t n_, per_block_;
  DeviceBuffer<float> a_, b_, result_;
};

}  // namespace sw::reduce
