// The labs' stand-in: a CPU program with a chapter's command line, output and exit
// codes, and one lab task (standin-sum). The repository's tests export, check and
// grade it where there is no GPU, so the lab tools are proven on every commit.
// It exchanges its outputs as the GPU chapters do (common/bench/outputs.h): the grader runs
// it with --dump-outputs, then the reference's stand-in with --check-outputs, which
// computes nothing of the task and judges the dumped sums.
//
// Steps:         sum
// Run:           build/chapters/labs/standin [--verify-only] [--n 1000] [--seed 7]
//                [--dump-outputs DIR | --check-outputs DIR] [--repeat N]
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/bench/outputs.h"
#include "common/cli.h"
#include "common/data.h"
#include "common/report.h"

namespace {

constexpr int64_t kPoison = INT64_MIN;  // the sum before the dump's bytes replace it

// The task: what a chapter's kernel is to the GPU labs.
int64_t sum_range(const int32_t* x, int64_t n) {
  // lab standin-sum: begin
  int64_t s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
  // lab standin-sum: end
}

// Small integers from the seed, so that a wrong sum is never right by chance.
std::vector<int32_t> make_input(int64_t n, uint64_t seed) {
  std::vector<int32_t> x(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<int32_t>(sw::random_bits(seed, i) % 2001) - 1000;
  return x;
}

// The reference: another algorithm (pairs from both ends), in 64 bits.
int64_t reference(const std::vector<int32_t>& x) {
  int64_t s = 0;
  for (size_t i = 0, j = x.size(); i < j; ++i) {
    s += x[i];
    if (--j > i) s += x[j];
  }
  return s;
}

uint64_t digest(const std::vector<int32_t>& x) {
  uint64_t h = 0;
  for (size_t i = 0; i < x.size(); ++i) h += sw::mix64(sw::mix64(i) ^ static_cast<uint32_t>(x[i]));
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  sw::Cli cli("standin", "The labs' CPU stand-in: the sum of n integers.");
  int64_t n = int64_t{1} << 20;
  cli.add_int("--n", &n, 1, int64_t{1} << 28, "integers to sum");
  cli.set_steps({"sum"});
  cli.offer_outputs_exchange();
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  sw::bench::Exchange& exchange = sw::bench::exchange();
  const std::string refused = exchange.start(opt);
  if (!refused.empty()) cli.reject(refused);
  const bool judge_only = exchange.mode() == sw::bench::Exchange::Mode::kCheck;
  sw::Report report(opt, 0.0, "standin", "sum");
  const std::vector<int64_t> sizes = opt.verify_only && !cli.was_given("--n")
                                         ? std::vector<int64_t>{1, 2, 31, 32, 33, 1000, 65537}
                                         : std::vector<int64_t>{n};
  for (int64_t size : sizes) {
    const std::vector<int32_t> x = make_input(size, opt.seed);
    const uint64_t before = digest(x);
    report.note("data digest " + std::to_string(before) + " n=" + std::to_string(size));
    const int64_t want = reference(x);
    if (opt.verify_only) {  // with --check-outputs the sum is the dump's, not computed
      std::vector<sw::bench::RepeatOutcome> repeats;  // --repeat: each a run of the exchange
      for (int k = 0; k < exchange.repeats(); ++k) {
        int64_t got = judge_only ? kPoison : sum_range(x.data(), size);
        const std::string why = exchange.run({{&got, sizeof got}});
        const bool ok = why.empty() && got == want && digest(x) == before;
        repeats.push_back(
            {ok, !why.empty() ? why
                 : ok         ? ""
                              : "got " + std::to_string(got) + ", want " + std::to_string(want)});
      }
      const bool ok = std::all_of(repeats.begin(), repeats.end(),
                                  [](const sw::bench::RepeatOutcome& r) { return r.ok; });
      report.check(ok, "sum n=" + std::to_string(size),
                   repeats.size() == 1 ? repeats[0].detail : sw::bench::repeat_detail(repeats));
      continue;
    }
    std::vector<double> ms;
    int64_t got = 0;
    for (int r = 0; r < opt.warmup + opt.reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      got = sum_range(x.data(), size);
      const auto t1 = std::chrono::steady_clock::now();
      if (r >= opt.warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    sw::Result r{"sum", size, static_cast<double>(size) * sizeof(int32_t), sw::summarize(ms),
                 got == want};
    report.add(r);
  }
  return report.exit_code();
}
