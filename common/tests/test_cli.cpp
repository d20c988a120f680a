// The command line: every bad-input case gives one message naming the option.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/cli.h"

namespace {

struct Parsed {
  std::string error;
  int64_t n = 7;
  int block = 256;
  double p = 0.5;
  bool flag = false;
  std::string dist = "uniform";
  sw::CommonOptions common;
  bool help = false;
};

Parsed parse(std::vector<std::string> args) {
  Parsed out;
  sw::Cli cli("prog", "test program");
  cli.add_int("--n", &out.n, 1, int64_t{1} << 40, "elements");
  cli.add_int("--block", &out.block, 32, 1024, "threads per block");
  cli.add_number("--p", &out.p, 0.0, 1.0, "probability");
  cli.add_flag("--large", &out.flag, "large sizes");
  cli.add_choice("--dist", &out.dist, {"uniform", "equal"}, "distribution");
  std::vector<const char*> argv = {"prog"};
  for (auto& a : args) argv.push_back(a.c_str());
  out.error = cli.parse(static_cast<int>(argv.size()), argv.data());
  out.common = cli.common();
  out.help = cli.help_requested();
  return out;
}

bool mentions(const std::string& msg, const std::string& what) {
  return msg.find(what) != std::string::npos && msg.find('\n') == std::string::npos;
}

}  // namespace

TEST_CASE("integers in every accepted spelling") {
  int64_t v = 0;
  CHECK((sw::parse_integer("123", &v) && v == 123));
  CHECK((sw::parse_integer("1e6", &v) && v == 1000000));
  CHECK((sw::parse_integer("2^28", &v) && v == (int64_t{1} << 28)));
  CHECK((sw::parse_integer("1<<20", &v) && v == (int64_t{1} << 20)));
  CHECK((sw::parse_integer("3<<4", &v) && v == 48));
  CHECK((sw::parse_integer("-5", &v) && v == -5));
  CHECK_FALSE(sw::parse_integer("", &v));
  CHECK_FALSE(sw::parse_integer("abc", &v));
  CHECK_FALSE(sw::parse_integer("12abc", &v));
  CHECK_FALSE(sw::parse_integer("1.5", &v));
  CHECK_FALSE(sw::parse_integer("2^64", &v));
  CHECK_FALSE(sw::parse_integer("99999999999999999999", &v));
  CHECK_FALSE(sw::parse_integer("1e30", &v));
}

TEST_CASE("good input sets the values") {
  Parsed p = parse({"--n", "2^20", "--block=128", "--p", "0.25", "--large", "--dist", "equal",
                    "--reps", "5", "--warmup", "0", "--seed", "9", "--verify-only", "--json"});
  CHECK(p.error == "");
  CHECK(p.n == (1 << 20));
  CHECK(p.block == 128);
  CHECK(p.p == 0.25);
  CHECK(p.flag);
  CHECK(p.dist == "equal");
  CHECK(p.common.reps == 5);
  CHECK(p.common.warmup == 0);
  CHECK(p.common.seed == 9);
  CHECK(p.common.verify_only);
  CHECK(p.common.json);
}

TEST_CASE("defaults hold without options") {
  Parsed p = parse({});
  CHECK(p.error == "");
  CHECK(p.n == 7);
  CHECK(p.common.reps == 20);
  CHECK_FALSE(p.common.verify_only);
}

TEST_CASE("--help stops parsing") {
  Parsed p = parse({"--help", "--bogus"});
  CHECK(p.help);
  CHECK(p.error == "");
}

TEST_CASE("every bad-input case names the option and its range") {
  struct Case {
    std::vector<std::string> args;
    std::string must_mention;
  };
  const std::vector<Case> cases = {
      {{"--bogus"}, "--bogus"},
      {{"-n", "5"}, "-n"},
      {{"--n", "abc"}, "--n expects an integer from 1 to"},
      {{"--n", "0"}, "--n expects an integer from 1 to"},
      {{"--n", "-3"}, "--n expects an integer from 1 to"},
      {{"--n", "2^41"}, "--n expects an integer from 1 to"},
      {{"--n", "1.5"}, "--n"},
      {{"--n"}, "--n needs a value"},
      {{"--block", "16"}, "--block expects an integer from 32 to 1024"},
      {{"--block", "2000"}, "--block expects an integer from 32 to 1024"},
      {{"--p", "1.5"}, "--p expects a number from 0 to 1"},
      {{"--p", "nan"}, "--p"},
      {{"--p", "x"}, "--p"},
      {{"--dist", "zipf"}, "--dist expects one of uniform, equal"},
      {{"--large=1"}, "--large takes no value"},
      {{"--reps", "0"}, "--reps expects an integer from 1 to"},
      {{"--warmup", "-1"}, "--warmup expects an integer from 0 to"},
      {{"--seed", "-1"}, "--seed expects an integer from 0 to"},
      {{"--seed", "seven"}, "--seed"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args[0]);
    const Parsed p = parse(c.args);
    CHECK(mentions(p.error, c.must_mention));
  }
}

TEST_CASE("an option given twice is an error that names it, whichever option") {
  // Every kind of option: a chapter's own (integer, number, choice, flag) and the common
  // ones. The second value must not quietly win, nor the first: the line is refused.
  struct Case {
    std::vector<std::string> args;
    std::string option;
  };
  const std::vector<Case> cases = {
      {{"--n", "5", "--n", "7"}, "--n"},
      {{"--n", "5", "--n", "5"}, "--n"},  // the same value twice too
      {{"--n=5", "--n", "7"}, "--n"},
      {{"--n", "5", "--n=7"}, "--n"},
      {{"--n", "5", "--block", "64", "--n", "7"}, "--n"},
      {{"--block", "64", "--block", "128"}, "--block"},
      {{"--p", "0.25", "--p", "0.5"}, "--p"},
      {{"--dist", "equal", "--dist", "uniform"}, "--dist"},
      {{"--large", "--large"}, "--large"},
      {{"--reps", "5", "--reps", "6"}, "--reps"},
      {{"--warmup", "0", "--warmup", "1"}, "--warmup"},
      {{"--seed", "1", "--seed", "2"}, "--seed"},
      {{"--verify-only", "--json", "--verify-only"}, "--verify-only"},
      {{"--json", "--json"}, "--json"},
      {{"--graded-timing", "--graded-timing"}, "--graded-timing"},
      {{"--list", "--list"}, "--list"},
  };
  for (const auto& c : cases) {
    std::string line;
    for (const auto& a : c.args) line += a + " ";
    CAPTURE(line);
    const Parsed p = parse(c.args);
    CHECK(mentions(p.error, c.option + " given twice (give each option once)"));
  }
  // Each option once, all of them: no error.
  CHECK(parse({"--n", "5", "--block", "64", "--p", "0.5", "--dist", "equal", "--large", "--reps",
               "5", "--warmup", "0", "--seed", "1", "--verify-only", "--json", "--graded-timing"})
            .error.empty());
}

TEST_CASE("a size larger than device memory gets the valid range") {
  // 4-byte elements, 1 GB free: at most 250,000,000 elements.
  CHECK(sw::fits_message("--n", 1000, 4, 0, 1e9) == "");
  CHECK(sw::fits_message("--n", 250000000, 4, 0, 1e9) == "");
  const std::string msg = sw::fits_message("--n", 250000001, 4, 0, 1e9);
  CHECK(mentions(msg, "--n 250000001"));
  CHECK(mentions(msg, "valid range: 1 to 250000000"));
  // fixed bytes count too
  CHECK(mentions(sw::fits_message("--rows", 10, 1e8, 5e8, 1e9), "valid range: 1 to 5"));
}

TEST_CASE("usage lists every option with its range") {
  sw::Cli cli("prog", "summary");
  int64_t n = 1;
  cli.add_int("--n", &n, 1, 100, "elements");
  const std::string u = cli.usage();
  CHECK(u.find("--n X") != std::string::npos);
  CHECK(u.find("(1 to 100)") != std::string::npos);
  CHECK(u.find("--verify-only") != std::string::npos);
  CHECK(u.find("--json") != std::string::npos);
}

TEST_CASE("--variant takes all, the extra rows and the steps, and nothing else") {
  const auto run = [](const std::string& value, std::string* variant) {
    sw::Cli cli("prog", "summary");
    cli.add_variant(variant, {"naive", "tiled"}, "the step(s) to run", {"cub"});
    std::vector<const char*> argv = {"prog", "--variant", value.c_str()};
    return cli.parse(static_cast<int>(argv.size()), argv.data());
  };
  for (const std::string ok : {"all", "cub", "naive", "tiled"}) {
    std::string variant = "all";
    CHECK(run(ok, &variant).empty());
    CHECK(variant == ok);
  }
  std::string variant = "all";
  const std::string error = run("fast", &variant);
  CHECK(mentions(error, "--variant expects one of all, cub, naive, tiled, got 'fast'"));
  CHECK(variant == "all");
}

TEST_CASE("--repeat, offered beside the outputs' exchange, takes 1 to 100") {
  const auto with_exchange = [](std::vector<std::string> args, sw::CommonOptions* common) {
    sw::Cli cli("prog", "test program");
    cli.offer_outputs_exchange();
    std::vector<const char*> argv = {"prog"};
    for (auto& a : args) argv.push_back(a.c_str());
    const std::string error = cli.parse(static_cast<int>(argv.size()), argv.data());
    *common = cli.common();
    return error;
  };
  sw::CommonOptions c;
  CHECK(with_exchange({}, &c).empty());
  CHECK(c.repeat == 1);
  CHECK(with_exchange({"--verify-only", "--repeat", "10"}, &c).empty());
  CHECK(c.repeat == 10);
  for (const char* bad : {"0", "101", "x", "2.5"})
    CHECK(mentions(with_exchange({"--repeat", bad}, &c),
                   "--repeat expects an integer from 1 to 100"));
  CHECK(mentions(parse({"--repeat", "2"}).error, "--repeat"));  // not offered: unknown
}
