// Chapter 02: the first GPU sum, in global memory only.
//
// What changed:  from chapter 01's CPU loop to thousands of threads. Each block
//                sums its own blockDim.x elements as a tree, in place in global
//                memory: at every level the lower half of the block adds the
//                upper half, then __syncthreads(). The block sums are copied to
//                the host and finished there (in double), as in the classic code.
// It overwrites its input: the tree writes its partial sums over x. The
//                benchmark restores x before every run, outside the timed region.
// Why faster:    the CPU reads with one core; here every SM streams the array.
// Bottleneck:    every tree level reads and writes global memory (L1/L2 traffic
//                and a __syncthreads per level), and the host finish adds a copy
//                of the block sums and a loop on one core.
// Run:           build/chapters/02_reduce_global [--n 2^28] [--block 256]
//                [--verify-only [--large]] [--json]
#include <algorithm>
#include <cmath>
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

// --- the kernel --------------------------------------------------------------------

// Block b sums x[b * blockDim.x ...] in place (blockDim.x a power of two) and
// writes the sum to partial[b]. The last block may be short: `count` elements.
__global__ void reduce_global(float* x, float* partial, int64_t n) {
  const int tid = threadIdx.x;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x;
  float* block = x + base;
  const int64_t left = n - base;
  const int64_t count = left < blockDim.x ? left : blockDim.x;
  for (int offset = blockDim.x / 2; offset > 0; offset /= 2) {
    if (tid < offset && tid + offset < count) block[tid] += block[tid + offset];
    __syncthreads();  // also makes this level's global writes visible to the block
  }
  if (tid == 0) partial[blockIdx.x] = block[0];
}

// --- the whole sum: kernel, copy of the block sums, host finish ----------------------

// The variant owns its buffers; the input must outlive it.
rd::Variant global_variant(const rd::Input& in, int block) {
  struct State {
    sw::DeviceBuffer<float> partial;
    std::vector<float> host;  // the block sums on the host
    double result = NAN;
  };
  const int64_t blocks = rd::ceil_div(in.n, block);
  auto s = std::make_shared<State>();
  s->partial.allocate(blocks);
  s->host.resize(blocks);
  float* x = in.x.get();
  const int64_t n = in.n;

  rd::Variant v;
  v.name = "global-in-place";
  v.run = [s, x, n, block, blocks] {
    reduce_global<<<rd::grid_size(blocks), block>>>(x, s->partial.get(), n);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(s->host.data(), s->partial.get(), blocks * sizeof(float),
                          cudaMemcpyDeviceToHost));
    double sum = 0;  // in double: the host part adds no float error
    for (float p : s->host) sum += p;
    s->result = sum;
  };
  v.read = [s] { return s->result; };
  v.poison = [s] {
    sw::poison(s->partial.get(), s->partial.bytes());
    s->result = NAN;
  };
  v.before = [&in] { in.refill(); };  // the kernel overwrote x
  // The block tree has log2(block) levels; the double finish adds less error than
  // one more float level would (block sums number at most 2^27 << 2^29).
  v.depth = sw::ceil_log2(block) + 1;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = rd::kDefaultN;
  std::string block_text = std::to_string(rd::kDefaultBlock);
  bool large = false;
  sw::Cli cli("02_reduce_global", "Sum of floats: an in-place tree per block in global memory.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "floats to sum");
  rd::add_block_option(cli, &block_text, "threads per block");
  cli.add_flag("--large", &large, "with --verify-only: sizes above 2^31 and 2^32 (64-bit indexing)");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const int block = std::stoi(block_text);

  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "02", "sum");
  const double bytes_per_float = sizeof(float) * (1.0 + 1.0 / 32);  // data + block sums

  if (opt.verify_only) {
    const rd::VerifyPlan plan = rd::verify_plan(cli, gpu, large, n, block, bytes_per_float);
    const auto& sizes = plan.sizes;
    const auto& blocks = plan.blocks;
    for (int64_t size : sizes) {
      const rd::Input in = rd::make_input(size, opt.seed);
      for (int b : blocks)
        rd::verify(report, global_variant(in, b), in,
                   "global-in-place n=" + std::to_string(size) + " block=" + std::to_string(b));
    }
    return report.exit_code();
  }

  sw::require_fits(gpu, "--n", n, bytes_per_float);
  {
    const rd::Input in = rd::make_input(n, opt.seed);
    rd::bench(opt, report, rd::cub_variant(in, gpu.info.sm_count), in);
    rd::bench(opt, report, global_variant(in, block), in, {{"block", block}});
  }
  rd::lesson(opt, report, [&](const rd::Input& in) { return global_variant(in, block); });
  return report.exit_code();
}
