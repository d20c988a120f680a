// The program main of every chapter: its command line, its GPU, its report, and
// then the problem's checks (--verify-only) or its measured rows.
//
//   int main(int argc, char** argv) {
//     const sw::bench::Program<rd::Step> program{"03_reduce_shared", "one line", "03", kSteps};
//     return sw::bench::run(argc, argv, program, rd::SumProblem{kBlock});
//   }
//
// A problem (rd::SumProblem, hg::Problem, sc::ScanProblem, ...) is a struct holding its options:
//
//   using Step = bench::Step<...>;            its step table's type
//   static constexpr const char* kName;      the results' problem column ("sum")
//   void add_options(Cli&, const Program<Step>&);   before parsing
//   void validate(const Request<Step>&);    (optional) after parsing, before the GPU
//                                    starts: an option that does not apply to what was
//                                    asked is an error (Cli::reject, exit 2)
//   void verify(const Session<Step>&);      --verify-only: a PASS/FAIL line per check
//   void bench(const Session<Step>&);       the default run: the rows of the report
//   static constexpr bool kExchangesOutputs = true;   (optional) every check of verify()
//                                    runs through bench::check_once or check_twice with
//                                    Data that name their outputs() (common/bench/protocol.h),
//                                    or is a Report::harness_check: --dump-outputs,
//                                    --check-outputs and --repeat apply (without it they
//                                    exit 2)
//
// Its bench() calls measure() (common/bench/protocol.h) itself, with the step's
// launcher, so that main -> run -> bench -> measure -> launch_<step> -> <<<>>> are
// four calls, and a problem may put one function of its own between bench and
// measure (five).
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/bench/outputs.h"
#include "common/bench/step.h"
#include "common/cli.h"
#include "common/device.h"
#include "common/report.h"

namespace sw::bench {

template <class S>
struct Request;

namespace detail {
template <class P, class = void>
struct HasValidate : std::false_type {};
template <class P>
struct HasValidate<P, std::void_t<decltype(std::declval<P&>().validate(
                          std::declval<const Request<typename P::Step>&>()))>> : std::true_type {};
template <class P, class = void>
struct ExchangesOutputs : std::false_type {};
template <class P>
struct ExchangesOutputs<P, std::enable_if_t<P::kExchangesOutputs>> : std::true_type {};
}  // namespace detail

// --dump-outputs, --check-outputs and --repeat (common/bench/outputs.h): started where the
// problem's checks exchange their outputs (Problem::kExchangesOutputs: every check runs
// through check_once or check_twice), else refused with exit 2, as is any other misuse (both
// folders, no --verify-only, a folder that will not do).
template <class Problem>
void start_exchange(const Cli& cli, const CommonOptions& opt) {
  const char* asked = !opt.dump_outputs.empty()    ? "--dump-outputs"
                      : !opt.check_outputs.empty() ? "--check-outputs"
                      : opt.repeat != 1            ? "--repeat"
                                                   : nullptr;
  if (!asked) return;
  if (!detail::ExchangesOutputs<Problem>::value)
    cli.reject(std::string(asked) + ": this program's checks do not exchange their outputs");
  const std::string why = exchange().start(opt);
  if (!why.empty()) cli.reject(why);
}

template <class S>
struct Program {
  const char* name;                              // "03_reduce_shared": the program, as built
  const char* summary;                           // one line for --help
  const char* number;                            // "03": the chapter, in the results
  std::vector<S> steps;                          // the step table, in the lesson's order
  std::vector<std::string> extra_variants = {};  // --variant values beside the steps ("cub")
};

// What was asked: the parsed command line (a problem's validate() gets it).
template <class S>
struct Request {
  const CommonOptions& opt;
  const Cli& cli;
  const Program<S>& program;
  std::vector<S> steps;  // the steps --variant chose, in the table's order
  std::string variant;   // --variant as given ("all" unless given)
};

// What a problem's verify() and bench() get: the request, the GPU and the report.
template <class S>
struct Session : Request<S> {
  const Gpu& gpu;
  Report& report;
};

// Parses (bad input exits 2), starts the GPU (none: exits 77), runs the problem's
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
  cli.offer_outputs_exchange();
  problem.add_options(cli, program);
  const CommonOptions opt = cli.parse_or_exit(argc, argv);
  const Request<typename Problem::Step> asked{opt, cli, program, chosen(program.steps, variant),
                                              variant};
  if constexpr (detail::HasValidate<Problem>::value) problem.validate(asked);
  start_exchange<Problem>(cli, opt);
  const Gpu gpu = start_gpu(opt);
  Report report(opt, gpu.copy_gbps, program.number, Problem::kName);
  const Session<typename Problem::Step> s{asked, gpu, report};
  if (opt.verify_only)
    problem.verify(s);
  else
    problem.bench(s);
  return report.exit_code();
}

}  // namespace sw::bench
