#include "cli.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace sw {
namespace {

bool parse_plain_integer(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t k = i; k < s.size(); ++k)
    if (s[k] < '0' || s[k] > '9') return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return false;
  *out = v;
  return true;
}

// base^exp or base << shift, exactly, or false on overflow.
bool power(int64_t base, int64_t exp, int64_t* out) {
  if (exp < 0) return false;
  int64_t v = 1;
  for (int64_t k = 0; k < exp; ++k) {
    if (base != 0 && std::llabs(v) > std::numeric_limits<int64_t>::max() / std::llabs(base))
      return false;
    v *= base;
  }
  *out = v;
  return true;
}

std::string range_text(int64_t lo, int64_t hi) {
  return std::to_string(lo) + " to " + std::to_string(hi);
}

std::string range_text(double lo, double hi) {
  std::ostringstream s;
  s << lo << " to " << hi;
  return s.str();
}

}  // namespace

bool parse_integer(const std::string& text, int64_t* out) {
  if (parse_plain_integer(text, out)) return true;
  size_t pos;
  int64_t a, b;
  if ((pos = text.find('^')) != std::string::npos) {  // 2^28
    return parse_plain_integer(text.substr(0, pos), &a) &&
           parse_plain_integer(text.substr(pos + 1), &b) && power(a, b, out);
  }
  if ((pos = text.find("<<")) != std::string::npos) {  // 1<<20
    int64_t p;
    if (!parse_plain_integer(text.substr(0, pos), &a) ||
        !parse_plain_integer(text.substr(pos + 2), &b) || !power(2, b, &p))
      return false;
    if (a != 0 && std::llabs(a) > std::numeric_limits<int64_t>::max() / p) return false;
    *out = a * p;
    return true;
  }
  if ((pos = text.find_first_of("eE")) != std::string::npos) {  // 1e6, 3e9
    if (!parse_plain_integer(text.substr(0, pos), &a) ||
        !parse_plain_integer(text.substr(pos + 1), &b) || !power(10, b, &b))
      return false;
    if (a != 0 && std::llabs(a) > std::numeric_limits<int64_t>::max() / b) return false;
    *out = a * b;
    return true;
  }
  return false;
}

bool parse_number(const std::string& text, double* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno == ERANGE || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

Cli::Cli(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {
  add_int("--reps", &common_.reps, 1, 100000, "timed repetitions (median reported)");
  add_int("--warmup", &common_.warmup, 0, 100000, "untimed warm-up runs");
  add_int("--seed", &common_.seed, 0, std::numeric_limits<int64_t>::max(),
          "seed of the data generators");
  add_flag("--verify-only", &common_.verify_only,
           "correctness sweep over awkward sizes, no timing");
  add_flag("--json", &common_.json, "print one JSON object per result");
  add_flag("--graded-timing", &common_.graded_timing,
           "the lab grader's timing: new input and a check for every timed call (slow)");
  add_flag("--list", &list_requested_, "print the program's steps, one per line, and exit");
}

// One body for every option with a range: parse, range-check, store.
template <class Parsed, class Target>
Cli::Option Cli::ranged_option(const std::string& name, Target* target, Parsed lo, Parsed hi,
                               const std::string& help, bool (*parse)(const std::string&, Parsed*),
                               const char* kind) {
  Option o;
  o.name = name;
  o.help = help;
  o.range = range_text(lo, hi);
  const std::string range = o.range;
  o.set = [=](const std::string& v) -> std::string {
    Parsed x;
    if (!parse(v, &x) || x < lo || x > hi)
      return name + " expects " + kind + " from " + range + ", got '" + v + "'";
    *target = static_cast<Target>(x);
    return "";
  };
  return o;
}

void Cli::add_int(const std::string& name, int64_t* target, int64_t lo, int64_t hi,
                  const std::string& help) {
  options_.push_back(
      ranged_option<int64_t>(name, target, lo, hi, help, parse_integer, "an integer"));
}

void Cli::add_int(const std::string& name, int* target, int lo, int hi, const std::string& help) {
  options_.push_back(
      ranged_option<int64_t>(name, target, lo, hi, help, parse_integer, "an integer"));
}

void Cli::add_number(const std::string& name, double* target, double lo, double hi,
                     const std::string& help) {
  options_.push_back(ranged_option<double>(name, target, lo, hi, help, parse_number, "a number"));
}

void Cli::offer_outputs_exchange() {
  add_string("--dump-outputs", &common_.dump_outputs,
             "with --verify-only: write the outputs of every checked run into this empty folder");
  add_string("--check-outputs", &common_.check_outputs,
             "with --verify-only: judge the outputs a --dump-outputs run wrote into this folder, "
             "without running the steps");
  add_int("--repeat", &common_.repeat, 1, kMaxRepeat,
          "with --verify-only: every checked run this many times, each poisoned first (a race "
          "shows as repeats that differ)");
}

void Cli::without(const std::string& name) {
  for (size_t i = 0; i < options_.size(); ++i)
    if (options_[i].name == name) {
      options_.erase(options_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}

void Cli::add_flag(const std::string& name, bool* target, const std::string& help) {
  Option o;
  o.name = name;
  o.help = help;
  o.takes_value = false;
  o.set = [=](const std::string&) -> std::string {
    *target = true;
    return "";
  };
  options_.push_back(o);
}

void Cli::add_variant(std::string* target, const std::vector<std::string>& steps,
                      const std::string& help, const std::vector<std::string>& extra) {
  std::vector<std::string> choices = {"all"};
  choices.insert(choices.end(), extra.begin(), extra.end());
  choices.insert(choices.end(), steps.begin(), steps.end());
  add_choice("--variant", target, choices, help);
  set_steps(steps);
}

void Cli::add_choice(const std::string& name, std::string* target, std::vector<std::string> choices,
                     const std::string& help) {
  Option o;
  o.name = name;
  o.help = help;
  for (size_t i = 0; i < choices.size(); ++i) o.range += (i ? ", " : "") + choices[i];
  const std::string range = o.range;
  o.set = [=](const std::string& v) -> std::string {
    for (const auto& c : choices)
      if (c == v) {
        *target = v;
        return "";
      }
    return name + " expects one of " + range + ", got '" + v + "'";
  };
  options_.push_back(o);
}

void Cli::add_string(const std::string& name, std::string* target, const std::string& help) {
  Option o;
  o.name = name;
  o.help = help;
  o.range = "a non-empty text";
  o.set = [=](const std::string& v) -> std::string {
    if (v.empty()) return name + " expects a non-empty value";
    *target = v;
    return "";
  };
  options_.push_back(o);
}

Cli::Option* Cli::find(const std::string& name) {
  for (auto& o : options_)
    if (o.name == name) return &o;
  return nullptr;
}

void Cli::reject(const std::string& message) const {
  std::fprintf(stderr, "%s: error: %s\n", program_.c_str(), message.c_str());
  std::exit(kExitBadInput);
}

bool Cli::was_given(const std::string& name) const {
  for (const auto& o : options_)
    if (o.name == name) return o.given;
  return false;
}

std::string Cli::parse(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      help_requested_ = true;
      return "";
    }
    std::string value;
    bool inline_value = false;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      inline_value = true;
    }
    Option* o = find(arg);
    if (!o) return "unknown option '" + arg + "' (see --help)";
    // Once only: of `--n 5 --n 7` neither may quietly win (a script that appends an
    // option to a line that has it already would measure something else than it says).
    if (o->given) return arg + " given twice (give each option once)";
    if (o->takes_value) {
      if (!inline_value) {
        if (i + 1 >= argc) return arg + " needs a value: " + o->range;
        value = argv[++i];
      }
      const std::string err = o->set(value);
      if (!err.empty()) return err;
    } else {
      if (inline_value) return arg + " takes no value";
      o->set("");
    }
    o->given = true;
  }
  return "";
}

CommonOptions Cli::parse_or_exit(int argc, const char* const* argv) {
  const std::string err = parse(argc, argv);
  if (!err.empty()) {
    std::fprintf(stderr, "%s: error: %s\n", program_.c_str(), err.c_str());
    std::exit(kExitBadInput);
  }
  if (help_requested_) {
    std::fputs(usage().c_str(), stdout);
    std::exit(kExitOk);
  }
  if (list_requested_) {
    for (const auto& name : steps_) std::printf("%s\n", name.c_str());
    std::exit(kExitOk);
  }
  return common_;
}

std::string Cli::usage() const {
  std::ostringstream s;
  s << program_ << ": " << summary_ << "\n\nusage: " << program_ << " [options]\n\noptions:\n";
  s << "  --help                 this text\n";
  for (const auto& o : options_) {
    std::string left = "  " + o.name + (o.takes_value ? " X" : "");
    if (left.size() < 25) left.resize(25, ' ');
    s << left << o.help;
    if (o.takes_value) s << " (" << o.range << ")";
    s << "\n";
  }
  s << "\nSizes accept 1000000, 1e6, 2^20 or 1<<20. Exit codes: 0 ok, 1 a check failed,\n"
       "2 bad input, 77 no usable GPU (with REQUIRE_GPU=1 that is an error, 1).\n";
  return s.str();
}

std::string fits_message(const std::string& option, int64_t value, double bytes_per_unit,
                         double fixed_bytes, double free_bytes) {
  const double need = fixed_bytes + static_cast<double>(value) * bytes_per_unit;
  if (need <= free_bytes) return "";
  const double max_value = std::floor((free_bytes - fixed_bytes) / bytes_per_unit);
  std::ostringstream s;
  s.precision(3);
  s << option << " " << value << " needs " << std::fixed << need / 1e9
    << " GB of device memory but " << free_bytes / 1e9 << " GB are free; valid range: 1 to "
    << static_cast<long long>(std::max(0.0, max_value));
  return s.str();
}

}  // namespace sw
