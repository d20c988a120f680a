#include "report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace sw {

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
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

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

Report::Report(const CommonOptions& opt, double copy_gbps, std::string chapter, std::string problem)
    : opt_(opt), copy_gbps_(copy_gbps), chapter_(std::move(chapter)), problem_(std::move(problem)) {}

std::string Report::json(const Result& r) const {
  const double g = gbps(r.bytes, r.timing.ms_median);
  std::ostringstream s;
  s << "{\"record\":\"result\",\"chapter\":" << json_quote(chapter_)
    << ",\"problem\":" << json_quote(r.problem.empty() ? problem_ : r.problem) << ",\"variant\":" << json_quote(r.variant)
    << ",\"role\":" << json_quote(r.role) << ",\"n\":" << r.n
    << ",\"bytes\":" << json_number(r.bytes) << ",\"ms_median\":" << json_number(r.timing.ms_median)
    << ",\"ms_min\":" << json_number(r.timing.ms_min) << ",\"reps\":" << r.timing.reps
    << ",\"gbps\":" << json_number(g)
    << ",\"pct_of_copy\":" << (copy_gbps_ > 0 ? json_number(100.0 * g / copy_gbps_) : "null")
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

std::string Report::line(const Result& r) const {
  const double g = gbps(r.bytes, r.timing.ms_median);
  char pct[16] = "-", prev[16] = "-", lib[16] = "-";
  if (copy_gbps_ > 0) std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * g / copy_gbps_);
  if (r.role == "step" && prev_step_gbps_ > 0) std::snprintf(prev, sizeof prev, "%.2fx", g / prev_step_gbps_);
  if (r.role != "vendor" && vendor_gbps_ > 0) std::snprintf(lib, sizeof lib, "%.2fx", g / vendor_gbps_);
  std::string name = r.variant;
  if (!r.note.empty()) name += " (" + r.note + ")";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-36s %12lld %10.4f %10.4f %9.1f %7s %7s %7s  %s", name.c_str(),
                static_cast<long long>(r.n), r.timing.ms_median, r.timing.ms_min, g, pct, prev, lib,
                r.ok ? "ok" : "FAILED");
  return buf;
}

void Report::add(const Result& r) {
  if (!r.ok) ++failures_;
  ++checks_;
  if (opt_.json) {
    std::printf("%s\n", json(r).c_str());
  } else {
    if (!header_done_) {
      std::printf("%-36s %12s %10s %10s %9s %7s %7s %7s  %s\n", "variant", "n", "median ms",
                  "min ms", "GB/s", "%copy", "vs prev", "vs lib", "check");
      header_done_ = true;
    }
    std::printf("%s\n", line(r).c_str());
  }
  std::fflush(stdout);
  const double g = gbps(r.bytes, r.timing.ms_median);
  if (r.role == "step") prev_step_gbps_ = g;
  if (r.role == "vendor") vendor_gbps_ = g;
}

void Report::check(bool ok, const std::string& what, const std::string& detail) {
  ++checks_;
  if (!ok) ++failures_;
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

int Report::exit_code() const {
  if (!opt_.json)
    std::printf("%s: %d checks, %d failed\n", chapter_.c_str(), checks_, failures_);
  return failures_ == 0 && checks_ > 0 ? kExitOk : kExitFailed;
}

}  // namespace sw
