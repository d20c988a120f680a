// The reduction's problem (chapters 02-06): the sum of n floats. A chapter writes
// its kernels and, right under each, a plain launcher of one whole sum; it lists
// them in a step table and hands it, with this problem, to the one program main
// (common/bench/program.h):
//
//   void launch_sequential(const rd::Sum& s);     // every launch of one sum
//   int64_t depth_sequential(const rd::Sum& s);   // its error bound (see Step)
//   const std::vector<rd::Step> kSteps = {{"sequential", launch_sequential, depth_sequential}};
//   int main(int argc, char** argv) {
//     const sw::bench::Program<rd::Step> program{"03_reduce_shared", "one line", "03", kSteps};
//     return sw::bench::run(argc, argv, program, rd::SumProblem{kBlock});
//   }
//
// This file holds the rest: the input and its CPU reference, the buffers every
// launch writes into (Sum), the check of a result within the step's error bound
// (SumData), CUB as the vendor line and chapter 01's 1.23 precision lesson. Every
// timed row is measured by sw::bench::measure (common/bench/protocol.h), which
// calls the launcher with its Sum:
//   main -> bench::run -> SumProblem::bench -> bench::measure -> launch_sequential -> <<<>>>
// Chapters whose host code is the lesson (04's block sizes; 06's sweeps, census and
// small sums) derive their own problem from SumProblem.
//
// CUDA only (it includes CUB): include it from .cu files.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
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
#include "common/report.h"
#include "common/verify.h"

namespace sw::reduce {

constexpr int64_t kDefaultN = int64_t{1} << 28;  // 1 GiB of floats, far beyond any L2
constexpr int kDefaultBlock = 256;
constexpr int kMaxBlocksPerSm = 64;          // chapter 06's --blocks-per-sm range
constexpr int64_t kLessonCount = 100000000;  // chapter 01's lesson: 1e8 copies of 1.23f
constexpr float kLessonValue = 1.23f;
constexpr int kLessonReps = 3;
constexpr int kSweepReps = 10;  // sweeps: fewer timed runs per point
// Device memory per float summed: the input, block sums of one per 32 floats and
// the next pass's, one per 1024 (see Sum).
constexpr double kBytesPerFloat = sizeof(float) * (1.0 + 1.0 / 32 + 1.0 / 1024);

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

// Every power-of-two block size from one warp to the hardware limit.
inline std::vector<int> block_sizes() { return {32, 64, 128, 256, 512, 1024}; }

// The kernel for the run-time block size B: pick(std::integral_constant<int, B>{}),
// so that a kernel templated on its block size can be launched from a
// command-line value. Inside pick, `b` converts to B as a compile-time constant:
//   const auto kernel = rd::kernel_for_block(s.block, [](auto b) { return reduce_shuffle<b>; });
//   kernel<<<grid, s.block>>>(...);   // in the launcher, beside its grid
template <class Pick>
auto kernel_for_block(int block, Pick pick) -> decltype(pick(std::integral_constant<int, 32>{})) {
  switch (block) {
    case 32:
      return pick(std::integral_constant<int, 32>{});
    case 64:
      return pick(std::integral_constant<int, 64>{});
    case 128:
      return pick(std::integral_constant<int, 128>{});
    case 256:
      return pick(std::integral_constant<int, 256>{});
    case 512:
      return pick(std::integral_constant<int, 512>{});
    case 1024:
      return pick(std::integral_constant<int, 1024>{});
    default:
      std::fprintf(stderr, "error: no kernel for block size %d\n", block);
      std::exit(kExitFailed);
  }
}

// A grid dimension, checked against the hardware limit of gridDim.x.
inline unsigned grid_size(int64_t blocks) {
  constexpr int64_t kMaxGridX = 2147483647;
  if (blocks < 1 || blocks > kMaxGridX) {
    std::fprintf(stderr, "error: %lld blocks do not fit in gridDim.x\n",
                 static_cast<long long>(blocks));
    std::exit(kExitFailed);
  }
  return static_cast<unsigned>(blocks);
}

// --- what a launcher gets -------------------------------------------------------------

// The input of one sum and every buffer a step may write. Input allocates them for
// the input's size; the protocol poisons them before every checked run.
struct Sum {
  float* x;  // the input, n floats (chapter 02 sums in place over them)
  int64_t n;
  int block;             // threads per block (a chapter with a compiled-in size ignores it)
  int blocks_per_sm;     // chapter 06: the grid is blocks_per_sm x SMs
  cudaStream_t stream;   // chapter 06 launches here, so that a CUDA graph can capture it
  float* partials;       // ceil(n / 32) floats: block sums, one per 32 or more floats
  float* partials2;      // ceil(n / 1024) floats: the block sums of the next pass
  float* host_partials;  // ceil(n / 32) floats on the host, for a finish on the host
  float* out;            // a finish on the GPU leaves the sum here
  double* host_out;      // a finish on the host leaves it here (kFinishOnHost)
  unsigned* ticket;      // a counter: 0 before every launch, and the launch leaves it 0
  void* cub_temp;        // CUB's temporary storage, cub_temp_bytes of it (launch_cub)
  size_t cub_temp_bytes;
};

using Launch = void (*)(const Sum&);  // every launch of one whole sum, each checked
using Depth = int64_t (*)(const Sum&);

// What the problem must know of a step beyond its launch (Step::traits, or-ed).
enum : unsigned {
  kSameBits = 1,         // a fixed order of additions: every run gives the same bits (checked)
  kOverwritesInput = 2,  // the launch writes over x: restored before every run, outside the timing
  kFinishOnHost = 4,     // the sum ends in *host_out, not in out
  kNeedsPdl = 8,  // launched with programmatic dependent launch (chapter 06 skips it without)
};

// One row of a chapter's step table: {name, launch, depth, role, traits}. Its depth
// is the error bound: the most additions any element passes through.
using Step = bench::Step<Launch, Depth>;

// The run-time settings of one row; they go into the row's extra too.
struct Config {
  int block = kDefaultBlock;
  int blocks_per_sm = 0;  // chapter 06 only; 0 leaves it out of the row
};

// --- inputs -------------------------------------------------------------------------

// The CPU reference straight from the generator (data.h), without a host copy of
// the data: fixed chunks summed in double on all cores, then the chunk sums in
// order. No element passes through more than n additions, so the reference's own
// error is within the n * 2^-53 * sum|x| that float_sum_bound already allows.
// Elements [first, first + n) of the stream: chapter 14 sums a shard of it.
inline void reference_sum(int64_t n, uint64_t seed, double* sum, double* abs_sum,
                          int64_t first = 0) {
  constexpr int64_t kChunk = int64_t{1} << 16;
  const int64_t chunks = ceil_div(n, kChunk);
  std::vector<double> s(chunks, 0.0), a(chunks, 0.0);
  parallel_for(
      chunks,
      [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          double cs = 0, ca = 0;
          for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
            const double v = float_value(seed, static_cast<uint64_t>(first + i));
            cs += v;
            ca += std::fabs(v);
          }
          s[c] = cs;
          a[c] = ca;
        }
      },
      /*grain=*/1);
  *sum = 0;
  *abs_sum = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    *sum += s[c];
    *abs_sum += a[c];
  }
}

// The floats of one sum on the GPU, their CPU reference, and the buffers of Sum.
struct Input {
  int64_t n = 0;
  bool constant = false;  // the lesson's input: every element is kLessonValue
  // What the data are now. A graded timing (--graded-timing) gives every call new
  // data through reseed() and restores the first before it returns, so these
  // change under a const Input, as x's contents do under refill().
  mutable uint64_t seed = 0;
  mutable double ref = 0;      // the sum, in double
  mutable double abs_sum = 0;  // sum of |x_i|, for the error bound
  mutable uint64_t digest =
      0;  // device_digest of x as written: a step that writes into x is caught
  DeviceBuffer<float> x, partials, partials2, out;
  DeviceBuffer<unsigned> ticket;
  DeviceBuffer<unsigned char> cub_temp;  // CUB's temporary storage for a sum of x (launch_cub)
  size_t cub_temp_bytes = 0;
  std::unique_ptr<float[]> host_partials;
  std::unique_ptr<double> host_out;

  void allocate(int64_t count) {
    n = count;
    x.allocate(n);
    partials.allocate(ceil_div(n, 32));
    partials2.allocate(ceil_div(n, 1024));
    out.allocate(1);
    ticket.allocate(1);
    CUDA_CHECK(cudaMemset(ticket.get(), 0, sizeof(unsigned)));
    CUDA_CHECK(cub_sum(nullptr, cub_temp_bytes, x.get(), out.get(), n));  // its size only
    cub_temp.allocate(static_cast<int64_t>(std::max<size_t>(cub_temp_bytes, 1)));
    host_partials.reset(new float[ceil_div(n, 32)]);  // not touched unless a step uses it
    host_out.reset(new double(NAN));
  }
  // New data from another seed, with its reference and digest (--graded-timing).
  void reseed(uint64_t s) const {
    if (constant) return;  // the lesson's input: every element kLessonValue, whatever the seed
    seed = s;
    refill();
    digest = device_digest(x.get(), x.bytes());
    reference_sum(n, seed, &ref, &abs_sum);
  }
  // Writes the data (again): chapter 02's kernel overwrites its input.
  void refill() const {
    if (constant)
      fill_constant(x.get(), n, kLessonValue);
    else
      fill_floats(x.get(), n, seed);
  }
  Sum sum(const Config& c, cudaStream_t stream = nullptr) const {
    return {x.get(),         n,
            c.block,         c.blocks_per_sm,
            stream,          partials.get(),
            partials2.get(), host_partials.get(),
            out.get(),       host_out.get(),
            ticket.get(),    cub_temp.get(),
            cub_temp_bytes};
  }
  // Every output a step may write (never the ticket: a launch must find it 0).
  void poison() const {
    sw::poison(partials.get(), partials.bytes());
    sw::poison(partials2.get(), partials2.bytes());
    sw::poison(out.get(), out.bytes());
    *host_out = NAN;
  }
};

// Mixed signs and magnitudes from the seed (never zeros, never all equal).
inline Input make_input(int64_t n, uint64_t seed) {
  Input in;
  in.seed = seed;
  in.allocate(n);
  in.refill();
  in.digest = device_digest(in.x.get(), in.x.bytes());
  reference_sum(n, seed, &in.ref, &in.abs_sum);
  CUDA_CHECK(cudaDeviceSynchronize());
  return in;
}

// 1e8 copies of 1.23f. The exact sum of these floats is 1.23f * 1e8 in double
// (24 + 27 significant bits: exact), not the decimal 123000000.
inline Input make_lesson_input() {
  Input in;
  in.constant = true;
  in.allocate(kLessonCount);
  in.refill();
  in.ref = static_cast<double>(kLessonValue) * static_cast<double>(kLessonCount);
  in.abs_sum = in.ref;
  CUDA_CHECK(cudaDeviceSynchronize());
  return in;
}

// --- checks ------------------------------------------------------------------------------

// " n=1000003 block=256 blocks_per_sm=8": what a PASS/FAIL line names.
inline std::string describe(int64_t n, const Config& c) {
  std::string s = " n=" + std::to_string(n) + " block=" + std::to_string(c.block);
  if (c.blocks_per_sm) s += " blocks_per_sm=" + std::to_string(c.blocks_per_sm);
  return s;
}

// The data of one sum as measure() and check_once() see them (common/bench/protocol.h):
// the outputs to poison, the result against the reference within the bound of
// `depth` additions, and the input unchanged (unless the step overwrites it by
// design: then restore() writes it again before every run). Its bits are the
// fingerprint that a kSameBits row compares.
struct SumData {
  const Input& in;
  int64_t depth;
  bool on_host = false;     // the sum ends in *host_out (kFinishOnHost), else in out
  bool overwrites = false;  // the step writes over x (kOverwritesInput)
  void poison() const { in.poison(); }
  void restore() const {
    if (overwrites) in.refill();
  }
  double value() const {
    return on_host ? *in.host_out : static_cast<double>(sw::read(in.out.get()));
  }
  std::vector<bench::Buffer> outputs() const {  // what value() reads
    if (on_host) return {{in.host_out.get(), sizeof(double)}};
    return {{in.out.get(), sizeof(float)}};
  }
  bench::Verdict check() const {
    const double got = value();
    const SumCheck c = check_sum(got, in.ref, in.abs_sum, depth, in.n);
    const bool kept =
        overwrites || in.constant || device_digest(in.x.get(), in.x.bytes()) == in.digest;
    bench::Verdict v{c.ok && kept, "", c.rel_error, 0};
    std::memcpy(&v.bits, &got, sizeof got);
    if (!c.ok) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "got %.9g, want %.9g: error %.3g > bound %.3g", got, in.ref,
                    c.abs_error, c.bound);
      v.detail = buf;
    } else if (!kept) {
      v.detail = "input changed: the step wrote into x";
    }
    return v;
  }
  bool reseed(uint64_t s) const {
    in.reseed(s);
    return !in.constant;
  }
  uint64_t seed() const { return in.seed; }
};

// A step's data: its bound, where its sum ends, whether it may write into x.
inline SumData step_data(const Step& step, const Input& in, const Config& c) {
  return {in, step.more(in.sum(c)), (step.traits & kFinishOnHost) != 0,
          (step.traits & kOverwritesInput) != 0};
}

// One poisoned run compared with the reference: one PASS/FAIL line.
inline bool verify(Report& report, const Step& step, const Input& in, const Config& c) {
  const bench::Verdict v = bench::check_once(step_data(step, in, c), step.launch, in.sum(c));
  report.check(v.ok, step.name + describe(in.n, c), v.detail);
  return v.ok;
}

// `runs` poisoned runs; passes when every result is bitwise the same as the first
// (and that one is right).
inline bool verify_repeatable(Report& report, const Step& step, const Input& in, const Config& c,
                              int runs) {
  const SumData data = step_data(step, in, c);
  const bench::Verdict first = bench::check_once(data, step.launch, in.sum(c));
  int differing = 0;
  for (int r = 1; r < runs; ++r)
    differing += bench::check_once(data, step.launch, in.sum(c)).bits != first.bits;
  const bool ok = first.ok && differing == 0;
  const std::string what =
      std::string(step.name) + " bitwise identical over " + std::to_string(runs) + " runs";
  report.check(ok, what + describe(in.n, c),
               !first.ok   ? first.detail
               : differing ? std::to_string(differing) + " of " + std::to_string(runs) +
                                 " runs gave other bits"
                           : "");
  return ok;
}

// How many different results (float bit patterns) `runs` runs give: 1 for a fixed order.
inline int count_distinct(const Step& step, const Input& in, const Config& c, int runs) {
  const SumData data = step_data(step, in, c);
  std::set<uint32_t> seen;
  for (int r = 0; r < runs; ++r) {
    bench::check_once(data, step.launch, in.sum(c));
    const float got = static_cast<float>(data.value());
    uint32_t bits;
    std::memcpy(&bits, &got, sizeof bits);
    seen.insert(bits);
  }
  return static_cast<int>(seen.size());
}

// --- rows ---------------------------------------------------------------------------------

// Fewer timed runs per point, for the sweeps.
inline CommonOptions sweep_options(const CommonOptions& opt) {
  CommonOptions few = opt;
  few.reps = std::min(opt.reps, kSweepReps);
  return few;
}

// Bytes of one sum: the input read once, the sum written once.
inline double sum_bytes(int64_t n) { return sizeof(float) * (static_cast<double>(n) + 1); }

// The row of a step: `calls` sums back to back per timed run (chapter 06's small sums).
inline bench::Row step_row(const Step& step, int64_t n, int calls = 1) {
  if ((step.traits & kOverwritesInput) && calls != 1) {
    std::fprintf(stderr, "error: %s overwrites its input: it can only be timed alone\n", step.name);
    std::exit(kExitFailed);
  }
  return {step.name, n, sum_bytes(n), calls, (step.traits & kSameBits) != 0, step.role};
}

// A measured row with the settings it ran at: extra block (and blocks_per_sm).
inline Result with_config(Result r, const Config& c) {
  r.extra["block"] = c.block;
  if (c.blocks_per_sm) r.extra["blocks_per_sm"] = c.blocks_per_sm;
  return r;
}

// The vendor row's launcher: cub::DeviceReduce::Sum (common/cub_calls.h) of x into
// s.out, in the temporary storage that Input allocated, outside the timing.
inline void launch_cub(const Sum& s) {
  size_t temp_bytes = s.cub_temp_bytes;
  CUDA_CHECK(cub_sum(s.cub_temp, temp_bytes, s.x, s.out, s.n, s.stream));
}

// CUB's row and data. CUB does not document its order of additions. The bound
// assumes what CUB does: a grid of at least one 128-thread block per SM, each
// thread adding its items in sequence, then trees of fewer than 64 levels.
inline bench::Row cub_row(int64_t n, int calls = 1) {
  return {"cub", n, sum_bytes(n), calls, false, "vendor"};
}
inline SumData cub_data(const Input& in) {
  return {in, ceil_div(in.n, int64_t{128} * std::max(sm_count(), 1)) + 64};
}

// Chapter 01's precision lesson, on this chapter's best step: 1e8 copies of 1.23f
// (the float loop stalls at 2^25). Role "lesson", problem "sum-of-1.23", note
// "1e8 x 1.23", extra rel_error against the exact sum of the floats and the value.
inline void lesson(const CommonOptions& opt, Report& report, const Step& step, const Config& c) {
  const Input in = make_lesson_input();
  CommonOptions few = opt;
  few.reps = std::min(opt.reps, kLessonReps);
  few.warmup = std::min(opt.warmup, 1);
  const SumData data = step_data(step, in, c);
  Result r =
      with_config(bench::measure(few, step_row(step, in.n), data, step.launch, in.sum(c)), c);
  const double value = data.value();
  r.role = "lesson";
  r.problem = "sum-of-1.23";
  r.note = "1e8 x 1.23";
  r.bytes = sizeof(float) * static_cast<double>(in.n);
  r.extra["value"] = value;
  r.extra["rel_error"] = std::fabs(value - in.ref) / in.ref;
  report.add(r);
}

// --- planted steps: the protocol's own defences, proven ---------------------------------
//
// `--verify-only --planted NAME` checks one deliberately broken step instead of the
// chapter's; the test that runs it expects it to FAIL. Each fails only because a
// defence of the protocol works:
//   never-writes       writes nothing, on an input whose sum is 0: only the poison
//                      (NaN, not 0) in the output makes it fail
//   writes-input-tail  sums correctly, then changes the LAST float of x: only the
//                      input's digest, which covers every byte, makes it fail
//   unzeroed-shared    adds into a shared accumulator it never sets to zero, on an input
//                      whose sum is 0: only the poison of shared memory (sw::poison fills
//                      every SM's with NaN first) makes it fail where that memory held 0
namespace planted {

__global__ void negate_last(float* x, int64_t n) { x[n - 1] = -x[n - 1]; }

__global__ void sum_into_unzeroed_shared(const float* x, int64_t n, float* out) {
  __shared__ float total;  // the mistake: never set to zero
  float mine = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) mine += x[i];
  atomicAdd(&total, mine);
  __syncthreads();
  if (threadIdx.x == 0) *out = total;
}

inline void launch_never_writes(const Sum&) {}

inline void launch_unzeroed_shared(const Sum& s) {
  sum_into_unzeroed_shared<<<1, kDefaultBlock, 0, s.stream>>>(s.x, s.n, s.out);
  CHECK_LAUNCH();
}

inline void launch_writes_input_tail(const Sum& s) {
  launch_cub(s);
  negate_last<<<1, 1, 0, s.stream>>>(s.x, s.n);
  CHECK_LAUNCH();
}

inline int64_t any_order(const Sum& s) { return s.n; }  // a bound no order of additions exceeds

inline const std::vector<std::string> kNames = {"never-writes", "writes-input-tail",
                                                "unzeroed-shared"};
inline const std::vector<int64_t> kSizes = {1, 1000003};

inline Step step(const std::string& name) {
  return name == "never-writes" ? Step{"planted-never-writes", launch_never_writes, any_order}
         : name == "unzeroed-shared"
             ? Step{"planted-unzeroed-shared", launch_unzeroed_shared, any_order}
             : Step{"planted-writes-input-tail", launch_writes_input_tail, any_order};
}

// The input of a planted step: zeros (right unless the output (never-writes) or the
// shared memory (unzeroed-shared) starts poisoned), or the usual data (writes-input-tail).
inline Input input(const std::string& name, int64_t n, uint64_t seed) {
  Input in = make_input(n, seed);
  if (name != "writes-input-tail") {
    fill_constant(in.x.get(), in.n, 0.0f);
    in.ref = in.abs_sum = 0.0;
    in.digest = device_digest(in.x.get(), in.x.bytes());
  }
  return in;
}

}  // namespace planted

// --- the problem --------------------------------------------------------------------------

// The sum of floats, for bench::run. A chapter with a compiled-in block size gives
// it (no --block); the default run: CUB, then each step at --n and --block, then the
// lesson on the table's last step; --verify-only checks every step at every size
// and block size.
struct SumProblem {
  using Step = reduce::Step;
  static constexpr const char* kName = "sum";
  static constexpr bool kExchangesOutputs = true;  // every check is reduce::verify's check_once

  int block = 0;  // the block size compiled into the kernels (no --block); 0: --block picks it
  bool offers_large = false;  // --large: --verify-only past 2^31 and 2^32
  const char* block_help = "threads per block";

  // The options.
  int64_t n = kDefaultN;
  std::string block_choice = std::to_string(kDefaultBlock);
  bool large = false;
  std::string plant = "none";  // --planted

  // --n, --block (unless compiled in), --large (if offered), --planted.
  void add_options(Cli& cli, const bench::Program<Step>&) {
    cli.add_int("--n", &n, 1, kMaxElements, "floats to sum");
    if (!block) {
      std::vector<std::string> blocks;
      for (int b : block_sizes()) blocks.push_back(std::to_string(b));
      cli.add_choice("--block", &block_choice, blocks, block_help);
    }
    if (offers_large)
      cli.add_flag("--large", &large,
                   "with --verify-only: sizes above 2^31 and 2^32 (64-bit indexing)");
    cli.add_choice("--planted", &plant,
                   {"none", "never-writes", "writes-input-tail", "unzeroed-shared"},
                   "with --verify-only: check a planted broken step instead (the protocol's own "
                   "tests; it must fail)");
  }

  // --block, or the compiled-in size.
  int chosen_block() const { return block ? block : std::stoi(block_choice); }

  // --large and --planted apply to --verify-only alone (exit 2 otherwise).
  void validate(const bench::Request<Step>& asked) const {
    const Cli& cli = asked.cli;
    const CommonOptions& opt = asked.opt;
    for (const char* name : {"--large", "--planted"})
      if (cli.was_given(name) && !opt.verify_only)
        cli.reject(std::string(name) + " applies only with --verify-only");
  }
  // The default run's size must fit in device memory (exit 2 naming the option).
  template <class S>
  void check_fits(const bench::Session<S>& s) const {
    if (!s.opt.verify_only) require_fits(s.gpu, "--n", n, kBytesPerFloat);
  }

  // --verify-only's sizes: --large's, --n alone, or verify_sizes(); checked to fit.
  template <class S>
  std::vector<int64_t> sizes(const bench::Session<S>& s) const {
    const std::vector<int64_t> v = large                    ? large_sizes()
                                   : s.cli.was_given("--n") ? std::vector<int64_t>{n}
                                                            : verify_sizes();
    require_fits(s.gpu, large ? "--large" : "--n", *std::max_element(v.begin(), v.end()),
                 kBytesPerFloat);
    return v;
  }
  // --verify-only's block sizes: every one, unless --block or --large picks one or
  // the kernels have one.
  template <class S>
  std::vector<int> blocks(const bench::Session<S>& s) const {
    if (block || large || s.cli.was_given("--block")) return {chosen_block()};
    return block_sizes();
  }
  // --verify-only with neither --n nor --large: the chapters' extra checks run.
  template <class S>
  bool full_sweep(const bench::Session<S>& s) const {
    return !large && !s.cli.was_given("--n");
  }

  void verify(const bench::Session<Step>& s) const {
    if (plant != "none") {
      for (int64_t size : planted::kSizes)
        reduce::verify(s.report, planted::step(plant), planted::input(plant, size, s.opt.seed),
                       {kDefaultBlock});
      return;
    }
    for (int64_t size : sizes(s)) {
      const Input in = make_input(size, s.opt.seed);
      for (int b : blocks(s))
        for (const Step& step : s.steps) reduce::verify(s.report, step, in, {b});
    }
  }

  void bench(const bench::Session<Step>& s) const {
    check_fits(s);
    const Config c{chosen_block()};
    {
      const Input in = make_input(n, s.opt.seed);
      s.report.add(bench::measure(s.opt, cub_row(n), cub_data(in), launch_cub, in.sum({})));
      for (const Step& step : s.steps)
        s.report.add(with_config(bench::measure(s.opt, step_row(step, n), step_data(step, in, c),
                                                step.launch, in.sum(c)),
                                 c));
    }
    lesson(s.opt, s.report, s.program.steps.back(), c);
  }
};

}  // namespace sw::reduce
