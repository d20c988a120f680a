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
// Bottleneck:    as in chapter 03: the tree's idle threads, its __syncthreads
//                per level and the loop overhead.
// Run:           build/chapters/04_reduce_dynamic_shared [--n 2^28] [--block 256]
//                [--verify-only] [--json]
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/cli.h"
#include "common/device.h"
#include "common/reduce_harness.h"
#include "common/report.h"

namespace {

namespace rd = sw::reduce;

constexpr int kStaticBlock = 256;  // the static kernel's compile-time size

// --- the kernels ------------------------------------------------------------------------
// Both keep chapter 03's loop (unroll 1): the only difference is the declaration.

// Chapter 03's sequential kernel, unchanged: the yardstick.
__global__ void reduce_static(const float* x, float* out, int64_t n) {
  __shared__ float s[kStaticBlock];
  const int tid = threadIdx.x;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kStaticBlock + tid;
  s[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
#pragma unroll 1
  for (int stride = kStaticBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// The same tree over blockDim.x (a power of two) floats of launch-sized shared memory.
__global__ void reduce_dynamic(const float* x, float* out, int64_t n) {
  extern __shared__ float s[];
  const int tid = threadIdx.x;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + tid;
  s[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
#pragma unroll 1
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// --- the whole sum ----------------------------------------------------------------------

// block == 0 selects the static kernel. The variant owns its buffers; the input
// must outlive it.
rd::Variant shared_variant(const rd::Input& in, int block) {
  const bool dynamic = block != 0;
  const int threads = dynamic ? block : kStaticBlock;
  auto passes = std::make_shared<rd::MultiPass>(in.n, threads);
  const float* x = in.x.get();
  rd::Variant v;
  v.name = dynamic ? "dynamic-shared" : "static-shared";
  v.run = [passes, x, dynamic, threads] {
    passes->run(x, [&](const float* src, float* dst, int64_t count, int64_t blocks) {
      if (dynamic)
        reduce_dynamic<<<rd::grid_size(blocks), threads, threads * sizeof(float)>>>(src, dst, count);
      else
        reduce_static<<<rd::grid_size(blocks), kStaticBlock>>>(src, dst, count);
      CHECK_LAUNCH();
    });
  };
  v.read = [passes] { return passes->read(); };
  v.poison = [passes] { passes->poison(); };
  v.depth = passes->depth(sw::ceil_log2(threads));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = rd::kDefaultN;
  std::string block_text = std::to_string(rd::kDefaultBlock);
  sw::Cli cli("04_reduce_dynamic_shared", "Sum of floats: the shared-memory tree with launch-sized shared memory.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "floats to sum");
  rd::add_block_option(cli, &block_text, "threads per block of the dynamic kernel");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const int block = std::stoi(block_text);

  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "04", "sum");
  const double bytes_per_float = sizeof(float) * (1.0 + 2.0 / 32);  // data + block sums

  if (opt.verify_only) {
    const rd::VerifyPlan plan = rd::verify_plan(cli, gpu, false, n, block, bytes_per_float);
    const auto& sizes = plan.sizes;
    const auto& blocks = plan.blocks;
    for (int64_t size : sizes) {
      const rd::Input in = rd::make_input(size, opt.seed);
      const std::string at = " n=" + std::to_string(size);
      rd::verify(report, shared_variant(in, 0), in, "static-shared" + at + " block=" + std::to_string(kStaticBlock));
      for (int b : blocks)
        rd::verify(report, shared_variant(in, b), in, "dynamic-shared" + at + " block=" + std::to_string(b));
    }
    return report.exit_code();
  }

  sw::require_fits(gpu, "--n", n, bytes_per_float);
  {
    const rd::Input in = rd::make_input(n, opt.seed);
    rd::bench(opt, report, rd::cub_variant(in, gpu.info.sm_count), in);
    // Static first, then dynamic (by default at the same 256 threads): "vs prev"
    // is their ratio.
    rd::bench(opt, report, shared_variant(in, 0), in, {{"block", kStaticBlock}});
    rd::bench(opt, report, shared_variant(in, block), in, {{"block", block}});
    // What a run-time size buys: every block size from the same binary.
    sw::CommonOptions sweep = opt;
    sweep.reps = std::min(opt.reps, rd::kSweepReps);
    for (int b : rd::block_sizes()) {
      rd::Variant v = shared_variant(in, b);
      v.name = "dynamic-sweep";
      v.role = "sweep";
      rd::bench(sweep, report, v, in, {{"block", b}});
    }
  }
  rd::lesson(opt, report, [&](const rd::Input& in) { return shared_variant(in, block); });
  return report.exit_code();
}
