#include "report.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "common/bench/outputs.h"

namespace sw {
namespace {

// Column widths of the table; the parameters come last, so a long one never
// pushes the other columns out of line.
constexpr int kVariantWidth = 34;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Settings first in this order, then any other key alphabetically.
constexpr const char* kParamOrder[] = {
    "threads", "block", "blocks_per_sm", "blocks", "unroll", "vec", "copies", "p", "launches"};

// How a key reads in the table.
std::string param_label(const std::string& key) {
  if (key == "blocks_per_sm") return "blocks/SM";
  return key;
}

// A whole number as plain digits (a block of 1024 reads better as 1024 than as
// 2^10), anything else in the given printf format.
std::string number_text(double v, const char* fraction_format) {
  char buf[32];
  const bool whole = v == std::floor(v) && std::fabs(v) < 1e15;
  std::snprintf(buf, sizeof buf, whole ? "%.0f" : fraction_format, v);
  return buf;
}

std::string param_value(double v) { return number_text(v, "%g"); }

// What "vs prev" and "vs lib" compare: TFLOP/s for a compute-bound row, else GB/s.
double rate(const Result& r) {
  return r.flops > 0 ? tflops(r.flops, r.timing.ms_median) : gbps(r.bytes, r.timing.ms_median);
}

// An extra measurement as a table cell: "%.0f", or "-" where the row has none.
std::string measured_cell(const Result& r, const char* key) {
  const auto it = r.extra.find(key);
  if (it == r.extra.end() || !std::isfinite(it->second)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", it->second);
  return buf;
}

// The SM clock beside a compute-bound row: the median over its power window (the clock the
// board's power limit leaves a long run, as the W beside it), else the median of the timed
// runs' readings (read as each run is launched: they do not show the power limit).
std::string clock_cell(const Result& r) {
  return measured_cell(r, r.extra.count("power_clock_mhz") ? "power_clock_mhz" : "sm_clock_mhz");
}

}  // namespace

std::string format_count(int64_t v) {
  if (v >= 1024 && (v & (v - 1)) == 0) {
    int k = 0;
    while ((int64_t{1} << k) < v) ++k;
    return "2^" + std::to_string(k);
  }
  if (v >= 1000000) {
    int zeros = 0;
    int64_t m = v;
    while (m % 10 == 0) m /= 10, ++zeros;
    if (m < 10 && zeros >= 6) return std::to_string(m) + "e" + std::to_string(zeros);
  }
  return std::to_string(v);
}

bool is_measurement(const std::string& key) {
  if (key == "value" || key == "error" || key == "bound" || key.rfind("graded_", 0) == 0)
    return true;
  for (const char* tail : {"_error", "_bound", "_ms", "_s", "_gbps", "_mhz", "_w"})
    if (ends_with(key, tail)) return true;
  return false;
}

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) { return std::isfinite(v) ? number_text(v, "%.12g") : "null"; }

Report::Report(const CommonOptions& opt, double copy_gbps, std::string chapter, std::string problem)
    : opt_(opt),
      copy_gbps_(copy_gbps),
      chapter_(std::move(chapter)),
      problem_(std::move(problem)) {}

std::string Report::json(const Result& r) const {
  const double g = gbps(r.bytes, r.timing.ms_median);
  std::ostringstream s;
  s << "{\"record\":\"result\",\"chapter\":" << json_quote(chapter_)
    << ",\"problem\":" << json_quote(r.problem.empty() ? problem_ : r.problem)
    << ",\"variant\":" << json_quote(r.variant) << ",\"role\":" << json_quote(r.role)
    << ",\"n\":" << r.n << ",\"bytes\":" << json_number(r.bytes)
    << ",\"ms_median\":" << json_number(r.timing.ms_median)
    << ",\"ms_min\":" << json_number(r.timing.ms_min) << ",\"reps\":" << r.timing.reps
    << ",\"gbps\":" << json_number(g);
  if (r.flops > 0)
    s << ",\"flops\":" << json_number(r.flops)
      << ",\"tflops\":" << json_number(tflops(r.flops, r.timing.ms_median));
  s << ",\"pct_of_copy\":" << (copy_gbps_ > 0 ? json_number(100.0 * g / copy_gbps_) : "null")
    << ",\"ok\":" << (r.ok ? "true" : "false");
  if (!r.note.empty()) s << ",\"note\":" << json_quote(r.note);
  if (!r.extra.empty()) {
    s << ",\"extra\":{";
    bool first = true;
    for (const auto& [k, v] : r.extra) {
      s << (first ? "" : ",") << json_quote(k) << ":" << json_number(v);
      first = false;
    }
    s << "}";
  }
  s << "}";
  return s.str();
}

std::string Report::params(const Result& r) const {
  std::vector<std::string> parts;
  if (!r.note.empty()) parts.push_back(r.note);
  auto in_note = [&](const std::string& text) { return r.note.find(text) != std::string::npos; };
  auto add = [&](const std::string& key, double v) {
    if (is_measurement(key)) return;
    const std::string text = param_label(key) + "=" + param_value(v);
    if (!in_note(text)) parts.push_back(text);
  };
  // rows and cols read as one shape, 16384x16384, unless the note already says it.
  const auto rows = r.extra.find("rows"), cols = r.extra.find("cols");
  const bool shape = rows != r.extra.end() && cols != r.extra.end();
  if (shape) {
    const std::string text = param_value(rows->second) + "x" + param_value(cols->second);
    if (!in_note(text)) parts.push_back(text);
  }
  for (const char* key : kParamOrder) {
    const auto it = r.extra.find(key);
    if (it != r.extra.end()) add(key, it->second);
  }
  for (const auto& [key, v] : r.extra) {
    bool ordered = shape && (key == "rows" || key == "cols");
    for (const char* k : kParamOrder) ordered = ordered || key == k;
    if (!ordered) add(key, v);
  }
  const auto usual = default_n_.find(r.problem.empty() ? problem_ : r.problem);
  if (usual != default_n_.end() && usual->second != r.n && !in_note("n="))
    parts.push_back("n=" + format_count(r.n));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

std::string Report::line(const Result& r) const {
  const double g = gbps(r.bytes, r.timing.ms_median);
  char pct[16] = "-", prev[16] = "-", lib[16] = "-", compute[64] = "";
  if (copy_gbps_ > 0) std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * g / copy_gbps_);
  if (r.role == "step" && prev_step_rate_ > 0)
    std::snprintf(prev, sizeof prev, "%.2fx", rate(r) / prev_step_rate_);
  const auto vendor =
      vendor_rate_.find(vendor_key(r));  // the library on the same problem, n and input
  if (r.role != "vendor" && vendor != vendor_rate_.end() && vendor->second > 0)
    std::snprintf(lib, sizeof lib, "%.2fx", rate(r) / vendor->second);
  if (r.flops > 0)  // " TFLOP/s MHz W", after GB/s
    std::snprintf(compute, sizeof compute, " %8.2f %6s %5s", tflops(r.flops, r.timing.ms_median),
                  clock_cell(r).c_str(), measured_cell(r, "power_w").c_str());
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-*s %-12s %10s %10.4f %10.4f %9.1f%s %7s %7s %7s  %-6s  %s",
                kVariantWidth, r.variant.c_str(), r.role.c_str(), format_count(r.n).c_str(),
                r.timing.ms_median, r.timing.ms_min, g, compute, pct, prev, lib,
                r.ok ? "ok" : "FAILED", params(r).c_str());
  std::string text = buf;
  text.erase(text.find_last_not_of(' ') + 1);  // no trailing blanks when there are no parameters
  return text;
}

void Report::add(const Result& r) {
  default_n_.emplace(r.problem.empty() ? problem_ : r.problem,
                     r.n);  // the first row sets the usual n
  if (!r.ok) ++failures_;
  ++checks_;
  if (!r.ok && !r.detail.empty()) note(r.variant + ": " + r.detail);
  if (opt_.json) {
    std::printf("%s\n", json(r).c_str());
  } else {
    if (!header_done_) {
      char compute[64] = "";  // the compute-bound columns, when the first row is compute-bound
      if (r.flops > 0)
        std::snprintf(compute, sizeof compute, " %8s %6s %5s", "TFLOP/s", "MHz", "W");
      std::printf("%-*s %-12s %10s %10s %10s %9s%s %7s %7s %7s  %-6s  %s\n", kVariantWidth,
                  "variant", "role", "n", "median ms", "min ms", "GB/s", compute, "%copy",
                  "vs prev", "vs lib", "check", "parameters");
      header_done_ = true;
    }
    std::printf("%s\n", line(r).c_str());
  }
  std::fflush(stdout);
  if (r.role == "step") prev_step_rate_ = rate(r);
  if (r.role == "vendor") vendor_rate_[vendor_key(r)] = rate(r);
}

std::string Report::vendor_key(const Result& r) const {
  return (r.problem.empty() ? problem_ : r.problem) + "|" + std::to_string(r.n) + "|" + r.note;
}

void Report::check(bool ok, const std::string& what, const std::string& detail) {
  row(ok, what, detail, false);
}

void Report::harness_check(bool ok, const std::string& what, const std::string& detail) {
  row(ok, what, detail, true);
}

// A check row: the exchange's objection (common/bench/outputs.h), if any, fails it first.
void Report::row(bool ok, const std::string& what, const std::string& detail, bool of_harness) {
  const std::string why = bench::exchange().row(problem_, what, of_harness);
  if (!why.empty()) ok = false;
  ++checks_;
  if (!ok) ++failures_;
  print_check(ok, what, why.empty() || detail.empty() ? why + detail : why + "; " + detail);
}

void Report::print_check(bool ok, const std::string& what, const std::string& detail) const {
  if (opt_.json) {
    std::printf("{\"record\":\"check\",\"chapter\":%s,\"what\":%s,\"ok\":%s,\"detail\":%s}\n",
                json_quote(chapter_).c_str(), json_quote(what).c_str(), ok ? "true" : "false",
                json_quote(detail).c_str());
  } else if (ok) {
    std::printf("PASS %s%s%s\n", what.c_str(), detail.empty() ? "" : ": ", detail.c_str());
  } else {
    std::printf("FAIL %s%s%s\n", what.c_str(), detail.empty() ? "" : ": ", detail.c_str());
  }
  std::fflush(stdout);
}

void Report::note(const std::string& text) {
  if (opt_.json)
    std::printf("{\"record\":\"note\",\"chapter\":%s,\"text\":%s}\n", json_quote(chapter_).c_str(),
                json_quote(text).c_str());
  else
    std::printf("# %s\n", text.c_str());
  std::fflush(stdout);
}

void Report::skip(const std::string& variant, const std::string& reason) {
  if (opt_.json)
    std::printf("{\"record\":\"skip\",\"chapter\":%s,\"variant\":%s,\"reason\":%s}\n",
                json_quote(chapter_).c_str(), json_quote(variant).c_str(),
                json_quote(reason).c_str());
  else
    std::printf("SKIP %s: %s\n", variant.c_str(), reason.c_str());
  std::fflush(stdout);
}

int Report::exit_code() const {
  int checks = checks_, failures = failures_;
  const std::string left = bench::exchange().finish();
  if (!left.empty()) {
    print_check(false, "outputs exchange", left);
    ++checks, ++failures;
  }
  if (opt_.json)
    std::printf("{\"record\":\"summary\",\"chapter\":%s,\"checks\":%d,\"failed\":%d}\n",
                json_quote(chapter_).c_str(), checks, failures);
  else
    std::printf("%s: %d checks, %d failed\n", chapter_.c_str(), checks, failures);
  std::fflush(stdout);
  return failures == 0 && checks > 0 ? kExitOk : kExitFailed;
}

}  // namespace sw
