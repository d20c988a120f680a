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
//                and every index is 64-bit. Three ways to combine the block sums:
//   two-pass            block sums to a buffer, then a second launch of the same
//                       kernel with one block adds them in a fixed order: the
//                       result is bitwise the same on every run (a test checks).
//   single-pass-atomic  each block atomicAdd()s its sum into the result (zeroed
//                       first): one launch, but the order of the float additions
//                       depends on which block finishes first, so the last bits
//                       can change from run to run. Not deterministic.
//   single-pass-last-block  one launch, and deterministic: each block writes its
//                       sum, and the last block to finish (a ticket counter) adds
//                       them all in a fixed order. Made for small sums. Its
//                       ticket is one acquire-release atomic; the classic two
//                       __threadfence()s are measured beside it in the small sums.
//                The small sums are launches more than bytes. Two more steps launch
//                with programmatic dependent launch (compute capability 9.0): the
//                next kernel in the stream starts while this one runs, and waits
//                on the GPU, not in a queue, for its results (pdl_wait):
//   two-pass-pdl                two-pass, both kernels launched that way
//   single-pass-last-block-pdl  single-pass-last-block, launched that way
// Why faster:    per element, a load and an add; the tree, its __syncthreads and
//                the block sums are paid once per block of ~n / grid elements.
// Bottleneck:    DRAM bandwidth: the goal is cub::DeviceReduce::Sum, measured in
//                the same run. The blocks-per-SM sweeps (four loads in flight per
//                thread, and one) show how many bytes in flight it takes. Below
//                2^20 floats the launches dominate: the small-sum rows time each
//                sum alone, back to back and in a CUDA graph, against an empty
//                kernel and CUB (problem "sum-latency").
// Steps:         two-pass, single-pass-atomic, single-pass-last-block, two-pass-pdl,
//                single-pass-last-block-pdl
// Files:         reduce_overload.cuh (the kernel, shared with 12 and 14), reduce_finishes.cuh
//                (the three finishes' launchers, the last block's kernel, the error depths),
//                reduce_pdl.cuh (the two -pdl steps' launchers), reduce_latency.cuh (the
//                small sums: back-to-back and CUDA-graph timing, the empty kernel); here
//                the step table and runs.
// Run:           build/chapters/06_reduce_thread_overload [--n 2^28] [--block 256]
//                [--blocks-per-sm N] [--variant two-pass] [--verify-only [--large]] [--json]
#include <cstdint>
#include <string>
#include <vector>

#include "common/cuda_utils.cuh"
#include "common/reduce_harness.h"
#include "reduce_finishes.cuh"
#include "reduce_latency.cuh"
#include "reduce_overload.cuh"  // the kernel of this chapter, shared with 12 and 14
#include "reduce_pdl.cuh"

namespace {

namespace rd = sw::reduce;

using ch06::depth_single_pass_atomic;
using ch06::depth_single_pass_last_block;
using ch06::depth_two_pass;
using ch06::Finish;
using ch06::launch_single_pass_atomic;
using ch06::launch_single_pass_last_block;
using ch06::launch_single_pass_last_block_pdl;
using ch06::launch_two_pass;
using ch06::launch_two_pass_pdl;
using ch06::reduce_overload;
using ch06::Ticket;

const std::vector<int> kSweep = {1, 2, 4, 8, 16, 32};  // blocks per SM measured by the default run
constexpr int kOneStepBlocksPerSm = 16;  // --variant without --blocks-per-sm: past the knee
constexpr int kRepeatRuns = 20;          // runs compared bit for bit

// --- the step table ------------------------------------------------------------------------

// The step table; the lesson runs on the step fastest at --n.
const std::vector<rd::Step> kSteps = {
    {"two-pass", launch_two_pass<>, depth_two_pass<>, "step", rd::kSameBits},
    {"single-pass-atomic", launch_single_pass_atomic, depth_single_pass_atomic},
    {"single-pass-last-block", launch_single_pass_last_block<Ticket::kAcqRel>,
     depth_single_pass_last_block, "step", rd::kSameBits},
    {"two-pass-pdl", launch_two_pass_pdl, depth_two_pass<>, "step", rd::kSameBits},
    {"single-pass-last-block-pdl", launch_single_pass_last_block_pdl, depth_single_pass_last_block,
     "step", rd::kSameBits},
};
// The steps this GPU runs: where it (or the emulated GPU) lacks programmatic dependent
// launch, each -pdl step is left out with a SKIP line that says why.
std::vector<rd::Step> runnable(sw::Report& report, const std::vector<rd::Step>& steps) {
  std::string why;
  const bool pdl = sw::has_feature(sw::Feature::kProgrammaticLaunch, &why);
  std::vector<rd::Step> out;
  for (const rd::Step& step : steps) {
    const bool needs_pdl =
        step.launch == launch_two_pass_pdl || step.launch == launch_single_pass_last_block_pdl;
    if (needs_pdl && !pdl)
      report.skip(step.name, why);
    else
      out.push_back(step);
  }
  return out;
}
// Only in the small sums: single-pass-last-block with the classic two fences.
const rd::Step kLastBlockFences = {"single-pass-last-block-fences",
                                   launch_single_pass_last_block<Ticket::kFences>,
                                   depth_single_pass_last_block, "step", rd::kSameBits};
// Only in a sweep: two-pass with one float4 load in flight per thread.
const rd::Step kTwoPassUnroll1 = {"two-pass-unroll1", launch_two_pass<1>, depth_two_pass<1>, "step",
                                  rd::kSameBits};

// Blocks of reduce_overload resident per SM at this block size: one full wave,
// the grid of --verify-only unless --blocks-per-sm says otherwise.
int full_wave(int block) {
  return sw::resident_blocks_per_sm(
      rd::kernel_for_block(block, [](auto b) { return reduce_overload<b, Finish::kPartials>; }),
      block);
}

// --- --verify-only -------------------------------------------------------------------------

// Every step at every size and block size. The default sweep adds the extremes of
// the grid, the one-load kernel, and the fixed-order steps' bits over repeated runs.
int verify_all(rd::Setup& s, int blocks_per_sm) {
  for (int64_t size : s.sizes) {
    const rd::Input in = rd::make_input(size, s.opt.seed);
    for (int b : s.blocks) {
      const rd::Config c{b, blocks_per_sm ? blocks_per_sm : full_wave(b)};
      for (const rd::Step& step : s.steps) rd::verify(s.report, step, in, c);
    }
    if (!s.full_sweep || blocks_per_sm) continue;
    const rd::Config wave{s.block, full_wave(s.block)};
    rd::verify(s.report, kTwoPassUnroll1, in, wave);
    rd::verify(s.report, kLastBlockFences, in, wave);
    // The grid does not change the answer (beyond rounding): the extremes of the range.
    if (size >= 65537)
      for (int bpsm : {1, rd::kMaxBlocksPerSm})
        for (const rd::Step& step : s.steps) rd::verify(s.report, step, in, {s.block, bpsm});
    if (size >= 1000000)
      for (const rd::Step& step : s.steps)
        if (step.traits & rd::kSameBits)
          rd::verify_repeatable(s.report, step, in, wave, kRepeatRuns);
  }
  return s.report.exit_code();
}

// --- the default run -----------------------------------------------------------------------

// GB/s against blocks per SM (rows <step>-sweep, role "sweep"); returns the best point.
int sweep_blocks_per_sm(rd::Setup& s, const rd::Step& step, const rd::Input& in, int unroll) {
  int best = kSweep.front();
  double best_gbps = -1;
  for (int bpsm : kSweep) {
    sw::Result r = rd::measure(rd::sweep_options(s.opt), step, in, {s.block, bpsm});
    r.variant = std::string(step.name) + "-sweep";  // its own rows: the step's row follows
    r.role = "sweep";
    r.extra["unroll"] = unroll;
    s.report.add(r);
    const double g = sw::gbps(r.bytes, r.timing.ms_median);
    if (g > best_gbps) {
      best_gbps = g;
      best = bpsm;
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  rd::Chapter ch{
      "06_reduce_thread_overload",
      "Sum of floats: grid-stride float4 loads, shuffle finish, two-pass, atomic or last block.",
      "06", kSteps};
  ch.large = true;  // --verify-only --large: past 2^31 and 2^32 elements
  ch.variant =
      true;  // --variant <step>: that step alone, at --blocks-per-sm (default kOneStepBlocksPerSm)
  ch.block_help = "threads per block (a template parameter)";
  rd::Options o;
  sw::Cli cli = rd::make_cli(ch, &o);
  int blocks_per_sm =
      0;  // 0: one full wave (--verify-only) or each step's best in the sweep (default run)
  cli.add_int("--blocks-per-sm", &blocks_per_sm, 1, rd::kMaxBlocksPerSm,
              "grid = this x SMs (default: the sweep's best; one full wave with --verify-only)");
  rd::Setup s = rd::start(cli, o, ch, argc, argv);
  s.steps = runnable(s.report, s.steps);
  if (s.opt.verify_only) return verify_all(s, blocks_per_sm);
  if (o.variant != "all") {  // one step, no sweeps: what the lab checker times
    const rd::Input in = rd::make_input(s.n, s.opt.seed);
    rd::bench_cub(s.opt, s.report, in);
    for (const rd::Step& step : s.steps)
      rd::bench(s.opt, s.report, step, in,
                {s.block, blocks_per_sm ? blocks_per_sm : kOneStepBlocksPerSm});
    return s.report.exit_code();
  }

  const rd::Step* best = &s.steps.front();
  int best_bpsm = kSweep.front();
  {
    const rd::Input in = rd::make_input(s.n, s.opt.seed);
    rd::bench_cub(s.opt, s.report, in);
    // Throughput against blocks per SM, every step; each step then runs at its own
    // best point (or at --blocks-per-sm). Then the same kernel with one load in
    // flight per thread: how many blocks per SM that takes.
    std::vector<int> chosen;
    for (const rd::Step& step : s.steps)
      chosen.push_back(sweep_blocks_per_sm(s, step, in, ch06::kUnroll));
    sweep_blocks_per_sm(s, kTwoPassUnroll1, in, 1);

    double best_gbps = -1;
    for (size_t k = 0; k < s.steps.size(); ++k) {
      const rd::Config c{s.block, blocks_per_sm ? blocks_per_sm : chosen[k]};
      sw::Result r = rd::measure(s.opt, s.steps[k], in, c);
      // What "not deterministic" looks like: distinct results over repeated runs.
      const int distinct = rd::count_distinct(s.steps[k], in, c, kRepeatRuns);
      r.extra["distinct_results"] = distinct;
      r.extra["census_runs"] = kRepeatRuns;
      s.report.add(r);
      s.report.note(r.variant + ": " + std::to_string(distinct) + " distinct result(s) in " +
                    std::to_string(kRepeatRuns) + " runs");
      const double g = sw::gbps(r.bytes, r.timing.ms_median);
      if (g > best_gbps) {
        best_gbps = g;
        best = &s.steps[k];
        best_bpsm = c.blocks_per_sm;
      }
    }
  }
  // The small sums (reduce_latency.cuh), with the fenced last block beside the steps.
  std::vector<rd::Step> small = s.steps;
  small.push_back(kLastBlockFences);
  ch06::small_sums(s, small, best_bpsm);
  rd::lesson(s.opt, s.report, *best, {s.block, best_bpsm});
  return s.report.exit_code();
}
