// Chapter 06's problem: the sum of floats (rd::SumProblem) with the host code that is
// this chapter's lesson: --verify-only adds the grid's extremes, the one-load kernel,
// the fenced last block and the fixed-order steps' bits over repeated runs; the
// default run sweeps blocks per SM, takes a census of each step's distinct results,
// times the small sums (below 2^20 floats a sum costs its launches more than its
// bytes: alone, ten back to back, and ten in a CUDA graph, beside an empty kernel)
// and runs the lesson on the fastest step; --variant S times CUB and S alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common/bench/protocol.h"
#include "common/check.h"
#include "common/problems/reduce.h"
#include "launch_latency.cuh"
#include "reduce_overload.cuh"

namespace ch06 {

namespace rd = sw::reduce;

const std::vector<int> kSweep = {1, 2, 4, 8, 16, 32};  // blocks per SM measured by the default run
constexpr int kOneStepBlocksPerSm = 16;  // --variant without --blocks-per-sm: past the knee
constexpr int kRepeatRuns = 20;          // runs compared bit for bit

// The grid of --verify-only: one full wave as the SM's thread and block limits allow,
// a number of the GPU alone. The occupancy of the kernel as compiled (its registers)
// would give another build of this chapter, a student's, other checks than the
// reference's; the sum does not depend on the grid.
inline int full_wave(int block) {
  const int by_threads = sw::device_attribute<cudaDevAttrMaxThreadsPerMultiProcessor>() / block;
  return std::clamp(by_threads, 1, sw::device_attribute<cudaDevAttrMaxBlocksPerMultiprocessor>());
}

// The steps this GPU runs: where it (or the emulated GPU) lacks programmatic
// dependent launch, each rd::kNeedsPdl step is left out with a SKIP line that says why.
inline std::vector<rd::Step> runnable(sw::Report& report, const std::vector<rd::Step>& steps) {
  std::string why;
  const bool pdl = sw::has_feature(sw::Feature::kProgrammaticLaunch, &why);
  std::vector<rd::Step> out;
  for (const rd::Step& step : steps)
    if ((step.traits & rd::kNeedsPdl) && !pdl)
      report.skip(step.name, why);
    else
      out.push_back(step);
  return out;
}

using Session = sw::bench::Session<rd::Step>;

struct OverloadProblem : rd::SumProblem {
  rd::Step two_pass_unroll1;   // only in a sweep: one float4 load in flight per thread
  rd::Step last_block_fences;  // only in the small sums: the classic two fences
  int blocks_per_sm = 0;       // 0: one full wave (--verify-only) or each step's best (default run)

  void add_options(sw::Cli& cli, const sw::bench::Program<rd::Step>& program) {
    rd::SumProblem::add_options(cli, program);
    cli.add_int("--blocks-per-sm", &blocks_per_sm, 1, rd::kMaxBlocksPerSm,
                "grid = this x SMs (default: the sweep's best; one full wave with --verify-only)");
  }

  void verify(const Session& session) const {
    if (plant != "none") return rd::SumProblem::verify(session);
    const std::vector<rd::Step> steps = runnable(session.report, session.steps);
    sw::Report& report = session.report;
    const int block = chosen_block();
    for (int64_t size : sizes(session)) {
      const rd::Input in = rd::make_input(size, session.opt.seed);
      for (int b : blocks(session))
        for (const rd::Step& step : steps)
          rd::verify(report, step, in, {b, blocks_per_sm ? blocks_per_sm : full_wave(b)});
      if (!full_sweep(session) || blocks_per_sm) continue;
      const rd::Config wave{block, full_wave(block)};
      rd::verify(report, two_pass_unroll1, in, wave);
      rd::verify(report, last_block_fences, in, wave);
      // The grid does not change the answer (beyond rounding): the extremes of the range.
      if (size >= 65537)
        for (int bpsm : {1, rd::kMaxBlocksPerSm})
          for (const rd::Step& step : steps) rd::verify(report, step, in, {block, bpsm});
      if (size >= 1000000)
        for (const rd::Step& step : steps)
          if (step.traits & rd::kSameBits)
            rd::verify_repeatable(report, step, in, wave, kRepeatRuns);
    }
  }

  // One step's row at c, measured.
  static sw::Result row(const sw::CommonOptions& opt, const rd::Step& step, const rd::Input& in,
                        const rd::Config& c) {
    return rd::with_config(sw::bench::measure(opt, rd::step_row(step, in.n),
                                              rd::step_data(step, in, c), step.launch, in.sum(c)),
                           c);
  }

  // GB/s against blocks per SM (rows <step>-sweep, role "sweep"); returns the best point.
  int sweep_blocks_per_sm(const Session& s, const rd::Step& step, const rd::Input& in,
                          int unroll) const {
    int best = kSweep.front();
    double best_gbps = -1;
    for (int bpsm : kSweep) {
      const rd::Config c{chosen_block(), bpsm};
      sw::Result r =
          rd::with_config(sw::bench::measure(rd::sweep_options(s.opt), rd::step_row(step, in.n),
                                             rd::step_data(step, in, c), step.launch, in.sum(c)),
                          c);
      r.variant = std::string(step.name) + "-sweep";  // its own rows: the step's row follows
      r.role = "sweep";
      r.extra["unroll"] = unroll;
      s.report.add(r);
      const double g = sw::gbps(r.bytes, r.timing.ms_median);
      if (g > best_gbps) best_gbps = g, best = bpsm;
    }
    return best;
  }

  // The small sums. At 2^20 floats (4 MB, inside L2 after the first run) the launches
  // dominate: the standard rows of CUB and `steps` (problem "sum", note "n=2^20", each
  // call alone). Then, problem "sum-latency": an empty kernel's launch (role "lesson"),
  // and CUB and every step from 2^10 to 2^26 floats (role "sweep"), each timed back to
  // back and in a CUDA graph of ten sums; the note says the mode.
  void small_sums(const Session& s, const std::vector<rd::Step>& steps, int bpsm) const {
    std::vector<Mode> modes = {Mode::kAlone, Mode::kBackToBack, Mode::kGraph};
    if (!kGraphsWork) {
      modes.pop_back();
      s.report.note(
          "no graph-of-10 rows: in a debug build CHECK_LAUNCH synchronizes, which a capture "
          "forbids");
    }
    sw::CommonOptions plain = s.opt;  // the empty kernel has nothing to check or regrade
    plain.graded_timing = false;
    std::map<Mode, sw::Result> empty;
    for (Mode mode : modes) {
      const int calls = mode == Mode::kBackToBack ? kCallsPerRun : 1;
      const sw::bench::Row row{"empty-kernel", 0, 0.0, calls, false, "lesson"};
      sw::Result r =
          mode == Mode::kGraph
              ? per_sum(sw::bench::measure(plain, row, sw::bench::Unchecked{}, launch_graph,
                                           Graph(launch_empty, rd::Sum{})))
              : sw::bench::measure(plain, row, sw::bench::Unchecked{}, launch_empty, rd::Sum{});
      r.problem = kLatencyProblem;
      r.note = mode_name(mode);
      s.report.add(r);
      empty[mode] = r;
    }
    const rd::Config c{chosen_block(), bpsm};
    for (int64_t n = kSmallestN; n <= kLargestN; n *= 4) {
      const rd::Input in = rd::make_input(n, s.opt.seed);
      const rd::Sum sum = in.sum(c);
      for (Mode mode : modes) {
        if (mode == Mode::kAlone && n != kLatencyN) continue;
        const int calls = mode == Mode::kBackToBack ? kCallsPerRun : 1;
        std::vector<sw::Result> rows;
        if (mode == Mode::kGraph) {
          const Graph cub(rd::launch_cub, sum);
          rows.push_back(per_sum(
              sw::bench::measure(s.opt, rd::cub_row(n), rd::cub_data(in), launch_graph, cub)));
          for (const rd::Step& step : steps) {
            const Graph graph(step.launch, sum);
            rows.push_back(per_sum(
                rd::with_config(sw::bench::measure(s.opt, rd::step_row(step, n),
                                                   rd::step_data(step, in, c), launch_graph, graph),
                                c)));
          }
        } else {
          rows.push_back(sw::bench::measure(s.opt, rd::cub_row(n, calls), rd::cub_data(in),
                                            rd::launch_cub, sum));
          for (const rd::Step& step : steps)
            rows.push_back(
                rd::with_config(sw::bench::measure(s.opt, rd::step_row(step, n, calls),
                                                   rd::step_data(step, in, c), step.launch, sum),
                                c));
        }
        for (sw::Result& r : rows) {
          if (mode == Mode::kAlone) {
            r.note = "n=2^20";  // roles vendor and step, as at 2^28
          } else {
            r.role = "sweep";
            r.problem = kLatencyProblem;
            r.note = mode_name(mode);
          }
          s.report.add(r);
        }
        rows.push_back(empty[mode]);
        if (n == kLatencyN)
          small_sum_note(s.report, std::string("n=2^20 ") + mode_name(mode), rows);
      }
    }
  }

  void bench(const Session& s) const {
    check_fits(s);
    const std::vector<rd::Step> steps = runnable(s.report, s.steps);
    const int block = chosen_block();
    if (s.variant != "all") {  // one step, no sweeps: what the lab checker times
      const rd::Input in = rd::make_input(n, s.opt.seed);
      s.report.add(
          sw::bench::measure(s.opt, rd::cub_row(n), rd::cub_data(in), rd::launch_cub, in.sum({})));
      for (const rd::Step& step : steps)
        s.report.add(
            row(s.opt, step, in, {block, blocks_per_sm ? blocks_per_sm : kOneStepBlocksPerSm}));
      return;
    }
    const rd::Step* best = &steps.front();
    int best_bpsm = kSweep.front();
    {
      const rd::Input in = rd::make_input(n, s.opt.seed);
      s.report.add(
          sw::bench::measure(s.opt, rd::cub_row(n), rd::cub_data(in), rd::launch_cub, in.sum({})));
      // Throughput against blocks per SM, every step; each step then runs at its own
      // best point (or at --blocks-per-sm). Then the same kernel with one load in
      // flight per thread: how many blocks per SM that takes.
      std::vector<int> chosen;
      for (const rd::Step& step : steps)
        chosen.push_back(sweep_blocks_per_sm(s, step, in, kUnroll));
      sweep_blocks_per_sm(s, two_pass_unroll1, in, 1);

      double best_gbps = -1;
      for (size_t k = 0; k < steps.size(); ++k) {
        const rd::Config c{block, blocks_per_sm ? blocks_per_sm : chosen[k]};
        sw::Result r = row(s.opt, steps[k], in, c);
        // What "not deterministic" looks like: distinct results over repeated runs.
        const int distinct = rd::count_distinct(steps[k], in, c, kRepeatRuns);
        r.extra["distinct_results"] = distinct;
        r.extra["census_runs"] = kRepeatRuns;
        s.report.add(r);
        s.report.note(r.variant + ": " + std::to_string(distinct) + " distinct result(s) in " +
                      std::to_string(kRepeatRuns) + " runs");
        const double g = sw::gbps(r.bytes, r.timing.ms_median);
        if (g > best_gbps) best_gbps = g, best = &steps[k], best_bpsm = c.blocks_per_sm;
      }
    }
    // The small sums, with the fenced last block beside the steps.
    std::vector<rd::Step> small = steps;
    small.push_back(last_block_fences);
    small_sums(s, small, best_bpsm);
    rd::lesson(s.opt, s.report, *best, {block, best_bpsm});
  }
};

}  // namespace ch06
