// Chapter 13's checks (Top2Problem::verify: --verify-only; check_large: --large), their
// inputs, and the seed's INT_MIN-sentinel kernel that the checks must catch. Every
// version runs once on a poisoned answer (sw::bench::check_once) and is checked against
// the reference, x unchanged. Part of the program 13_top2; the versions are in 13_top2.cu.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/parallel.h"
#include "common/report.h"
#include "top2_problem.h"

using ch13::kNoIndex;
using ch13::Top2;

namespace {

constexpr int kSentinelBlock = 256;

// --- test inputs ----------------------------------------------------------------------------

const char* const kPatterns[] = {
    "random",          // any int32, INT_MIN and INT_MAX included
    "ties",            // values in {-1, 0, 1}: the maximum repeats
    "all-equal",       // 7 everywhere
    "all-int-min",     // INT_MIN everywhere: the answer is (INT_MIN at 0, INT_MIN at 1)
    "int-min-second",  // INT_MIN everywhere but one 0 in the middle
    "descending",      // strictly decreasing
    "ascending",       // strictly increasing from INT_MIN
    "runs",            // ascending runs of 37, then descending runs of 29
    "max-first",       // small values, the maximum at index 0
    "max-last",        // small values, the maximum at index n-1
    "negative",        // INT_MIN + {0..3}: all negative, many ties, INT_MIN common
};

void make_ints(const std::string& p, int32_t* x, int64_t n, uint64_t seed) {
  sw::host_fill_ints(x, n, seed);     // random bits; most patterns reshape them
  auto reshape = [&](auto&& value) {  // value(i, random bits of element i)
    sw::parallel_for(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) x[i] = value(i, static_cast<uint32_t>(x[i]));
    });
  };
  constexpr int64_t k2to31 = int64_t{1} << 31;
  if (p == "ties") reshape([](int64_t, uint32_t r) { return static_cast<int32_t>(r % 3) - 1; });
  if (p == "all-equal") reshape([](int64_t, uint32_t) { return 7; });
  if (p == "all-int-min" || p == "int-min-second")
    reshape([](int64_t, uint32_t) { return INT_MIN; });
  if (p == "descending")
    reshape([](int64_t i, uint32_t) { return static_cast<int32_t>(INT_MAX - i % k2to31); });
  if (p == "ascending")
    reshape([](int64_t i, uint32_t) { return static_cast<int32_t>(INT_MIN + i % k2to31); });
  if (p == "runs")
    reshape([n](int64_t i, uint32_t) {
      return static_cast<int32_t>(i < n / 2 ? i % 37 : 28 - i % 29);
    });
  if (p == "max-first" || p == "max-last")
    reshape([](int64_t, uint32_t r) { return static_cast<int32_t>(r % 2001) - 1000; });
  if (p == "negative")
    reshape([](int64_t, uint32_t r) { return INT_MIN + static_cast<int32_t>(r % 4); });
  if (p == "int-min-second") x[n / 2] = 0;
  if (p == "max-first") x[0] = 5000;
  if (p == "max-last") x[n - 1] = 5000;
}

using Session = sw::bench::Session<ch13::Step>;

// The vendor and every chosen step: their rows, in the table's order.
std::vector<ch13::Step> rows(const Session& s, const ch13::Step& vendor) {
  std::vector<ch13::Step> out = {vendor};
  out.insert(out.end(), s.steps.begin(), s.steps.end());
  return out;
}

// The vendor and every chosen step on d_x (device, n >= 2) against `want`, x unchanged:
// one PASS/FAIL line each.
void check_steps(const Session& s, const ch13::Step& vendor, const int32_t* d_x, int64_t n,
                 const Top2& want, const std::string& label) {
  ch13::Buffers b;
  const uint64_t digest = sw::device_digest(d_x, static_cast<size_t>(n) * sizeof(int32_t));
  const ch13::Top2Data data{b.out.get(), &want, d_x, n, /*check_input=*/true, digest};
  for (const ch13::Step& st : rows(s, vendor)) {
    const sw::bench::Verdict v = sw::bench::check_once(data, st.launch, d_x, n, std::ref(b));
    s.report.check(v.ok, st.name + (" " + label), v.detail);
  }
}

// --- the seed's INT_MIN sentinel (one block), kept only to prove the checks catch it --------
// An element equal to INT_MIN never beats the "empty" sentinel, so its index is never recorded.

__device__ void sentinel_add(Top2& t, int32_t v, int64_t i) {
  if (v > t.k2) {
    if (v > t.k1) {
      t.k2 = t.k1, t.i2 = t.i1;
      t.k1 = v, t.i1 = i;
    } else {
      t.k2 = v, t.i2 = i;
    }
  }
}

__global__ void __launch_bounds__(kSentinelBlock)
    top2_int_min_sentinel(const int32_t* __restrict__ x, int64_t n, Top2* __restrict__ out) {
  __shared__ Top2 s[kSentinelBlock];
  Top2 t{INT_MIN, INT_MIN, kNoIndex, kNoIndex};
  for (int64_t i = threadIdx.x; i < n; i += kSentinelBlock) sentinel_add(t, x[i], i);
  s[threadIdx.x] = t;
  __syncthreads();
  if (threadIdx.x == 0) {
    t = s[0];
    for (int j = 1; j < kSentinelBlock; ++j)
      sentinel_add(t, s[j].k1, s[j].i1), sentinel_add(t, s[j].k2, s[j].i2);
    *out = t;
  }
}

// x[i] = i - 2^31: INT_MIN first, increasing.
__global__ void fill_ramp(int32_t* x, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = static_cast<int32_t>(i - (int64_t{1} << 31));
}

// --large's inputs in d_x (n elements), and their answer: "random-planted", random int32
// with INT_MAX planted beyond 2^31 (earlier INT_MAX may occur by chance; the reference
// decides), or "ascending", a ramp whose answer is the last two elements, both beyond 2^31.
Top2 large_input(const std::string& p, int32_t* d_x, int64_t n, uint64_t seed) {
  const int64_t off = int64_t{1} << 31;
  if (p == "ascending") {
    fill_ramp<<<1024, 256>>>(d_x, n);
    CHECK_LAUNCH();
    return {static_cast<int32_t>(n - 1 - off), static_cast<int32_t>(n - 2 - off), n - 1, n - 2};
  }
  const int64_t planted[] = {off + 7, n - 1};
  const int32_t big = INT_MAX;
  sw::fill_ints(d_x, n, seed);
  for (int64_t i : planted)
    CUDA_CHECK(cudaMemcpy(d_x + i, &big, sizeof big, cudaMemcpyHostToDevice));
  std::unique_ptr<int32_t[]> h(new int32_t[n]);
  sw::host_fill_ints(h.get(), n, seed);
  for (int64_t i : planted) h[i] = big;
  return ch13::top2_reference(h.get(), n);
}

}  // namespace

void ch13::Top2Problem::verify(const Session& s) {
  if (large) return check_large(s);
  // Sizes that exercise the unrolled grid-stride loop (more than kUnroll 16-byte
  // loads per thread) and its remainder.
  const std::vector<int64_t> sweep = {
      2, 3, 31, 32, 33, 1025, 4099, 1000003, (int64_t{1} << 24) + 3};
  const bool n_given = s.cli.was_given("--n");
  const std::vector<int64_t> sizes = n_given ? std::vector<int64_t>{n} : sweep;
  const int64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  if (n_given) sw::require_fits(s.gpu, "--n", max_n + 1, sizeof(int32_t), workspace_bytes());
  const uint64_t seed = static_cast<uint64_t>(s.opt.seed);
  sw::DeviceBuffer<int32_t> d_x(max_n + 1);
  sw::DeviceBuffer<Top2> d_out(1);
  std::vector<int32_t> x(max_n + 1);
  for (const int64_t n : sizes) {  // shadows the member
    const std::string at = " n=" + std::to_string(n);
    for (const char* p : kPatterns) {
      make_ints(p, x.data(), n, seed);
      CUDA_CHECK(cudaMemcpy(d_x.get(), x.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
      const Top2 want = top2_reference(x.data(), n);
      s.report.harness_check(same(top2_serial(x.data(), n), want),
                             std::string("cpu-serial ") + p + at);
      check_steps(s, vendor, d_x.get(), n, want, p + at);
    }
    // A start that is not 16-byte aligned: the int4 step must fall back, not misread.
    make_ints("random", x.data(), n + 1, seed + 1);
    CUDA_CHECK(cudaMemcpy(d_x.get(), x.data(), (n + 1) * sizeof(int32_t), cudaMemcpyHostToDevice));
    check_steps(s, vendor, d_x.get() + 1, n, top2_reference(x.data() + 1, n), "misaligned" + at);
  }

  // The seed's INT_MIN sentinel must fail these checks: if it passed, the checks
  // could not catch the bug.
  const std::pair<const char*, int64_t> sentinel_cases[] = {
      {"all-int-min", 33}, {"int-min-second", 2}, {"negative", 1000}};
  for (auto [p, n] :
       sentinel_cases) {  // an array: CUDA 12.4's front end deduces no braced list here
    make_ints(p, x.data(), n, seed);
    CUDA_CHECK(cudaMemcpy(d_x.get(), x.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
    sw::poison(d_out.get(), sizeof(Top2));
    top2_int_min_sentinel<<<1, kSentinelBlock>>>(d_x.get(), n, d_out.get());
    CHECK_LAUNCH();
    const Top2 got = sw::read(d_out.get()), want = top2_reference(x.data(), n);
    const std::string what =
        std::string("the checks catch the INT_MIN sentinel: ") + p + " n=" + std::to_string(n);
    s.report.harness_check(!same(got, want), what,
                           "sentinel gives " + describe(got) + ", want " + describe(want));
  }
}

// More than 2^31 elements: indices beyond int32 must come out right.
void ch13::Top2Problem::check_large(const Session& s) const {
  const int64_t n = kLargeN;
  sw::require_fits(s.gpu, "--large", n, sizeof(int32_t), workspace_bytes());
  sw::DeviceBuffer<int32_t> d_x(n);
  Buffers b;
  for (const char* p : {"random-planted", "ascending"}) {
    const Top2 want = large_input(p, d_x.get(), n, static_cast<uint64_t>(s.opt.seed));
    const uint64_t digest = sw::device_digest(d_x.get(), static_cast<size_t>(n) * sizeof(int32_t));
    const Top2Data data{b.out.get(), &want, d_x.get(), n, /*check_input=*/true, digest};
    for (const Step& st : rows(s, vendor)) {
      const sw::bench::Verdict v =
          sw::bench::check_once(data, st.launch, d_x.get(), n, std::ref(b));
      s.report.check(v.ok, st.name + (" " + std::string(p) + " n=" + std::to_string(n)), v.detail);
    }
  }
}
