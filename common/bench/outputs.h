// The outputs' exchange between two processes: --dump-outputs DIR and --check-outputs DIR,
// the lab grader's boundary (docs/labs/checker.md, "Where the verdict comes from").
//
//   program --verify-only --dump-outputs DIR    runs every check as usual and writes the
//                                               outputs each checked run left into DIR
//   program --verify-only --check-outputs DIR   launches no step: every checked run puts
//                                               DIR's bytes into its poisoned outputs instead,
//                                               and the check judges them
//
// The grader runs the student's program with the first, then the reference program of the
// same chapter, built from the clean tree, with the second: the verdict it prints comes from a
// process that holds no student code. The bench core does the exchange once
// (sw::bench::check_once and check_twice in common/bench/protocol.h, Report::check); a
// problem's Data names the buffers its check reads (outputs()).
//
// --repeat N (with --verify-only; the grader's race check, one process instead of N): every
// checked run of check_once and check_twice happens N times, each after its own poison, and
// each is a run of the exchange, so the dump holds N times the runs and the checking side
// judges every one. A check fails when any repeat fails; its detail names the first failing
// repeat and the count, and a later failing repeat that said something else (repeat_detail).
//
// The folder, version 1:
//   manifest.txt   "# stepwise outputs 1", then one line per checked run and per check row,
//                  in the order they happened:
//                    run <k> bytes <b0> <b1> ...                   run k's output buffers
//                    row <r> runs <first> <count> <problem> <what>   check row r and its runs
//   run-<k>.bin    (k from 0, at least six digits) run k's buffers, back to back
//
// The checking side trusts nothing in the folder: it reads only the files it names, each a
// regular file (no link, no pipe) of exactly the bytes its own buffers hold; a file that is
// missing, short, longer or not a file fails that run's check; its rows must be the dump's
// rows, line for line; a row that no run backs fails (only a check of the harness itself,
// Report::harness_check, reads no outputs); and what the folder holds beyond what the checks
// read fails the program's last check ("outputs exchange").
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/cli.h"

namespace sw::bench {

// Bytes in host memory that the exchange writes (dump) or fills (check).
struct HostBytes {
  void* data;
  int64_t bytes;
};

constexpr const char* kManifest = "manifest.txt";
constexpr const char* kManifestHeader = "# stepwise outputs 1";
constexpr int64_t kMaxManifestBytes = int64_t{64} << 20;  // a larger manifest is not read

// "run-000017.bin": the file of run k.
std::string run_file(int64_t k);
// "row 3 runs 3 1 sum global-in-place n=257 block=256": check row r as the manifest holds it.
std::string row_line(int64_t r, int64_t first, int64_t count, const std::string& problem,
                     const std::string& what);

class Exchange {
 public:
  enum class Mode { kOff, kDump, kCheck };
  Exchange() = default;
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  ~Exchange();

  // Starts what opt asks for (nothing without either folder; --repeat is kept). Returns "" or
  // the one-line reason it cannot (the caller exits 2): both folders, a folder or --repeat
  // without --verify-only, DIR not a folder, a dump into a folder that is not empty or cannot
  // be written.
  std::string start(const CommonOptions& opt);
  Mode mode() const { return mode_; }
  // --repeat (1 unless start() was given another): how many times each checked run happens.
  int repeats() const { return repeats_; }

  // One checked run's outputs, `parts` in the order the check reads them: written to its
  // file (dump), or read from it into `parts` (check). Returns "" or why the run cannot be
  // judged; either way the run is counted, so the next run keeps its own file.
  std::string run(const std::vector<HostBytes>& parts);
  // One check row (Report::check): written to the manifest (dump), or compared with the
  // dump's row of the same index (check). Returns "" or why the row must fail besides its own
  // verdict: another row in the dump, or (check, unless of_harness) no run behind it.
  std::string row(const std::string& problem, const std::string& what, bool of_harness);
  // After the last row (Report::exit_code). Check: "" or what the folder holds that no check
  // read (more runs or rows, other files). Dump: "" or why the manifest could not be written.
  std::string finish();

 private:
  std::string read_manifest();
  Mode mode_ = Mode::kOff;
  int repeats_ = 1;
  std::string dir_, option_;            // the folder, and the option that named it
  FILE* manifest_ = nullptr;            // dump: open for writing
  std::string write_error_;             // dump: the first failed write of the manifest
  std::vector<std::string> dump_rows_;  // check: the manifest's row lines
  std::string manifest_error_;          // check: why the manifest cannot be read, or ""
  int64_t runs_ = 0, rows_ = 0;         // counted so far
  int64_t row_first_run_ = 0;           // the first run of the row that is open
};

// The process's one exchange: started by the program main (bench::run), used by the
// protocol's checked runs and by Report::check.
Exchange& exchange();

// One repeat's outcome, and the detail of a check's N repeats: "" when every repeat passed,
// else "repeat k of N (F failed): <k's detail>", the first failing repeat's, and where a later
// failing repeat said something else, " | repeat j: <j's detail>" (repeats that fail alike
// point at the code; repeats that pass and fail, or fail differently, at a race).
struct RepeatOutcome {
  bool ok;
  std::string detail;
};
std::string repeat_detail(const std::vector<RepeatOutcome>& repeats);

}  // namespace sw::bench
