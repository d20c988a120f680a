// Command line shared by every chapter.
//
// Each program declares its own options, then parses:
//
//   sw::Cli cli("05_reduce_unrolled", "Sum of floats with an unrolled tree.");
//   int64_t n = int64_t{1} << 28;
//   cli.add_int("--n", &n, 1, sw::kMaxElements, "number of floats");
//   sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
//
// Every program also accepts --help, --reps, --warmup, --seed, --verify-only and
// --json. Bad input (an unknown option, a non-number, a value out of range, an option
// given twice) prints one line naming the option (and its valid range), and exits 2.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sw {

// Exit codes used by every program.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;    // a check failed, or a CUDA error
constexpr int kExitBadInput = 2;  // the command line was wrong
constexpr int kExitSkip = 77;     // no usable GPU (meson reports "skipped")

// The largest element count any option accepts; device memory is checked later.
constexpr int64_t kMaxElements = int64_t{1} << 40;
constexpr int kMaxRepeat = 100;  // --repeat: the most repeats of a checked run

struct CommonOptions {
  int reps = 20;             // timed repetitions; the median is reported
  int warmup = 3;            // untimed runs before timing
  int64_t seed = 42;         // seed of the data generators (0 or more)
  bool verify_only = false;  // correctness sweep over awkward sizes, no timing
  bool json = false;         // one JSON object per result instead of a table
  // The lab grader's timing (in sw::bench::measure): new input contents and a check for
  // every timed call, the device idle at the end of each timed window, persisting
  // L2 lines off. Slower; for grading, not for the tutorial's tables.
  bool graded_timing = false;
  // The lab grader's boundary (common/bench/outputs.h; offered by Cli::offer_outputs_exchange):
  // with --verify-only, write every checked run's outputs into this folder, or judge the
  // outputs that such a run wrote there instead of running the steps. "": neither.
  std::string dump_outputs, check_outputs;
  // With --verify-only (offered beside the exchange): every checked run of check_once and
  // check_twice this many times, each after its own poison (common/bench/outputs.h, --repeat).
  int repeat = 1;
};

// Parses "123", "1e6", "2^28" and "1<<20" as exact integers. Returns false for
// anything else, including fractions and values beyond int64.
bool parse_integer(const std::string& text, int64_t* out);
// Parses a finite decimal number.
bool parse_number(const std::string& text, double* out);

class Cli {
 public:
  Cli(std::string program, std::string summary);

  void add_int(const std::string& name, int64_t* target, int64_t lo, int64_t hi,
               const std::string& help);
  void add_int(const std::string& name, int* target, int lo, int hi, const std::string& help);
  void add_number(const std::string& name, double* target, double lo, double hi,
                  const std::string& help);
  void add_flag(const std::string& name, bool* target, const std::string& help);
  void add_choice(const std::string& name, std::string* target, std::vector<std::string> choices,
                  const std::string& help);
  void add_string(const std::string& name, std::string* target, const std::string& help);

  // Parses argv. Returns "" on success, otherwise the one-line error message.
  // After "--help", help_requested() is true and nothing else is parsed.
  std::string parse(int argc, const char* const* argv);
  // parse(), then: on error print the message and exit 2; on --help print
  // usage() and exit 0.
  CommonOptions parse_or_exit(int argc, const char* const* argv);

  // The program's steps, in order: `--list` prints them, one per line, and exits 0.
  // Every program declares them (from its version table); a test compares them
  // with the "Steps:" line of the chapter's header.
  void set_steps(std::vector<std::string> names) { steps_ = std::move(names); }
  // --variant: "all" (the default), one of `extra` (rows beside the steps, e.g. "cub") or
  // one of the steps; the steps are also what --list prints (set_steps).
  void add_variant(std::string* target, const std::vector<std::string>& steps,
                   const std::string& help, const std::vector<std::string>& extra = {});

  // --dump-outputs DIR and --check-outputs DIR (CommonOptions), for a program whose checks
  // can exchange their outputs (common/bench/outputs.h): no other program knows them, so
  // they are an unknown option there (exit 2).
  void offer_outputs_exchange();

  // Takes a common option away from a program it does not apply to (e.g. --graded-timing
  // from a CPU-only program): it becomes an unknown option (exit 2), and --help leaves it out.
  void without(const std::string& name);

  // The common options' defaults, to change before parse (e.g. fewer reps for slow CPU work).
  CommonOptions& defaults() { return common_; }
  bool help_requested() const { return help_requested_; }
  bool was_given(const std::string& name) const;  // the user passed this option
  // Bad input found after parsing (an option that does not apply to what was asked):
  // prints "<program>: error: <message>" and exits 2.
  [[noreturn]] void reject(const std::string& message) const;
  const CommonOptions& common() const { return common_; }
  std::string usage() const;

 private:
  struct Option {
    std::string name, help, range;  // range as shown to the user, e.g. "1 to 1024"
    bool takes_value = true;
    bool given = false;
    std::function<std::string(const std::string&)> set;  // "" or an error
  };
  Option* find(const std::string& name);
  template <class Parsed, class Target>
  static Option ranged_option(const std::string& name, Target* target, Parsed lo, Parsed hi,
                              const std::string& help, bool (*parse)(const std::string&, Parsed*),
                              const char* kind);

  std::string program_, summary_;
  std::vector<Option> options_;
  CommonOptions common_;
  bool help_requested_ = false;
  bool list_requested_ = false;
  std::vector<std::string> steps_;
};

// The one-line message for a size that does not fit in device memory, or ""
// when it fits. `option` and `value` name what the user asked for;
// bytes = fixed_bytes + value * bytes_per_unit must fit in free_bytes.
std::string fits_message(const std::string& option, int64_t value, double bytes_per_unit,
                         double fixed_bytes, double free_bytes);

}  // namespace sw
