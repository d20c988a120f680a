// Reporting: one aligned line per measured variant, or one JSON object per line.
//
//   sw::Report report(opt, gpu.copy_gbps, "05", "sum");
//   report.add({"cub", n, bytes, timing, ok, "vendor"});
//   report.add({"shuffle", n, bytes, timing, ok});        // role "step"
//   report.check(ok, "shuffle n=257 block=128");          // --verify-only lines
//   return report.exit_code();                            // 1 if anything failed
#pragma once

#include <cstdint>
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
  bool ok = false;      // the check against the CPU reference passed
  // "step": a stage of the tutorial; "vendor": CUB or cuBLAS; "ceiling": the copy;
  // "cpu": a host baseline; "sweep": one point of a parameter sweep;
  // "anti-example": kept to show what not to do.
  std::string role = "step";
  std::map<std::string, double> extra;  // e.g. {"blocks_per_sm", 16}, {"rel_error", 3e-8}
  std::string note;                     // short free text, e.g. the distribution
  std::string problem;                  // overrides the report's problem when set
};

class Report {
 public:
  Report(const CommonOptions& opt, double copy_gbps, std::string chapter, std::string problem);

  // Prints one result: a table line (the header before the first) or a JSON record.
  // "vs prev" compares with the previous "step" line, "vs lib" with the last
  // "vendor" line, both as throughput ratios.
  void add(const Result& result);
  // One verification line: "PASS <what>" or "FAIL <what>: <detail>".
  void check(bool ok, const std::string& what, const std::string& detail = "");
  // Prints a free note line (prefixed "# ", or a JSON "note" record).
  void note(const std::string& text);

  int failures() const { return failures_; }
  int checks() const { return checks_; }
  // Prints "<chapter>: N checks, M failed" after a sweep and returns 0 or 1.
  int exit_code() const;

  // Formats one result as its JSON record (used by add; exposed for tests).
  std::string json(const Result& result) const;
  // Formats one result as its table line (exposed for tests).
  std::string line(const Result& result) const;

 private:
  CommonOptions opt_;
  double copy_gbps_;
  std::string chapter_, problem_;
  bool header_done_ = false;
  double prev_step_gbps_ = 0, vendor_gbps_ = 0;
  int failures_ = 0, checks_ = 0;
};

// JSON string literal with escapes.
std::string json_quote(const std::string& s);
// A number as JSON: up to 6 significant digits; non-finite becomes null.
std::string json_number(double v);

}  // namespace sw
