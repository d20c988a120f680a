// The program main of every chapter: its command line, its GPU, its report, and
// then the problem's checks (--verify-only) or its measured rows.
//
//   int main(int argc, char** argv) {
//     const sw::bench::Program<rd::Step> program{"03_reduce_shared", "one line", "03", kSteps};
//     return sw::bench::run(argc, argv, program, rd::SumProblem{kBlock});
//   }
//
// A problem (rd::SumProblem, hist::..., ...) is a struct holding its own options:
//
//   using Step = bench::Step<...>;            its step table's type
//   static constexpr const char* kName;      the results' problem column ("sum")
//   void add_options(Cli&, const Program<Step>&);   before parsing
//   std::string check_options(const Cli&, const CommonOptions&, const std::vector<Step>&)
//       (optional) after parsing, before the GPU: "" or the one line of an option that does
//       not apply to the chosen steps or mode (run() prints it and exits 2, GPU or not)
//   void verify(const Session<Step>&);      --verify-only: a PASS/FAIL line per check
//   void bench(const Session<Step>&);       the default run: the rows of the report
//
// Its bench() calls measure() (common/bench/protocol.h), itself or through one
// helper, with the step's launcher: main -> run -> bench -> [helper] -> measure ->
// launch_<step>, at most five calls to the <<<>>>.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/bench/step.h"
#include "common/cli.h"
#include "common/device.h"
#include "common/report.h"

namespace sw::bench {

template <class S>
struct Program {
  const char* name;                              // "03_reduce_shared": the program, as built
  const char* summary;                           // one line for --help
  const char* number;                            // "03": the chapter, in the results
  std::vector<S> steps;                          // the step table, in the lesson's order
  std::vector<std::string> extra_variants = {};  // --variant values beside the steps ("cub")
};

// What a problem's verify() and bench() get: the parsed run.
template <class S>
struct Session {
  const CommonOptions& opt;
  const Gpu& gpu;
  Report& report;
  const Cli& cli;
  const Program<S>& program;
  std::vector<S> steps;  // the steps --variant chose, in the table's order
  std::string variant;   // --variant as given ("all" unless given)
};

namespace detail {
template <class P, class S, class = void>
struct HasCheckOptions : std::false_type {};
template <class P, class S>
struct HasCheckOptions<P, S,
                       std::void_t<decltype(std::declval<P&>().check_options(
                           std::declval<const Cli&>(), std::declval<const CommonOptions&>(),
                           std::declval<const std::vector<S>&>()))>> : std::true_type {};
}  // namespace detail

// Parses (bad input, and Problem::check_options' errors, exit 2), starts the GPU (none: exits 77), runs the problem's
// checks or rows; the exit code is the report's (1 when any check failed).
template <class Problem>
int run(int argc, char** argv, const Program<typename Problem::Step>& program,
        Problem problem = {}) {
  Cli cli(program.name, program.summary);
  std::string variant = "all";
  const std::vector<std::string> steps = names(program.steps);
  if (steps.size() + program.extra_variants.size() > 1)
    cli.add_variant(&variant, steps, "the step(s) to run", program.extra_variants);
  else
    cli.set_steps(steps);
  problem.add_options(cli, program);
  const CommonOptions opt = cli.parse_or_exit(argc, argv);
  std::vector<typename Problem::Step> chosen_steps = chosen(program.steps, variant);
  if constexpr (detail::HasCheckOptions<Problem, typename Problem::Step>::value) {
    const std::string error = problem.check_options(cli, opt, chosen_steps);
    if (!error.empty()) {
      std::fprintf(stderr, "%s: error: %s\n", program.name, error.c_str());
      std::exit(kExitBadInput);
    }
  }
  const Gpu gpu = start_gpu(opt);
  Report report(opt, gpu.copy_gbps, program.number, Problem::kName);
  const Session<typename Problem::Step> s{
      opt, gpu, report, cli, program, std::move(chosen_steps), variant};
  if (opt.verify_only)
    problem.verify(s);
  else
    problem.bench(s);
  return report.exit_code();
}

}  // namespace sw::bench
