// Chapter 03: the block's tree moves into shared memory; three ways to address it.
//
// What changed:  each block copies its elements into a static __shared__ array
//                once (zeros pad the last block), sums them there, and writes one
//                value; the input is no longer overwritten. The block sums are
//                summed by launching the same kernel again until one value is
//                left, so the whole sum stays on the GPU. Three addressing
//                schemes of the tree, one run:
//   interleaved-modulo   thread t works when t % (2*stride) == 0: the working
//                        threads are scattered over every warp, so warps diverge,
//                        and % costs a dozen integer instructions.
//   interleaved-strided  thread t works on index 2*stride*t: the working threads
//                        are packed into the first warps (no divergence), but
//                        their addresses are 2*stride floats apart, so they fall
//                        into the same shared-memory banks (bank conflicts).
//   sequential           thread t < stride adds t + stride: packed threads and
//                        consecutive addresses, conflict-free.
// Why faster:    shared memory is on-chip: the tree's log2(256) levels no longer
//                go through L1/L2, and global memory is read exactly once.
// Bottleneck:    the tree itself: half of the threads idle after the load, one
//                __syncthreads per level, and the loop overhead.
// Run:           build/chapters/03_reduce_shared [--n 2^28]
//                [--variant sequential] [--verify-only] [--json]
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

// Static shared memory needs its size at compile time, so the block size is
// fixed here; chapter 04 makes it a run-time option.
constexpr int kBlock = 256;

enum class Scheme { kInterleavedModulo, kInterleavedStrided, kSequential };

// --- the kernel: one template, three trees ---------------------------------------------
// The loops are kept as loops (unroll 1), as in the classic code: unrolling is
// chapter 05's step.

template <Scheme kScheme>
__global__ void reduce_shared(const float* x, float* out, int64_t n) {
  __shared__ float s[kBlock];
  const int tid = threadIdx.x;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + tid;
  s[tid] = i < n ? x[i] : 0.0f;  // adding the padding zeros is exact
  __syncthreads();

  if constexpr (kScheme == Scheme::kInterleavedModulo) {
#pragma unroll 1
    for (int stride = 1; stride < kBlock; stride *= 2) {
      if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];
      __syncthreads();
    }
  } else if constexpr (kScheme == Scheme::kInterleavedStrided) {
#pragma unroll 1
    for (int stride = 1; stride < kBlock; stride *= 2) {
      const int index = 2 * stride * tid;
      if (index < kBlock) s[index] += s[index + stride];
      __syncthreads();
    }
  } else {
#pragma unroll 1
    for (int stride = kBlock / 2; stride > 0; stride /= 2) {
      if (tid < stride) s[tid] += s[tid + stride];
      __syncthreads();
    }
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

// --- the whole sum ----------------------------------------------------------------------

// One pass: `blocks` blocks turn `count` values into `blocks` block sums.
template <Scheme kScheme>
void launch_pass(const float* in, float* out, int64_t count, int64_t blocks) {
  reduce_shared<kScheme><<<rd::grid_size(blocks), kBlock>>>(in, out, count);
  CHECK_LAUNCH();
}

struct SchemeInfo {
  const char* name;
  void (*launch)(const float*, float*, int64_t, int64_t);
};
constexpr SchemeInfo kSchemes[] = {
    {"interleaved-modulo", launch_pass<Scheme::kInterleavedModulo>},
    {"interleaved-strided", launch_pass<Scheme::kInterleavedStrided>},
    {"sequential", launch_pass<Scheme::kSequential>},
};
constexpr const SchemeInfo& kBest = kSchemes[2];

// The variant owns its buffers; the input must outlive it.
rd::Variant shared_variant(const rd::Input& in, const SchemeInfo& info) {
  auto passes = std::make_shared<rd::MultiPass>(in.n, kBlock);
  const float* x = in.x.get();
  rd::Variant v;
  v.name = info.name;
  v.run = [passes, x, launch = info.launch] { passes->run(x, launch); };
  v.read = [passes] { return passes->read(); };
  v.poison = [passes] { passes->poison(); };
  v.depth = passes->depth(sw::ceil_log2(kBlock));  // every pass: a tree of log2(256) levels
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = rd::kDefaultN;
  std::string variant = "all";
  sw::Cli cli("03_reduce_shared", "Sum of floats: a shared-memory tree, three addressing schemes.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "floats to sum");
  cli.add_choice("--variant", &variant, {"all", "interleaved-modulo", "interleaved-strided", "sequential"},
                 "the addressing scheme(s) to run");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);

  std::vector<SchemeInfo> chosen;
  for (const SchemeInfo& s : kSchemes)
    if (variant == "all" || variant == s.name) chosen.push_back(s);

  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "03", "sum");
  const double bytes_per_float = sizeof(float) * (1.0 + 2.0 / kBlock);  // data + block sums

  if (opt.verify_only) {
    const auto sizes = rd::sizes_to_verify(false, cli.was_given("--n"), n);
    sw::require_fits(gpu, "--n", *std::max_element(sizes.begin(), sizes.end()), bytes_per_float);
    for (int64_t size : sizes) {
      const rd::Input in = rd::make_input(size, opt.seed);
      for (const SchemeInfo& s : chosen)  // the only block size: kBlock
        rd::verify(report, shared_variant(in, s), in,
                   std::string(s.name) + " n=" + std::to_string(size) + " block=" + std::to_string(kBlock));
    }
    return report.exit_code();
  }

  sw::require_fits(gpu, "--n", n, bytes_per_float);
  {
    const rd::Input in = rd::make_input(n, opt.seed);
    rd::bench(opt, report, rd::cub_variant(in, gpu.info.sm_count), in);
    for (const SchemeInfo& s : chosen) rd::bench(opt, report, shared_variant(in, s), in, {{"block", kBlock}});
  }
  rd::lesson(opt, report, [&](const rd::Input& in) { return shared_variant(in, kBest); });
  return report.exit_code();
}
