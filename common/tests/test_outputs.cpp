// The outputs' exchange (common/bench/outputs.h), the lab grader's boundary: the folder a
// --dump-outputs run writes reads back byte for byte under --check-outputs, and every way a
// dump can be wrong (a missing, short, longer or linked file, another row, a row no run
// backs, a file no check read) fails the run or the row it concerns, never the process.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/bench/outputs.h"

namespace {

namespace fs = std::filesystem;
using sw::bench::Exchange;

struct Folder {  // a fresh folder, removed at the end
  Folder() {
    char name[] = "/tmp/test-outputs-XXXXXX";
    path = mkdtemp(name);
  }
  ~Folder() { fs::remove_all(path); }
  std::string path;
};

sw::CommonOptions dumping(const std::string& dir) {
  sw::CommonOptions opt;
  opt.verify_only = true;
  opt.dump_outputs = dir;
  return opt;
}

sw::CommonOptions checking(const std::string& dir) {
  sw::CommonOptions opt;
  opt.verify_only = true;
  opt.check_outputs = dir;
  return opt;
}

// Two rows: "a" from one run of a float and an int64, "b" from two runs of one int64.
void dump_two_rows(const std::string& dir) {
  Exchange x;
  REQUIRE(x.start(dumping(dir)).empty());
  float f = 1.5f;
  int64_t i = -7;
  CHECK(x.run({{&f, sizeof f}, {&i, sizeof i}}).empty());
  CHECK(x.row("sum", "a n=3", false).empty());
  for (int64_t v : {int64_t{11}, int64_t{12}}) CHECK(x.run({{&v, sizeof v}}).empty());
  CHECK(x.row("sum", "b n=4", false).empty());
  CHECK(x.finish().empty());
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a dump reads back byte for byte, row for row") {
  Folder d;
  dump_two_rows(d.path);
  CHECK(fs::exists(d.path + "/manifest.txt"));
  CHECK(fs::file_size(d.path + "/" + sw::bench::run_file(0)) == sizeof(float) + sizeof(int64_t));
  CHECK(sw::bench::run_file(17) == "run-000017.bin");
  Exchange x;
  REQUIRE(x.start(checking(d.path)).empty());
  CHECK(x.mode() == Exchange::Mode::kCheck);
  float f = 0;
  int64_t i = 0, v = 0;
  CHECK(x.run({{&f, sizeof f}, {&i, sizeof i}}).empty());
  CHECK(f == 1.5f);
  CHECK(i == -7);
  CHECK(x.row("sum", "a n=3", false).empty());
  CHECK(x.run({{&v, sizeof v}}).empty());
  CHECK(v == 11);
  CHECK(x.run({{&v, sizeof v}}).empty());
  CHECK(v == 12);
  CHECK(x.row("sum", "b n=4", false).empty());
  CHECK(x.finish().empty());
}

TEST_CASE("a missing, short, longer or linked file fails its run, and the next run keeps its own") {
  Folder d;
  dump_two_rows(d.path);
  const std::string first = d.path + "/" + sw::bench::run_file(0);
  const std::string second = d.path + "/" + sw::bench::run_file(1);
  int64_t v = 0;
  float f = 0;
  int64_t i = 0;
  SUBCASE("missing") {
    fs::remove(first);
    Exchange x;
    REQUIRE(x.start(checking(d.path)).empty());
    CHECK(has(x.run({{&f, sizeof f}, {&i, sizeof i}}), "run-000000.bin is missing"));
    CHECK(x.run({{&v, sizeof v}}).empty());  // run 1 is still read from its own file
    CHECK(v == 11);
  }
  SUBCASE("short") {
    fs::resize_file(first, 5);
    Exchange x;
    REQUIRE(x.start(checking(d.path)).empty());
    CHECK(has(x.run({{&f, sizeof f}, {&i, sizeof i}}),
              "holds 5 bytes where the check reads 12 (a short file)"));
  }
  SUBCASE("longer") {
    std::ofstream(second, std::ios::app) << "more";
    Exchange x;
    REQUIRE(x.start(checking(d.path)).empty());
    CHECK(x.run({{&f, sizeof f}, {&i, sizeof i}}).empty());
    CHECK(has(x.run({{&v, sizeof v}}), "(extra bytes)"));
  }
  SUBCASE("a link to another file") {
    fs::remove(second);
    fs::create_symlink(first, second);
    Exchange x;
    REQUIRE(x.start(checking(d.path)).empty());
    CHECK(x.run({{&f, sizeof f}, {&i, sizeof i}}).empty());
    CHECK(has(x.run({{&v, sizeof v}}), "is a link, not a file"));
  }
  SUBCASE("a pipe") {
    fs::remove(second);
    REQUIRE(mkfifo(second.c_str(), 0600) == 0);
    Exchange x;
    REQUIRE(x.start(checking(d.path)).empty());
    CHECK(x.run({{&f, sizeof f}, {&i, sizeof i}}).empty());
    CHECK(has(x.run({{&v, sizeof v}}), "is not a regular file"));
  }
}

TEST_CASE("the rows must be the dump's, each backed by a run, and nothing left over") {
  Folder d;
  dump_two_rows(d.path);
  float f = 0;
  int64_t i = 0;
  SUBCASE("another row") {
    Exchange x;
    REQUIRE(x.start(checking(d.path)).empty());
    CHECK(x.run({{&f, sizeof f}, {&i, sizeof i}}).empty());
    CHECK(has(x.row("sum", "a n=5", false), "the two programs ran different checks"));
  }
  SUBCASE("a row with no run behind it, unless it checks the harness") {
    Exchange x;
    REQUIRE(x.start(checking(d.path)).empty());
    CHECK(has(x.row("sum", "a n=3", false), "the dump's row 0 is 'row 0 runs 0 1"));
    Folder e;
    Exchange dump;
    REQUIRE(dump.start(dumping(e.path)).empty());
    CHECK(dump.row("sum", "reference", true).empty());
    CHECK(dump.row("sum", "step", false).empty());
    Exchange check;
    REQUIRE(check.start(checking(e.path)).empty());
    CHECK(check.row("sum", "reference", true).empty());
    CHECK(has(check.row("sum", "step", false), "no dumped run backs this check"));
  }
  SUBCASE("more rows or files than the checks read") {
    std::ofstream(d.path + "/stray") << "x";
    Exchange x;
    REQUIRE(x.start(checking(d.path)).empty());
    CHECK(x.run({{&f, sizeof f}, {&i, sizeof i}}).empty());
    CHECK(x.row("sum", "a n=3", false).empty());
    const std::string left = x.finish();
    CHECK(has(left, "the dump holds 2 rows, the checks printed 1"));
    CHECK(has(left, "'run-000001.bin'"));
    CHECK(has(left, "'stray'"));
  }
  SUBCASE("no manifest: every row fails") {
    fs::remove(d.path + "/manifest.txt");
    Exchange x;
    REQUIRE(x.start(checking(d.path)).empty());
    CHECK(x.run({{&f, sizeof f}, {&i, sizeof i}}).empty());
    CHECK(has(x.row("sum", "a n=3", false), "manifest.txt is missing"));
  }
}

TEST_CASE("what start refuses (the program exits 2 with the line)") {
  Folder d;
  sw::CommonOptions both = dumping(d.path);
  both.check_outputs = d.path;
  CHECK(has(Exchange().start(both), "not both"));
  sw::CommonOptions timed = dumping(d.path);
  timed.verify_only = false;
  CHECK(has(Exchange().start(timed), "applies only with --verify-only"));
  sw::CommonOptions repeated_timing;
  repeated_timing.repeat = 3;
  CHECK(has(Exchange().start(repeated_timing), "--repeat: applies only with --verify-only"));
  sw::CommonOptions repeated = repeated_timing;
  repeated.verify_only = true;
  Exchange r;
  CHECK(r.start(repeated).empty());
  CHECK(r.repeats() == 3);
  CHECK(r.mode() == Exchange::Mode::kOff);
  CHECK(has(Exchange().start(dumping(d.path + "/none")), "not a folder"));
  CHECK(has(Exchange().start(checking(d.path + "/none")), "not a folder"));
  std::ofstream(d.path + "/old") << "x";
  CHECK(has(Exchange().start(dumping(d.path)), "not empty"));
  Exchange off;
  CHECK(off.start(sw::CommonOptions{}).empty());
  CHECK(off.mode() == Exchange::Mode::kOff);
  int64_t v = 3;
  CHECK(off.run({{&v, sizeof v}}).empty());
  CHECK(off.row("sum", "a", false).empty());
  CHECK(off.finish().empty());
}

// --repeat: the detail of a check's repeats names the first failing one, how many failed, and
// a later one that failed otherwise; repeats that all pass say nothing.
TEST_CASE("repeat_detail: the first failing repeat, the count, and one that differs") {
  using sw::bench::repeat_detail;
  CHECK(repeat_detail({{true, ""}, {true, ""}}) == "");
  CHECK(repeat_detail({{true, ""}, {false, "out[3]: got 1, want 2"}, {true, ""}}) ==
        "repeat 2 of 3 (1 failed): out[3]: got 1, want 2");
  CHECK(repeat_detail({{false, "a"}, {false, "a"}}) == "repeat 1 of 2 (2 failed): a");
  CHECK(repeat_detail({{false, "a"}, {false, "a"}, {false, "b"}, {false, "c"}}) ==
        "repeat 1 of 4 (4 failed): a | repeat 3: b");
}
