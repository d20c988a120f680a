// Reports: the JSON records carry every field the tour and docs rely on.
#include <doctest/doctest.h>

#include <string>

#include "common/report.h"

TEST_CASE("json records") {
  sw::CommonOptions opt;
  opt.json = true;
  sw::Report report(opt, 2000.0, "05", "sum");
  sw::Result r{"shuffle", 1 << 20, 4.0 * (1 << 20), {0.004, 0.0038, 20}, true};
  r.extra = {{"block", 256}};
  const std::string j = report.json(r);
  for (const char* field :
       {"\"record\":\"result\"", "\"chapter\":\"05\"", "\"problem\":\"sum\"",
        "\"variant\":\"shuffle\"", "\"role\":\"step\"", "\"n\":1048576", "\"bytes\":4194304",
        "\"ms_median\":0.004", "\"ms_min\":0.0038", "\"gbps\":1048.576", "\"pct_of_copy\":52.4288",
        "\"ok\":true", "\"extra\":{\"block\":256}"}) {
    CAPTURE(field);
    CHECK(j.find(field) != std::string::npos);
  }
  r.problem = "other";
  CHECK(report.json(r).find("\"problem\":\"other\"") != std::string::npos);
}

TEST_CASE("json quoting and numbers") {
  CHECK(sw::json_quote("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\"");
  CHECK(sw::json_number(3) == "3");
  CHECK(sw::json_number(0.125) == "0.125");
  CHECK(sw::json_number(1.0 / 0.0) == "null");
}

TEST_CASE("table lines compare with the previous step and the library") {
  sw::CommonOptions opt;
  sw::Report report(opt, 1000.0, "05", "sum");
  const sw::Result lib{"cub", 1000, 1e9, {1.0, 1.0, 1}, true, "vendor"};
  report.add(lib);  // 1000 GB/s
  const sw::Result first{"a", 1000, 1e9, {2.0, 2.0, 1}, true};
  report.add(first);  // 500 GB/s
  const sw::Result second{"b", 1000, 1e9, {0.5, 0.5, 1}, false};
  const std::string line = report.line(second);  // 2000 GB/s
  CHECK(line.find("200.0%") != std::string::npos);
  CHECK(line.find("4.00x") != std::string::npos);  // vs prev
  CHECK(line.find("2.00x") != std::string::npos);  // vs lib
  CHECK(line.find("FAILED") != std::string::npos);
  report.add(second);
  CHECK(report.failures() == 1);
  CHECK(report.exit_code() == 1);
}

TEST_CASE("a report with no checks fails: a test that checks nothing is a defect") {
  sw::CommonOptions opt;
  sw::Report report(opt, 0.0, "00", "none");
  CHECK(report.exit_code() == 1);
  report.check(true, "something");
  CHECK(report.exit_code() == 0);
}

TEST_CASE("a skipped step is neither a check nor a failure") {
  sw::CommonOptions opt;
  sw::Report report(opt, 0.0, "06", "sum");
  report.skip("two-pass-pdl",
              "programmatic dependent launch needs compute capability 9.0; this GPU has 7.5");
  CHECK(report.failures() == 0);
  CHECK(report.exit_code() == 1);  // nothing checked yet
  report.check(true, "two-pass n=1");
  CHECK(report.exit_code() == 0);
}

TEST_CASE("print_text formats into a string of exactly the printed length") {
  CHECK(sw::print_text("mix-%.2f-v%d", 0.9, 7) == "mix-0.90-v7");
  CHECK(sw::print_text("equal-%u", 255u) == "equal-255");
  CHECK(sw::print_text("%s", "") == "");
  const std::string long_text = sw::print_text("%0300d", 1);
  CHECK(long_text.size() == 300);
  CHECK(long_text.back() == '1');
}

TEST_CASE("counts read as a person writes them") {
  CHECK(sw::format_count(1) == "1");
  CHECK(sw::format_count(1000) == "1000");
  CHECK(sw::format_count(1024) == "2^10");
  CHECK(sw::format_count(int64_t{1} << 28) == "2^28");
  CHECK(sw::format_count(100000000) == "1e8");
  CHECK(sw::format_count(1000003) == "1000003");
  CHECK(sw::format_count(16384 + 1) == "16385");
}

TEST_CASE("settings show as parameters, measurements do not") {
  for (const char* key : {"value", "rel_error", "rel_bound", "kernel_ms", "copy_gbps", "error",
                          "bound", "sm_clock_mhz", "power_w"}) {
    CAPTURE(key);
    CHECK(sw::is_measurement(key));
  }
  for (const char* key :
       {"block", "blocks_per_sm", "blocks", "threads", "p", "copies", "unroll", "rows"}) {
    CAPTURE(key);
    CHECK_FALSE(sw::is_measurement(key));
  }
}

TEST_CASE("the parameters column tells rows apart") {
  sw::CommonOptions opt;
  sw::Report report(opt, 1000.0, "06", "sum");
  sw::Result r{"two-pass", int64_t{1} << 28, 4.0 * (1 << 28), {1.0, 1.0, 1}, true};
  r.extra = {{"blocks_per_sm", 16}, {"block", 256}, {"rel_error", 3e-8}};
  r.note = "uniform";
  report.add(r);  // the first row of "sum" sets its usual n
  CHECK(report.params(r) == "uniform block=256 blocks/SM=16");
  r.n = 1 << 20;
  CHECK(report.params(r) == "uniform block=256 blocks/SM=16 n=2^20");
  r.note = "n=2^20";  // already said: not twice
  CHECK(report.params(r) == "n=2^20 block=256 blocks/SM=16");
  sw::Result t{"copy", 1 << 22, 0, {1.0, 1.0, 1}, true, "ceiling"};
  t.problem = "transpose";
  t.extra = {{"rows", 2048}, {"cols", 2048}, {"launches", 20}, {"threads", 8}, {"zeta", 0.5}};
  CHECK(report.params(t) ==
        "2048x2048 threads=8 launches=20 zeta=0.5");  // no usual n for transpose yet
  t.note = "2048x2048";
  CHECK(report.params(t) == "2048x2048 threads=8 launches=20 zeta=0.5");
  report.set_default_n("transpose", int64_t{1} << 28);
  CHECK(report.params(t) == "2048x2048 threads=8 launches=20 zeta=0.5 n=2^22");
}

TEST_CASE("table columns line up, whatever the parameters") {
  sw::CommonOptions opt;
  sw::Report report(opt, 1000.0, "08", "histogram");
  sw::Result a{"a", 1000, 1e9, {1.0, 1.0, 1}, true};
  sw::Result b{"a-much-longer-variant-name",
               int64_t{1} << 30,
               1e9,
               {123.25, 100.5, 20},
               false,
               "anti-example"};
  b.extra = {{"block", 1024}, {"p", 0.25}};
  b.note = "mix-0.25";
  const std::string la = report.line(a), lb = report.line(b);
  // "ok" and "FAILED" start at the same column; the parameters after them too.
  CHECK(la.find("ok") == lb.find("FAILED"));
  CHECK(lb.find("mix-0.25 block=1024 p=0.25") == la.find("ok") + 8);
  CHECK(la.back() == 'k');  // no trailing blanks
  CHECK(lb.find("anti-example") != std::string::npos);
  CHECK(lb.find("2^30") != std::string::npos);
}

TEST_CASE("a compute-bound row reports TFLOP/s, the clock and the power") {
  sw::CommonOptions opt;
  opt.json = true;
  sw::Report report(opt, 3000.0, "19", "sgemm");
  sw::Result r{"warp-tiled", int64_t{1} << 36, 2e8, {4.0, 3.9, 20}, true};
  r.flops = 2.0 * 4096.0 * 4096.0 * 4096.0;  // 2mnk at 4096^3
  r.extra = {{"sm_clock_mhz", 1755}, {"power_w", 612.5}, {"vec", 4}};
  const std::string j = report.json(r);
  for (const char* field : {"\"flops\":137438953472", "\"tflops\":34.359738368", "\"gbps\":50",
                            "\"sm_clock_mhz\":1755", "\"power_w\":612.5"}) {
    CAPTURE(field);
    CHECK(j.find(field) != std::string::npos);
  }
  const std::string line = report.line(r);
  CHECK(line.find("34.36") != std::string::npos);
  CHECK(line.find(" 1755 ") != std::string::npos);
  CHECK(line.find(" 612 ") != std::string::npos);  // %.0f of 612.5 rounds to even
  CHECK(report.params(r) == "vec=4");              // clock and power are measurements
  r.extra.erase("power_w");
  CHECK(report.line(r).find(" 1755     - ") != std::string::npos);  // no reading: "-"
  // With a power window, its clock is the one printed (the runs' own readings, taken as
  // they are launched, do not show the power limit); the record keeps both.
  r.extra["power_clock_mhz"] = 1545;
  r.extra["power_w"] = 678.4;
  CHECK(report.line(r).find(" 1545   678 ") != std::string::npos);
  CHECK(report.line(r).find("1755") == std::string::npos);
  CHECK(report.json(r).find("\"sm_clock_mhz\":1755") != std::string::npos);
}

TEST_CASE("a memory-bound row prints as before: no flops, no compute columns") {
  sw::CommonOptions opt;
  opt.json = true;
  sw::Report report(opt, 1000.0, "05", "sum");
  const sw::Result r{"shuffle", 1 << 20, 4.0 * (1 << 20), {0.004, 0.0038, 20}, true};
  const std::string j = report.json(r);
  CHECK(j.find("flops") == std::string::npos);
  CHECK(j.find("\"gbps\":1048.576,\"pct_of_copy\"") != std::string::npos);
  sw::CommonOptions table;
  sw::Report plain(table, 1000.0, "05", "sum");
  sw::Result c = r;
  c.flops = 1e9;
  // The compute row's "ok" sits 22 columns further right: TFLOP/s (9), MHz (7), W (6).
  CHECK(plain.line(c).find("ok") == plain.line(r).find("ok") + 22);
}

TEST_CASE("vs prev and vs lib of compute-bound rows compare TFLOP/s") {
  sw::CommonOptions opt;
  sw::Report report(opt, 1000.0, "19", "sgemm");
  sw::Result lib{"cublas", 1000, 1e6, {1.0, 1.0, 1}, true, "vendor"};
  lib.flops = 1e12;  // 1 TFLOP/s
  report.add(lib);
  sw::Result step{"a", 1000, 5e6, {2.0, 2.0, 1}, true};  // other bytes, half the TFLOP/s
  step.flops = 1e12;
  CHECK(report.line(step).find("0.50x") != std::string::npos);
}
