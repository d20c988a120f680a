// Chapter 04: the same shared-memory tree, with shared memory sized at launch.
//
// What changed:  chapter 03's sequential kernel declares `extern __shared__
//                float s[]` and the launch passes block * sizeof(float) bytes as
//                the third <<<>>> argument, so the block size is a run-time
//                option (--block) instead of a compile-time constant. The static
//                kernel runs beside it, at 256 threads, in the same run.
// Why the same:  "static" and "dynamic" only say who sizes the block's shared
//                memory: the compiler or the launch. Both are the same on-chip
//                memory, reserved when the block starts; the instructions that
//                read and write it are identical. The measured ratio should be
//                1.00 within noise.
// What it buys:  one binary tries every block size: the sweep below.
// The finish:    unchanged: chapter 03's passes (ch03::Pass), again over the block
//                sums.
// Bottleneck:    as in chapter 03: the tree's idle threads, its __syncthreads
//                per level and the loop overhead.
// Steps:         static-shared, dynamic-shared
// Run:           build/chapters/04_reduce_dynamic_shared [--n 2^28] [--block 256]
//                [--verify-only] [--json]
#include <cstddef>
#include <cstdint>
#include <vector>

#include "chapters/03_reduce_shared/multi_pass.cuh"  // chapter 03's finish: launch again over the block sums
#include "common/check.h"
#include "common/problems/reduce.h"
#include "common/verify.h"

namespace {

namespace rd = sw::reduce;

constexpr int kStaticBlock = 256;  // the static kernel's compile-time size

// --- the kernels: one body, two declarations of its shared memory -----------------------

// Chapter 03's sequential tree over `size` floats of shared memory s (size a
// power of two), kept as a loop (unroll 1). `size` is unsigned, as blockDim.x
// is: a signed size costs a sign fix-up per division (3 more instructions).
__device__ __forceinline__ void sequential_tree(float* s, unsigned size, const float* x, float* out,
                                                int64_t n) {
  const int tid = threadIdx.x;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * size + tid;
  s[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
// lab shared-tree: begin
#pragma unroll 1
  for (int stride = size / 2; stride > 0; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  // lab shared-tree: end
  if (tid == 0) out[blockIdx.x] = s[0];
}

// Sized by the compiler: chapter 03's kernel, unchanged. The yardstick.
__global__ void reduce_static_shared(const float* x, float* out, int64_t n) {
  __shared__ float s[kStaticBlock];
  sequential_tree(s, kStaticBlock, x, out, n);
}

// Sized by the launch: blockDim.x floats.
__global__ void reduce_dynamic_shared(const float* x, float* out, int64_t n) {
  extern __shared__ float s[];
  sequential_tree(s, blockDim.x, x, out, n);
}

// --- the whole sum: chapter 03's passes --------------------------------------------------

void launch_static_shared(const rd::Sum& s) {
  for (ch03::Pass p(s, kStaticBlock); !p.done(); p.next()) {
    reduce_static_shared<<<rd::grid_size(p.blocks), kStaticBlock>>>(p.in, p.out, p.count);
    CHECK_LAUNCH();
  }
}

void launch_dynamic_shared(const rd::Sum& s) {
  const size_t shared_bytes = s.block * sizeof(float);  // the third <<<>>> argument
  for (ch03::Pass p(s, s.block); !p.done(); p.next()) {
    reduce_dynamic_shared<<<rd::grid_size(p.blocks), s.block, shared_bytes>>>(p.in, p.out, p.count);
    CHECK_LAUNCH();
  }
}

// Every pass is a tree of log2(threads) levels.
int64_t depth_static_shared(const rd::Sum& s) {
  return ch03::passes(s.n, kStaticBlock) * sw::ceil_log2(kStaticBlock);
}
int64_t depth_dynamic_shared(const rd::Sum& s) {
  return ch03::passes(s.n, s.block) * sw::ceil_log2(s.block);
}

const std::vector<rd::Step> kSteps = {
    {"static-shared", launch_static_shared, depth_static_shared},
    {"dynamic-shared", launch_dynamic_shared, depth_dynamic_shared},
};
bool is_static(const rd::Step& step) { return step.launch == launch_static_shared; }

// The host code is the lesson: both kernels side by side, then every block size.
struct DynamicSharedProblem : rd::SumProblem {
  // --block sets the dynamic kernel's size: with the static step alone it is an error.
  static void check_block(const sw::bench::Session<rd::Step>& s) {
    if (s.cli.was_given("--block") && s.variant == "static-shared")
      s.cli.reject("--block applies to dynamic-shared, not to static-shared");
  }

  // --verify-only: the static kernel at its compiled-in size, the dynamic one at
  // every block size.
  void verify(const sw::bench::Session<rd::Step>& s) const {
    check_block(s);
    if (plant != "none") return rd::SumProblem::verify(s);
    for (int64_t size : sizes(s)) {
      const rd::Input in = rd::make_input(size, s.opt.seed);
      for (const rd::Step& step : s.steps)
        if (is_static(step))
          rd::verify(s.report, step, in, {kStaticBlock});
        else
          for (int b : blocks(s)) rd::verify(s.report, step, in, {b});
    }
  }

  // CUB; static first, then dynamic (by default at the same 256 threads): "vs prev"
  // is their ratio; then every block size from the same binary, and the lesson.
  void bench(const sw::bench::Session<rd::Step>& s) const {
    check_block(s);
    check_fits(s);
    const rd::Step& dynamic = kSteps.back();
    {
      const rd::Input in = rd::make_input(n, s.opt.seed);
      s.report.add(
          sw::bench::measure(s.opt, rd::cub_row(n), rd::cub_data(in), rd::launch_cub, in.sum({})));
      for (const rd::Step& step : s.steps) {
        const rd::Config c{is_static(step) ? kStaticBlock : chosen_block()};
        s.report.add(
            rd::with_config(sw::bench::measure(s.opt, rd::step_row(step, n),
                                               rd::step_data(step, in, c), step.launch, in.sum(c)),
                            c));
      }
      if (s.variant != "all") return;
      for (int b : rd::block_sizes()) {
        sw::Result r = rd::with_config(
            sw::bench::measure(rd::sweep_options(s.opt), rd::step_row(dynamic, n),
                               rd::step_data(dynamic, in, {b}), dynamic.launch, in.sum({b})),
            {b});
        r.variant = "dynamic-sweep";
        r.role = "sweep";
        s.report.add(r);
      }
    }
    rd::lesson(s.opt, s.report, dynamic, {chosen_block()});
  }
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<rd::Step> program{
      "04_reduce_dynamic_shared",
      "Sum of floats: the shared-memory tree with launch-sized shared memory.", "04", kSteps};
  DynamicSharedProblem sum;
  sum.block_help = "threads per block of the dynamic kernel";
  return sw::bench::run(argc, argv, program, sum);
}
