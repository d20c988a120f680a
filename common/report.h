// Reporting: one aligned line per measured variant, or one JSON object per line.
//
//   sw::Report report(opt, gpu.copy_gbps, "05", "sum");
//   report.add({"cub", n, bytes, timing, ok, "vendor"});
//   report.add({"shuffle", n, bytes, timing, ok});        // role "step"
//   report.check(ok, "shuffle n=257 block=128");          // --verify-only lines
//   report.skip("two-pass-pdl", why);                     // a step this GPU cannot run
//   return report.exit_code();                            // 1 if anything failed
//
// A compute-bound row (Result::flops > 0) adds three columns after GB/s: TFLOP/s, the SM
// clock (MHz) and the board power (W) measured during its timed runs; its JSON record adds
// "flops" and "tflops". The header has those columns when the first row is compute-bound:
// a chapter's rows are all of one kind. Memory-bound rows print exactly as before.
//
// The table's last column, "parameters", says what tells a row apart: the note,
// then the extra values that are settings rather than measurements, then n when
// it differs from the problem's usual size. {note "uniform", extra {block 256,
// blocks_per_sm 16, rel_error 3e-8}, n 2^20 where 2^28 is usual} prints
// "uniform block=256 blocks/SM=16 n=2^20". See params() and is_measurement().
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli.h"
#include "timing.h"

namespace sw {

struct Result {
  std::string variant;  // short kebab-case name, e.g. "shuffle-last-warp"
  int64_t n = 0;        // problem size in elements
  double bytes = 0;     // bytes that must move: each input read once, each output written once
  Timing timing;
  bool ok = false;  // the check against the CPU reference passed
  // "step": a stage of the tutorial; "vendor": CUB or cuBLAS; "ceiling": the copy;
  // "cpu": a host baseline on all cores (what "vs CPU" compares with);
  // "lesson": a row that teaches (e.g. the one-core CPU loops); "sweep": one
  // point of a parameter sweep; "anti-example": kept to show what not to do.
  std::string role = "step";
  // Settings that tell the row apart, e.g. {"block", 256}, {"blocks_per_sm", 16},
  // {"threads", 64}, and measurements, e.g. {"rel_error", 3e-8}: the table shows
  // the settings only (see is_measurement), the JSON record all of them.
  std::map<std::string, double> extra;
  std::string note;     // short free text, e.g. the distribution
  std::string problem;  // overrides the report's problem when set
  std::string detail;   // why the check failed (printed as a note beside a failed row)
  // Compute-bound rows: the floating-point operations one call must do (GEMM: 2mnk). A row
  // with flops > 0 also reports TFLOP/s (table and JSON "tflops"), and its table line the
  // SM clock and power of its timed runs (extra sm_clock_mhz, power_w; "-" where unread).
  double flops = 0;
};

class Report {
 public:
  Report(const CommonOptions& opt, double copy_gbps, std::string chapter, std::string problem);

  // Prints one result: a table line (the header before the first) or a JSON record.
  // "vs prev" compares with the previous "step" line, "vs lib" with the last
  // "vendor" line, both as throughput ratios.
  void add(const Result& result);
  // One verification line: "PASS <what>" or "FAIL <what>: <detail>". Under --dump-outputs
  // or --check-outputs (common/bench/outputs.h) it is also a row of the exchange: with
  // --check-outputs, a row other than the dump's, or one that no dumped run backs, fails.
  void check(bool ok, const std::string& what, const std::string& detail = "");
  // A check of the harness itself, not of a step's outputs (a CPU reference against
  // another, a planted kernel of the harness that the checks must catch): with
  // --check-outputs it is computed again, and reads no dumped run.
  void harness_check(bool ok, const std::string& what, const std::string& detail = "");
  // Prints a free note line (prefixed "# ", or a JSON "note" record).
  void note(const std::string& text);
  // A step this GPU cannot run, and why in one line: "SKIP <variant>: <reason>", or a
  // JSON "skip" record {chapter, variant, reason}. Neither a check nor a failure.
  void skip(const std::string& variant, const std::string& reason);

  // The usual n of a problem (of the report's own problem in the first form).
  // Rows of another n say "n=..." in their parameters. Unset, the first row of
  // each problem sets it.
  void set_default_n(int64_t n) { default_n_[problem_] = n; }
  void set_default_n(const std::string& problem, int64_t n) { default_n_[problem] = n; }

  int failures() const { return failures_; }
  // Prints "<chapter>: N checks, M failed" (a "summary" record with --json) and
  // returns 0 or 1. With --check-outputs, what the dump holds beyond what the checks
  // read is one more failed check first ("outputs exchange").
  int exit_code() const;

  // Formats one result as its JSON record (used by add; exposed for tests).
  std::string json(const Result& result) const;
  // Formats one result as its table line (exposed for tests).
  std::string line(const Result& result) const;
  // The parameters column of one result, e.g. "uniform block=256 blocks/SM=16".
  std::string params(const Result& result) const;

 private:
  CommonOptions opt_;
  double copy_gbps_;
  std::string chapter_, problem_;
  bool header_done_ = false;
  std::map<std::string, int64_t> default_n_;   // problem -> its usual n
  double prev_step_rate_ = 0;                  // GB/s, or TFLOP/s for a compute-bound row
  std::map<std::string, double> vendor_rate_;  // by vendor_key(): problem, n and note
  std::string vendor_key(const Result& r) const;
  void row(bool ok, const std::string& what, const std::string& detail, bool of_harness);
  void print_check(bool ok, const std::string& what, const std::string& detail) const;
  int failures_ = 0, checks_ = 0;
};

// JSON string literal with escapes.
std::string json_quote(const std::string& s);
// A number as JSON: up to 12 significant digits; non-finite becomes null.
std::string json_number(double v);

// printf into a std::string: a row's note or label ("mix-0.90-v0").
template <class... Args>
std::string print_text(const char* format, Args... args) {
  const int size = std::snprintf(nullptr, 0, format, args...);
  std::string text(static_cast<size_t>(size > 0 ? size : 0), '\0');
  std::snprintf(text.data(), text.size() + 1, format, args...);
  return text;
}

// A count as a reader takes it in: 2^20 for powers of two from 1024 on, 1e8 for
// one digit followed by six or more zeros, otherwise the digits (1000003).
std::string format_count(int64_t v);

// True for extra keys that hold a measurement, not a setting: "value", "error",
// "bound", names starting graded_ (--graded-timing), and names ending in _error, _bound, _ms, _s,
// _gbps, _mhz or _w ("rel_error", "kernel_ms", "copy_gbps", "sm_clock_mhz", "power_w"). The table's parameters leave these out; every
// other key is a setting and shows ("block", "blocks_per_sm", "threads", "p", "copies").
bool is_measurement(const std::string& key);

}  // namespace sw
