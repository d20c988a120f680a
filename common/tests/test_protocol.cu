// The defences of the one measurement protocol (common/bench/protocol.h), each
// proven by a planted run that only that defence fails: remove a defence and a
// line here turns FAIL. The runs are host code, so what is tested is the protocol
// itself; the GPU is needed only for its events (exit 77 without one).
//
// The data is one value: the input x, drawn from the seed, and the output y, whose
// right value is 2x.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "common/bench/protocol.h"
#include "common/check.h"
#include "common/device.h"

namespace {

namespace bench = sw::bench;

struct OneValue {
  mutable uint64_t s = 1;
  mutable double x = 2, y = 0;
  void poison() const { y = NAN; }
  bench::Verdict check() const {
    bench::Verdict v;
    v.ok = std::fabs(y - 2 * x) <= 1e-9 * std::fabs(2 * x);  // NaN fails
    if (!v.ok) v.detail = "y is not 2x";
    std::memcpy(&v.bits, &y, sizeof y);
    return v;
  }
  bool reseed(uint64_t seed) const {
    s = seed;
    x = static_cast<double>(seed % 1000) + 1;
    return true;
  }
  uint64_t seed() const { return s; }
};

int failures = 0;

// Busy for `cycles` SM clock cycles: about 5 ms at 2 GHz.
constexpr long long kSpinCycles = 10000000;
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

void expect(bool want_ok, const sw::Result& r, const char* what) {
  const bool right = r.ok == want_ok;
  failures += !right;
  std::printf("%s %s: the row %s%s%s\n", right ? "PASS" : "FAIL", what, r.ok ? "passed" : "failed",
              r.detail.empty() ? "" : ": ", r.detail.c_str());
}

}  // namespace

int main() {
  sw::require_gpu();
  sw::CommonOptions plain;
  plain.reps = 5;
  plain.warmup = 1;
  sw::CommonOptions graded = plain;
  graded.graded_timing = true;
  const bench::Row row{"one-value", 1, 16.0};
  bench::Row same_bits = row;
  same_bits.same_bits = true;
  const OneValue d;

  const auto honest = [&] { d.y = 2 * d.x; };
  expect(true, bench::measure(plain, row, d, honest), "an honest run");
  expect(true, bench::measure(graded, row, d, honest), "an honest run, graded");

  // The output still holds the right value from before: only the poison shows
  // that this run writes nothing.
  const auto writes_nothing = [] {};
  expect(false, bench::measure(plain, row, d, writes_nothing),
         "a run that writes nothing (poison)");

  // Right in the checked run only: the check of the last timed run catches it.
  int calls = 0;
  const auto right_once = [&] { d.y = calls++ == 0 ? 2 * d.x : 0; };
  expect(false, bench::measure(plain, row, d, right_once),
         "right in the first run only (the last timed run checked)");

  // The answer of the first input, whatever the input is now: the ordinary timing
  // cannot tell; the graded timing gives every call new input and checks it.
  double cached = NAN;
  const auto cache = [&] {
    if (std::isnan(cached)) cached = 2 * d.x;
    d.y = cached;
  };
  expect(true, bench::measure(plain, row, d, cache), "a cached answer, ordinary timing");
  cached = NAN;
  expect(false, bench::measure(graded, row, d, cache), "a cached answer, graded (new input)");
  // A vendor row is the library's code: the graded timing times it as the ordinary one does.
  bench::Row vendor = row;
  vendor.role = "vendor";
  cached = NAN;
  const sw::Result as_usual = bench::measure(graded, vendor, d, cache);
  expect(true, as_usual, "a vendor row, graded (timed as usual)");
  // ... and says so, which check_graded_timing.py reads (chapter 06 renames CUB's role)
  const bool says = as_usual.extra.count("graded_as_usual") == 1;
  failures += !says;
  std::printf("%s the vendor row says it was timed as usual (graded_as_usual)\n",
              says ? "PASS" : "FAIL");

  // Right every time, but every run after the checked one gives other bits than it: a
  // row that asks for the same bits fails, one that does not passes. (On 80c0359 the
  // bits alternated, so the last timed run, the seventh, matched the first: the row
  // passed and this test failed on an H100.)
  int k = 0;
  const auto wobble = [&] { d.y = 2 * d.x * (1 + 1e-12 * (k++ > 0)); };
  expect(true, bench::measure(plain, row, d, wobble), "other bits, not asked for");
  k = 0;
  expect(false, bench::measure(plain, same_bits, d, wobble), "other bits (same_bits)");

  // A kernel on a stream of its own that runs past the stop event: the events do not
  // see it, the device is busy after them, and the graded timing reports the gap.
  cudaStream_t side;
  CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  const auto hidden = [&] {
    d.y = 2 * d.x;
    spin<<<1, 1, 0, side>>>(kSpinCycles);
    CHECK_LAUNCH();
  };
  expect(false, bench::measure(graded, row, d, hidden), "work on another stream, graded (gap)");
  CUDA_CHECK(cudaStreamDestroy(side));

  // After a graded row the data are the first seed's again.
  const bool restored = d.seed() == 1 && d.x == 2;
  failures += !restored;
  std::printf("%s the data restored after the graded rows\n", restored ? "PASS" : "FAIL");
  std::printf("protocol: %d failed\n", failures);
  return failures == 0 ? sw::kExitOk : sw::kExitFailed;
}
