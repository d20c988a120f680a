// Chapter 05: the tree unrolled at compile time, the first add done while loading,
// and three ways to finish the last warp.
//
// What changed:  (1) the block size is a template parameter, so every level of
//                the tree is a constant: the loop, its counter and its branch
//                disappear, and levels that the block size rules out are not
//                compiled at all. (2) Each thread loads two elements, kBlock
//                apart, and adds them before the tree: a block covers 2 * kBlock
//                elements, so no thread idles in the first level and half as many
//                blocks are launched. (3) Once 64 values are left, one warp
//                finishes them without __syncthreads, in three ways:
//   volatile-warp  ANTI-EXAMPLE. The classic "warp-synchronous" code: volatile
//                  shared memory and no synchronization, trusting the 32 threads
//                  of a warp to run in lockstep. Since Volta, threads of a warp
//                  are scheduled independently and nothing promises that; it is
//                  a data race (compute-sanitizer --tool racecheck reports it; a
//                  test checks that). Measured only as role "anti-example".
//   syncwarp       the same shared-memory steps, each write and read separated by
//                  __syncwarp(): correct, and racecheck is clean.
//   shuffle        __shfl_down_sync: the values move between the warp's registers,
//                  no shared memory, no volatile, no barrier but the shuffle's own.
// Why faster:    fewer instructions per element (no loop overhead, half the
//                blocks, no idle first level) and 5 fewer __syncthreads per block.
// Bottleneck:    approaching DRAM bandwidth; what is left is one pass per block
//                over the data plus the launch of each pass (see chapter 06).
// Run:           build/chapters/05_reduce_unrolled [--n 2^28] [--block 256]
//                [--variant shuffle] [--verify-only] [--json]
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

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

enum class LastWarp { kVolatile, kSyncwarp, kShuffle };

// --- the kernel --------------------------------------------------------------------------

template <int kBlock, LastWarp kLast>
__global__ void reduce_unrolled(const float* x, float* out, int64_t n) {
  static_assert(kBlock >= kWarp && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0,
                "a power of two from 32 to 1024");
  // The last warp reads s[tid + 32], so a 32-thread block gets 32 zeros of padding.
  constexpr int kShared = kBlock < 2 * kWarp ? 2 * kWarp : kBlock;
  __shared__ float s[kShared];
  const int tid = threadIdx.x;

  // The first add, during the load: this block covers 2 * kBlock elements.
  const int64_t i = static_cast<int64_t>(blockIdx.x) * (2 * kBlock) + tid;
  float v = i < n ? x[i] : 0.0f;
  if (i + kBlock < n) v += x[i + kBlock];
  s[tid] = v;
  if constexpr (kBlock < 2 * kWarp) s[tid + kWarp] = 0.0f;
  __syncthreads();

  // The tree down to 64 values, every level a constant; absent levels vanish.
  if constexpr (kBlock >= 1024) { if (tid < 512) s[tid] += s[tid + 512]; __syncthreads(); }
  if constexpr (kBlock >= 512) { if (tid < 256) s[tid] += s[tid + 256]; __syncthreads(); }
  if constexpr (kBlock >= 256) { if (tid < 128) s[tid] += s[tid + 128]; __syncthreads(); }
  if constexpr (kBlock >= 128) { if (tid < 64) s[tid] += s[tid + 64]; __syncthreads(); }

  // 64 values left in s[0..63]: warp 0 finishes.
  if (tid >= kWarp) return;
  if constexpr (kLast == LastWarp::kVolatile) {
    // ANTI-EXAMPLE: lane t reads what lane t + offset writes in the same step,
    // with nothing ordering the two. volatile only stops the compiler from keeping
    // values in registers; it does not synchronize the lanes.
    volatile float* vs = s;
    vs[tid] += vs[tid + 32];
    vs[tid] += vs[tid + 16];
    vs[tid] += vs[tid + 8];
    vs[tid] += vs[tid + 4];
    vs[tid] += vs[tid + 2];
    vs[tid] += vs[tid + 1];
    if (tid == 0) out[blockIdx.x] = vs[0];
  } else if constexpr (kLast == LastWarp::kSyncwarp) {
    float w = s[tid] + s[tid + 32];
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      s[tid] = w;             // publish this lane's value
      __syncwarp();           // ... before any lane reads it
      w += s[tid + offset];
      __syncwarp();           // every read done before the next write
    }
    if (tid == 0) out[blockIdx.x] = w;
  } else {
    float w = s[tid] + s[tid + 32];
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) w += __shfl_down_sync(kFullMask, w, offset);
    if (tid == 0) out[blockIdx.x] = w;
  }
}

// --- the whole sum ----------------------------------------------------------------------

struct LastWarpInfo {
  LastWarp last;
  const char* name;
  const char* role;
};
constexpr LastWarpInfo kLastWarps[] = {
    {LastWarp::kVolatile, "volatile-warp", "anti-example"},
    {LastWarp::kSyncwarp, "syncwarp", "step"},
    {LastWarp::kShuffle, "shuffle", "step"},
};
constexpr const LastWarpInfo& kBest = kLastWarps[2];

template <int kBlock, LastWarp kLast>
void launch_pass(const float* in, float* out, int64_t count, int64_t blocks) {
  reduce_unrolled<kBlock, kLast><<<rd::grid_size(blocks), kBlock>>>(in, out, count);
  CHECK_LAUNCH();
}

using LaunchFn = void (*)(const float*, float*, int64_t, int64_t);

LaunchFn pick_launch(int block, LastWarp last) {
  LaunchFn fn = nullptr;
  rd::dispatch_block(block, [&](auto b) {
    constexpr int kB = decltype(b)::value;
    switch (last) {
      case LastWarp::kVolatile: fn = launch_pass<kB, LastWarp::kVolatile>; break;
      case LastWarp::kSyncwarp: fn = launch_pass<kB, LastWarp::kSyncwarp>; break;
      case LastWarp::kShuffle: fn = launch_pass<kB, LastWarp::kShuffle>; break;
    }
  });
  return fn;
}

// The variant owns its buffers; the input must outlive it.
rd::Variant unrolled_variant(const rd::Input& in, int block, const LastWarpInfo& info) {
  const int64_t per_block = 2 * int64_t{block};
  auto passes = std::make_shared<rd::MultiPass>(in.n, per_block);
  const float* x = in.x.get();
  rd::Variant v;
  v.name = info.name;
  v.role = info.role;
  v.run = [passes, x, launch = pick_launch(block, info.last)] { passes->run(x, launch); };
  v.read = [passes] { return passes->read(); };
  v.poison = [passes] { passes->poison(); };
  // Per pass: the add at load, log2(kBlock) levels, one more for the padded 32-block.
  v.depth = passes->depth(sw::ceil_log2(per_block) + 1);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = rd::kDefaultN;
  std::string block_text = std::to_string(rd::kDefaultBlock);
  std::string variant = "all";
  sw::Cli cli("05_reduce_unrolled", "Sum of floats: an unrolled tree, first add at load, three last-warp finishes.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "floats to sum");
  rd::add_block_option(cli, &block_text, "threads per block (a template parameter)");
  cli.add_choice("--variant", &variant, {"all", "volatile-warp", "syncwarp", "shuffle"},
                 "the last-warp finish(es) to run; volatile-warp is the racy anti-example");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const int block = std::stoi(block_text);

  std::vector<LastWarpInfo> chosen;
  for (const LastWarpInfo& w : kLastWarps)
    if (variant == "all" || variant == w.name) chosen.push_back(w);

  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "05", "sum");
  const double bytes_per_float = sizeof(float) * (1.0 + 2.0 / 64);  // data + block sums

  if (opt.verify_only) {
    const rd::VerifyPlan plan = rd::verify_plan(cli, gpu, false, n, block, bytes_per_float);
    const auto& sizes = plan.sizes;
    const auto& blocks = plan.blocks;
    for (int64_t size : sizes) {
      const rd::Input in = rd::make_input(size, opt.seed);
      for (int b : blocks)
        for (const LastWarpInfo& w : chosen)
          rd::verify(report, unrolled_variant(in, b, w), in,
                     std::string(w.name) + " n=" + std::to_string(size) + " block=" + std::to_string(b));
    }
    return report.exit_code();
  }

  sw::require_fits(gpu, "--n", n, bytes_per_float);
  {
    const rd::Input in = rd::make_input(n, opt.seed);
    rd::bench(opt, report, rd::cub_variant(in, gpu.info.sm_count), in);
    for (const LastWarpInfo& w : chosen) rd::bench(opt, report, unrolled_variant(in, block, w), in, {{"block", block}});
  }
  rd::lesson(opt, report, [&](const rd::Input& in) { return unrolled_variant(in, block, kBest); });
  return report.exit_code();
}
