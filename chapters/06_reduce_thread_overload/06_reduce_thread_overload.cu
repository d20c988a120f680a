// Chapter 06: fewer threads than elements (Brent's theorem), and the finish.
//
// What changed:  chapters 02-05 start one thread per element (or two), so most of
//                each block's life is the tree. Here the grid is sized from the
//                GPU, blocks_per_sm x SMs blocks, and each thread walks the array
//                with a grid-stride loop, adding in a register; the tree then runs
//                once per block instead of once per 512 elements. Each iteration
//                issues kUnroll independent 16-byte (float4) loads, so enough bytes
//                are in flight to cover DRAM latency; the last n % 4 floats are a
//                scalar tail. The block finishes with warp shuffles (chapter 05),
//                and every index is 64-bit. Two ways to combine the block sums:
//   two-pass            block sums to a buffer, then a second launch of the same
//                       kernel with one block adds them in a fixed order: the
//                       result is bitwise the same on every run (a test checks).
//   single-pass-atomic  each block atomicAdd()s its sum into the result (zeroed
//                       first): one launch, but the order of the float additions
//                       depends on which block finishes first, so the last bits
//                       can change from run to run. Not deterministic.
// Why faster:    per element, a load and an add; the tree, its __syncthreads and
//                the block sums are paid once per block of ~n / grid elements.
// Bottleneck:    DRAM bandwidth: the goal is cub::DeviceReduce::Sum, measured in
//                the same run. The blocks-per-SM sweep shows how many bytes in
//                flight it takes; at n = 2^20 the launches themselves dominate.
// Run:           build/chapters/06_reduce_thread_overload [--n 2^28] [--block 256]
//                [--blocks-per-sm N] [--verify-only [--large]] [--json]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/cli.h"
#include "common/device.h"
#include "common/reduce_harness.h"
#include "common/report.h"
#include "reduce_overload.cuh"  // the kernel of this chapter, shared with 12 and 14

namespace {

namespace rd = sw::reduce;

using ch06::Finish;
using ch06::kUnroll;
using ch06::kVec;
using ch06::reduce_overload;
constexpr int kMaxBlocksPerSm = 64;           // the --blocks-per-sm range
const std::vector<int> kSweep = {1, 2, 4, 8, 16, 32};  // blocks per SM measured by the default run
constexpr int64_t kLatencyN = int64_t{1} << 20;        // where launches, not bytes, dominate
constexpr int kRepeatRuns = 20;               // runs compared bit for bit

// --- launches -------------------------------------------------------------------------------

template <Finish kFinish>
void launch(int block, int64_t grid, const float* x, int64_t n, float* out) {
  rd::dispatch_block(block, [&](auto b) {
    constexpr int kB = decltype(b)::value;
    reduce_overload<kB, kFinish><<<rd::grid_size(grid), kB>>>(x, n, out);
  });
  CHECK_LAUNCH();
}

// Blocks resident per SM for this block size: one full wave, the default when
// --blocks-per-sm is not given and the sweep has not run (--verify-only).
int resident_blocks_per_sm(int block) {
  int blocks = 0;
  rd::dispatch_block(block, [&](auto b) {
    constexpr int kB = decltype(b)::value;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reduce_overload<kB, Finish::kPartials>,
                                                             kB, 0));
  });
  return std::max(blocks, 1);
}

using ch06::grid_for;

// Additions an element passes through in one launch over `count` floats with
// `threads` threads: 2 inside its float4, one per float4 of its thread, 1 for the
// tail, and 10 for the two shuffle trees of block_sum.
int64_t launch_depth(int64_t count, int64_t threads) {
  return rd::ceil_div(rd::ceil_div(count, kVec), threads) + 3 + 10;
}

// The variant owns its buffers; the input must outlive it.
rd::Variant overload_variant(const rd::Input& in, Finish finish, int block, int blocks_per_sm, int sm_count) {
  const int64_t grid = grid_for(in.n, block, blocks_per_sm, sm_count);
  struct Buffers {
    sw::DeviceBuffer<float> partials, result{1};
  };
  auto buf = std::make_shared<Buffers>();
  const float* x = in.x.get();
  const int64_t n = in.n;
  const int64_t first_depth = launch_depth(n, grid * block);
  rd::Variant v;
  if (finish == Finish::kPartials) {
    buf->partials.allocate(grid);
    v.name = "two-pass";
    v.deterministic = true;
    v.run = [buf, x, n, block, grid] {
      launch<Finish::kPartials>(block, grid, x, n, buf->partials.get());
      launch<Finish::kPartials>(block, 1, buf->partials.get(), grid, buf->result.get());
    };
    v.depth = first_depth + launch_depth(grid, block);
  } else {
    v.name = "single-pass-atomic";
    v.run = [buf, x, n, block, grid] {
      CUDA_CHECK(cudaMemsetAsync(buf->result.get(), 0, sizeof(float)));
      launch<Finish::kAtomic>(block, grid, x, n, buf->result.get());
    };
    v.depth = first_depth + grid;  // the atomics add the block sums in some order
  }
  v.read = [buf] { return rd::read_scalar(buf->result.get()); };
  v.poison = [buf] {
    if (buf->partials.count() > 0) sw::poison(buf->partials.get(), buf->partials.bytes());
    sw::poison(buf->result.get(), buf->result.bytes());
  };
  return v;
}

constexpr Finish kFinishes[] = {Finish::kPartials, Finish::kAtomic};

}  // namespace

int main(int argc, char** argv) {
  int64_t n = rd::kDefaultN;
  std::string block_text = std::to_string(rd::kDefaultBlock);
  int blocks_per_sm = 0;  // 0: one full wave (--verify-only) or the sweep's best (default run)
  bool large = false;
  sw::Cli cli("06_reduce_thread_overload",
              "Sum of floats: grid-stride float4 loads, shuffle finish, two-pass or atomic.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "floats to sum");
  rd::add_block_option(cli, &block_text, "threads per block (a template parameter)");
  cli.add_int("--blocks-per-sm", &blocks_per_sm, 1, kMaxBlocksPerSm,
              "grid = this x SMs (default: the sweep's best; one full wave with --verify-only)");
  cli.add_flag("--large", &large, "with --verify-only: sizes above 2^31 and 2^32 (64-bit indexing)");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const int block = std::stoi(block_text);

  const sw::Gpu gpu = sw::start_gpu(opt);
  const int sms = gpu.info.sm_count;
  sw::Report report(opt, gpu.copy_gbps, "06", "sum");
  const double bytes_per_float = sizeof(float) * 1.01;  // the data; block sums are a few KB

  if (opt.verify_only) {
    const rd::VerifyPlan plan = rd::verify_plan(cli, gpu, large, n, block, bytes_per_float);
    const auto& sizes = plan.sizes;
    const auto& blocks = plan.blocks;
    for (int64_t size : sizes) {
      const rd::Input in = rd::make_input(size, opt.seed);
      const std::string at = " n=" + std::to_string(size);
      for (int b : blocks) {
        const int bpsm = blocks_per_sm ? blocks_per_sm : resident_blocks_per_sm(b);
        const std::string cfg = at + " block=" + std::to_string(b) + " blocks_per_sm=" + std::to_string(bpsm);
        for (Finish f : kFinishes) {
          const rd::Variant v = overload_variant(in, f, b, bpsm, sms);
          rd::verify(report, v, in, v.name + cfg);
        }
      }
      if (large || cli.was_given("--n") || cli.was_given("--blocks-per-sm")) continue;
      // The grid does not change the answer (beyond rounding): the extremes of the range.
      if (size >= 65537)
        for (int bpsm : {1, kMaxBlocksPerSm})
          for (Finish f : kFinishes) {
            const rd::Variant v = overload_variant(in, f, block, bpsm, sms);
            rd::verify(report, v, in, v.name + at + " block=" + std::to_string(block) +
                                          " blocks_per_sm=" + std::to_string(bpsm));
          }
      // Determinism: the two-pass result, bit for bit, over repeated runs.
      if (size >= 1000000) {
        const rd::Variant v =
            overload_variant(in, Finish::kPartials, block, resident_blocks_per_sm(block), sms);
        rd::verify_repeatable(report, v, in, kRepeatRuns,
                              "two-pass bitwise identical over " + std::to_string(kRepeatRuns) + " runs" + at);
      }
    }
    return report.exit_code();
  }

  sw::require_fits(gpu, "--n", n, bytes_per_float);
  Finish best_finish = Finish::kPartials;
  int best_bpsm = 0;
  {
    const rd::Input in = rd::make_input(n, opt.seed);
    rd::bench(opt, report, rd::cub_variant(in, sms), in);

    // Throughput against blocks per SM, both finishes; each step then runs at its
    // own best point (or at --blocks-per-sm).
    sw::CommonOptions sweep = opt;
    sweep.reps = std::min(opt.reps, rd::kSweepReps);
    std::map<Finish, int> chosen;
    for (Finish f : kFinishes) {
      double best_gbps = -1;
      for (int bpsm : kSweep) {
        rd::Variant v = overload_variant(in, f, block, bpsm, sms);
        v.name += "-sweep";  // its own rows: the step line of the same variant follows
        v.role = "sweep";
        const sw::Result r = rd::bench(sweep, report, v, in, {{"blocks_per_sm", bpsm}, {"block", block}});
        const double g = sw::gbps(r.bytes, r.timing.ms_median);
        if (g > best_gbps) {
          best_gbps = g;
          chosen[f] = bpsm;
        }
      }
      if (blocks_per_sm) chosen[f] = blocks_per_sm;
    }

    double best_gbps = -1;
    for (Finish f : kFinishes) {
      const rd::Variant v = overload_variant(in, f, block, chosen[f], sms);
      const sw::Result r = rd::bench(opt, report, v, in, {{"blocks_per_sm", chosen[f]}, {"block", block}});
      const double g = sw::gbps(r.bytes, r.timing.ms_median);
      if (g > best_gbps) {
        best_gbps = g;
        best_finish = f;
        best_bpsm = chosen[f];
      }
    }

    // What "not deterministic" looks like: distinct results over repeated runs.
    for (Finish f : kFinishes) {
      const rd::Variant v = overload_variant(in, f, block, chosen[f], sms);
      std::set<uint32_t> seen;
      for (int r = 0; r < kRepeatRuns; ++r) {
        const float got = static_cast<float>(rd::run_once(v));
        uint32_t bits;
        std::memcpy(&bits, &got, sizeof bits);
        seen.insert(bits);
      }
      report.note(v.name + ": " + std::to_string(seen.size()) + " distinct result(s) in " +
                  std::to_string(kRepeatRuns) + " runs");
    }
  }

  // Latency: at 2^20 floats (4 MB, inside L2 after the first run) the launches
  // dominate. The note keeps these records apart from the 2^28 ones (the tour
  // compares each with the vendor record of the same n and note).
  {
    const rd::Input in = rd::make_input(kLatencyN, opt.seed);
    const std::string note = "n=2^20";
    const sw::Result cub = rd::bench(opt, report, rd::cub_variant(in, sms), in, {}, note);
    for (Finish f : kFinishes) {
      const rd::Variant v = overload_variant(in, f, block, best_bpsm, sms);
      const sw::Result r = rd::bench(opt, report, v, in, {{"blocks_per_sm", best_bpsm}, {"block", block}}, note);
      char line[160];
      std::snprintf(line, sizeof line, "n=2^20: %s %.1f us, cub %.1f us (%.2fx the time of cub)",
                    r.variant.c_str(), 1e3 * r.timing.ms_median, 1e3 * cub.timing.ms_median,
                    r.timing.ms_median / cub.timing.ms_median);
      report.note(line);
    }
  }

  rd::lesson(opt, report, [&](const rd::Input& in) {
    return overload_variant(in, best_finish, block, best_bpsm, sms);
  });
  return report.exit_code();
}
