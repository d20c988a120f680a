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
  for (const char* field : {"\"record\":\"result\"", "\"chapter\":\"05\"", "\"problem\":\"sum\"",
                            "\"variant\":\"shuffle\"", "\"role\":\"step\"", "\"n\":1048576",
                            "\"bytes\":4194304", "\"ms_median\":0.004", "\"ms_min\":0.0038",
                            "\"gbps\":1048.576", "\"pct_of_copy\":52.4288", "\"ok\":true",
                            "\"extra\":{\"block\":256}"}) {
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
