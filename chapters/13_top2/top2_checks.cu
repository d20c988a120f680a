// Chapter 13's checks (--verify-only, --large), its CPU reference, what every checked
// run compares (Top2Data, for sw::bench::measure and check_once), the benchmark's
// values, and the seed's INT_MIN-sentinel kernel that the checks must catch. Part of
// the program 13_top2; the versions themselves are in 13_top2.cu.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
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
#include "top2_checks.h"

using ch13::kNoIndex;
using ch13::Top2;

namespace {

constexpr int kRefChunks = 64;  // parallel chunks of the CPU reference
constexpr int kSentinelBlock = 256;
// More than 2^31 elements, not a multiple of the vector width.
constexpr int64_t kLargeN = (int64_t{1} << 31) + (int64_t{1} << 20) + 3;

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

// Every row of the step table on d_x against `want`: one PASS/FAIL line each.
void check_steps(sw::Report& report, const int32_t* d_x, int64_t n, const Top2& want,
                 const std::string& label) {
  for (const ch13::Answer& a : ch13::run_every_step(d_x, n, want))
    report.check(a.ok, a.name + (" " + label), a.detail);
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

}  // namespace

// The first position of the largest key, then the first position of the largest key
// among the others: written independently of insert/merge. Two passes, each split
// over chunks in parallel.
Top2 ch13::top2_reference(const int32_t* x, int64_t n) {
  auto best_except = [&](int64_t skip) {
    std::vector<int32_t> key(kRefChunks);
    std::vector<int64_t> at(kRefChunks, kNoIndex);
    sw::parallel_for(
        kRefChunks,
        [&](int64_t cb, int64_t ce) {
          for (int64_t c = cb; c < ce; ++c) {
            for (int64_t i = n * c / kRefChunks; i < n * (c + 1) / kRefChunks; ++i) {
              if (i == skip) continue;
              if (at[c] < 0 || x[i] > key[c])
                key[c] = x[i], at[c] = i;  // strict: the first of equals
            }
          }
        },
        1);  // the items are chunks: one thread per core
    int32_t k = 0;
    int64_t i = kNoIndex;
    for (int c = 0; c < kRefChunks; ++c)  // chunks in index order: strict > keeps the first
      if (at[c] >= 0 && (i < 0 || key[c] > k)) k = key[c], i = at[c];
    return std::pair<int32_t, int64_t>{k, i};
  };
  const auto first = best_except(kNoIndex);
  const auto second = best_except(first.second);
  return {first.first, second.first, first.second, second.second};
}

std::string ch13::describe(const Top2& t) {
  return "(" + std::to_string(t.k1) + " at " + std::to_string(t.i1) + ", " + std::to_string(t.k2) +
         " at " + std::to_string(t.i2) + ")";
}

void ch13::Values::generate(uint64_t from) {  // the same values on the GPU and on the host
  seed = from;
  sw::fill_ints(d.get(), n, from);
  sw::host_fill_ints(h.get(), n, from);
  want = top2_reference(h.get(), n);
}

void ch13::Top2Data::poison() const { sw::poison(out, sizeof(Top2)); }

sw::bench::Verdict ch13::Top2Data::check() const {
  const Top2 got = sw::read(out);
  if (check_input && sw::device_digest(x, static_cast<size_t>(n) * sizeof(int32_t)) != digest)
    return {false, "input changed: the version wrote into x"};
  if (!same(got, *want)) return {false, "got " + describe(got) + ", want " + describe(*want)};
  return {};
}

bool ch13::Top2Data::reseed(uint64_t from) const {
  if (values) values->generate(from);
  return values != nullptr;
}

uint64_t ch13::Top2Data::seed() const { return values ? values->seed : 0; }

int ch13::verify(sw::Report& report, uint64_t seed) {
  // Sizes that exercise the unrolled grid-stride loop (more than kUnroll 16-byte
  // loads per thread) and its remainder.
  const int64_t sizes[] = {2, 3, 31, 32, 33, 1025, 4099, 1000003, (int64_t{1} << 24) + 3};
  const int64_t max_n = sizes[std::size(sizes) - 1];
  sw::DeviceBuffer<int32_t> d_x(max_n + 1);
  sw::DeviceBuffer<Top2> d_out(1);
  std::vector<int32_t> x(max_n + 1);
  for (int64_t n : sizes) {
    const std::string at = " n=" + std::to_string(n);
    for (const char* p : kPatterns) {
      make_ints(p, x.data(), n, seed);
      CUDA_CHECK(cudaMemcpy(d_x.get(), x.data(), n * sizeof(int32_t), cudaMemcpyHostToDevice));
      const Top2 want = top2_reference(x.data(), n);
      report.check(same(top2_serial(x.data(), n), want), std::string("cpu-serial ") + p + at);
      check_steps(report, d_x.get(), n, want, p + at);
    }
    // A start that is not 16-byte aligned: the int4 step must fall back, not misread.
    make_ints("random", x.data(), n + 1, seed + 1);
    CUDA_CHECK(cudaMemcpy(d_x.get(), x.data(), (n + 1) * sizeof(int32_t), cudaMemcpyHostToDevice));
    check_steps(report, d_x.get() + 1, n, top2_reference(x.data() + 1, n), "misaligned" + at);
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
    report.check(!same(got, want), what,
                 "sentinel gives " + describe(got) + ", want " + describe(want));
  }
  return report.exit_code();
}

// More than 2^31 elements: indices beyond int32 must come out right.
int ch13::verify_large(sw::Report& report, const sw::Gpu& gpu, uint64_t seed) {
  const int64_t n = kLargeN;
  sw::require_fits(gpu, "--large", n, sizeof(int32_t), workspace_bytes());
  sw::DeviceBuffer<int32_t> d_x(n);
  const std::string at = " n=" + std::to_string(n);

  // Random int32 with INT_MAX planted beyond 2^31 (earlier INT_MAX may occur by
  // chance; the reference decides).
  const int64_t planted[] = {(int64_t{1} << 31) + 7, n - 1};
  const int32_t big = INT_MAX;
  sw::fill_ints(d_x.get(), n, seed);
  for (int64_t i : planted)
    CUDA_CHECK(cudaMemcpy(d_x.get() + i, &big, sizeof big, cudaMemcpyHostToDevice));
  {
    std::unique_ptr<int32_t[]> h(new int32_t[n]);
    sw::host_fill_ints(h.get(), n, seed);
    for (int64_t i : planted) h[i] = big;
    check_steps(report, d_x.get(), n, top2_reference(h.get(), n), "random-planted" + at);
  }
  // A ramp: the answer is the last two elements, both beyond 2^31.
  fill_ramp<<<1024, 256>>>(d_x.get(), n);
  CHECK_LAUNCH();
  const int64_t off = int64_t{1} << 31;
  const Top2 want{static_cast<int32_t>(n - 1 - off), static_cast<int32_t>(n - 2 - off), n - 1,
                  n - 2};
  check_steps(report, d_x.get(), n, want, "ascending" + at);
  return report.exit_code();
}
