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
#include "common/reduce_harness.h"
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

const rd::Step kStatic = {"static-shared", launch_static_shared, depth_static_shared};
const rd::Step kDynamic = {"dynamic-shared", launch_dynamic_shared, depth_dynamic_shared};

}  // namespace

// The host code is the lesson: both kernels side by side, then every block size.
int main(int argc, char** argv) {
  rd::Chapter ch{"04_reduce_dynamic_shared",
                 "Sum of floats: the shared-memory tree with launch-sized shared memory.",
                 "04",
                 {kStatic, kDynamic}};
  ch.block_help = "threads per block of the dynamic kernel";
  rd::Options o;
  sw::Cli cli = rd::make_cli(ch, &o);
  rd::Setup s = rd::start(cli, o, ch, argc, argv);

  if (s.opt.verify_only) {
    for (int64_t size : s.sizes) {
      const rd::Input in = rd::make_input(size, s.opt.seed);
      rd::verify(s.report, kStatic, in, {kStaticBlock});
      for (int b : s.blocks) rd::verify(s.report, kDynamic, in, {b});
    }
    return s.report.exit_code();
  }

  {
    const rd::Input in = rd::make_input(s.n, s.opt.seed);
    rd::bench_cub(s.opt, s.report, in);
    // Static first, then dynamic (by default at the same 256 threads): "vs prev"
    // is their ratio.
    rd::bench(s.opt, s.report, kStatic, in, {kStaticBlock});
    rd::bench(s.opt, s.report, kDynamic, in, {s.block});
    // What a run-time size buys: every block size from the same binary.
    for (int b : rd::block_sizes()) {
      sw::Result r = rd::measure(rd::sweep_options(s.opt), kDynamic, in, {b});
      r.variant = "dynamic-sweep";
      r.role = "sweep";
      s.report.add(r);
    }
  }
  rd::lesson(s.opt, s.report, kDynamic, {s.block});
  return s.report.exit_code();
}
