// Median and minimum of the timed repetitions.
#include <doctest/doctest.h>

#include "common/timing.h"

TEST_CASE("median and minimum") {
  CHECK(sw::summarize({3.0, 1.0, 2.0}).ms_median == 2.0);
  CHECK(sw::summarize({4.0, 1.0, 2.0, 3.0}).ms_median == 2.5);
  CHECK(sw::summarize({4.0, 1.0, 2.0, 3.0}).ms_min == 1.0);
  CHECK(sw::summarize({4.0, 1.0, 2.0, 3.0}).reps == 4);
  CHECK(sw::summarize({}).reps == 0);
}

TEST_CASE("warm-up runs are not timed") {
  int calls = 0;
  const sw::Timing t = sw::time_cpu(2, 5, [&] { ++calls; });
  CHECK(calls == 7);
  CHECK(t.reps == 5);
}

TEST_CASE("decimal GB/s") {
  CHECK(sw::gbps(1e9, 1000.0) == doctest::Approx(1.0));
  CHECK(sw::gbps(4e9, 1.0) == doctest::Approx(4000.0));
  CHECK(sw::gbps(1.0, 0.0) == 0.0);
}
