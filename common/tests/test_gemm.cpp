// The GEMM track's host arithmetic (common/problems/gemm_reference.h): the inputs, the
// entries a check compares, the reference, the error bound and the comparison.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "common/problems/gemm_reference.h"

namespace gm = sw::gemm;

namespace {

// A float dot product of k terms in one of the orders a GPU step may use, then the epilogue
// alpha * s + beta * c0 as the steps write it.
enum class Order { kForward, kBackward, kPairwise, kTiledFma };

float dot(const float* a, const float* b, int64_t k, Order order) {
  switch (order) {
    case Order::kForward: {
      float s = 0;
      for (int64_t p = 0; p < k; ++p) s += a[p] * b[p];
      return s;
    }
    case Order::kBackward: {
      float s = 0;
      for (int64_t p = k - 1; p >= 0; --p) s += a[p] * b[p];
      return s;
    }
    case Order::kPairwise: {
      if (k == 1) return a[0] * b[0];
      const int64_t half = k / 2;
      return dot(a, b, half, order) + dot(a + half, b + half, k - half, order);
    }
    case Order::kTiledFma:  // tiles of 16 products, fused, then the tiles' sums in sequence
    default: {
      float s = 0;
      for (int64_t t = 0; t < k; t += 16) {
        float tile = 0;
        for (int64_t p = t; p < std::min<int64_t>(k, t + 16); ++p)
          tile = std::fmaf(a[p], b[p], tile);
        s += tile;
      }
      return s;
    }
  }
}

struct Case {
  std::vector<float> a, b;  // one row of A, one column of B
  float c0;
};

Case make_case(int64_t k, uint64_t seed) {
  Case c{std::vector<float>(k), std::vector<float>(k), 0};
  gm::fill_input(c.a.data(), k, seed, gm::Operand::kA);
  gm::fill_input(c.b.data(), k, seed, gm::Operand::kB);
  c.c0 = gm::input_value(seed, gm::Operand::kC, 0);
  return c;
}

}  // namespace

TEST_CASE("inputs are uniform in [-1, 1), of both signs, and differ between operands") {
  double sum = 0;
  int negative = 0;
  constexpr int kCount = 100000;
  for (int i = 0; i < kCount; ++i) {
    const float v = gm::input_value(7, gm::Operand::kA, i);
    REQUIRE(v >= -1.0f);
    REQUIRE(v < 1.0f);
    sum += v;
    negative += v < 0;
  }
  CHECK(std::fabs(sum / kCount) < 0.01);  // mean 0
  CHECK(negative > kCount * 0.45);
  CHECK(gm::input_value(7, gm::Operand::kA, 3) != gm::input_value(7, gm::Operand::kB, 3));
  CHECK(gm::input_value(7, gm::Operand::kA, 3) != gm::input_value(8, gm::Operand::kA, 3));
  CHECK(gm::input_value(7, gm::Operand::kA, 3) == gm::input_value(7, gm::Operand::kA, 3));
}

TEST_CASE("the reference of small integers is exact") {
  const float a[3] = {1, 2, 3}, bt[3] = {4, -5, 6};
  gm::Entry e;
  gm::reference_entry(e, a, bt, 3, 2.0, 0.5, 10.0);  // 2 * (4 - 10 + 18) + 0.5 * 10
  CHECK(e.want == 29.0);
  CHECK(e.scale == 2.0 * 32.0 + 5.0);  // |alpha| S + |beta c0|, S = 4 + 10 + 18
  CHECK(e.bound > 0);
  gm::reference_entry(e, a, bt, 3, 1.0, 0.0, NAN);  // beta 0: C0 is not read, NaN or not
  CHECK(e.want == 12.0);
  CHECK(std::isfinite(e.bound));
}

TEST_CASE("every order of float additions stays within the bound; a missing product does not") {
  for (int64_t k : {1, 2, 3, 17, 431, 4095}) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      const Case c = make_case(k, seed);
      for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{-1.5f, 0.75f}}) {
        gm::Entry e;
        gm::reference_entry(e, c.a.data(), c.b.data(), k, alpha, beta, c.c0);
        for (Order order :
             {Order::kForward, Order::kBackward, Order::kPairwise, Order::kTiledFma}) {
          const float s = dot(c.a.data(), c.b.data(), k, order);
          const float got = beta == 0 ? alpha * s : std::fmaf(beta, c.c0, alpha * s);
          CAPTURE(k);
          CAPTURE(seed);
          CHECK(std::fabs(got - e.want) <= e.bound);
        }
        if (k < 2 || k > 1000) continue;  // the bound is the worst case: for large k it is loose
        // The largest product left out (an edge guard that drops the last k): far outside.
        int64_t largest = 0;
        for (int64_t p = 1; p < k; ++p)
          if (std::fabs(c.a[p] * c.b[p]) > std::fabs(c.a[largest] * c.b[largest])) largest = p;
        std::vector<float> a = c.a;
        a[largest] = 0;
        const float s = dot(a.data(), c.b.data(), k, Order::kForward);
        const float got = beta == 0 ? alpha * s : std::fmaf(beta, c.c0, alpha * s);
        CAPTURE(k);
        CAPTURE(seed);
        CHECK(std::fabs(got - e.want) > e.bound);
      }
    }
  }
}

TEST_CASE("small products are checked whole") {
  const gm::Shape s{3, 5, 431};
  const std::vector<gm::Entry> all = gm::checked_entries(s, 1);
  REQUIRE(all.size() == 15);
  CHECK(all.front().row == 0);
  CHECK(all.back().row == 2);
  CHECK(all.back().col == 4);
}

TEST_CASE("large products: the edges whole, one entry in every block, sorted, the same each time") {
  const gm::Shape s{4096, 4095, 4096};
  const std::vector<gm::Entry> e = gm::checked_entries(s, 42);
  std::set<std::pair<int64_t, int64_t>> seen;
  for (const gm::Entry& x : e) {
    REQUIRE(x.row >= 0);
    REQUIRE(x.row < s.m);
    REQUIRE(x.col >= 0);
    REQUIRE(x.col < s.n);
    seen.insert({x.row, x.col});
  }
  CHECK(seen.size() == e.size());  // no entry twice
  for (size_t i = 1; i < e.size(); ++i)
    REQUIRE((e[i - 1].row < e[i].row || (e[i - 1].row == e[i].row && e[i - 1].col < e[i].col)));
  for (int64_t j = 0; j < s.n; ++j) CHECK((seen.count({0, j}) && seen.count({s.m - 1, j})));
  for (int64_t i = 0; i < s.m; ++i) CHECK((seen.count({i, 0}) && seen.count({i, s.n - 1})));
  // kCheckMadds / k = 131072 blocks: of side ceil(sqrt(4096 * 4095 / 131072)) = 12.
  constexpr int64_t kSide = 12;
  std::set<std::pair<int64_t, int64_t>> blocks;
  for (const gm::Entry& x : e) blocks.insert({x.row / kSide, x.col / kSide});
  CHECK(blocks.size() ==
        static_cast<size_t>(((s.m + kSide - 1) / kSide) * ((s.n + kSide - 1) / kSide)));
  CHECK(e.size() < 160000);  // the budget: about kCheckMadds / k entries beside the edges
  const std::vector<gm::Entry> again = gm::checked_entries(s, 42),
                               other = gm::checked_entries(s, 43);
  CHECK(again.size() == e.size());
  bool same = true, differs = false;
  for (size_t i = 0; i < e.size() && i < other.size(); ++i) {
    same = same && again[i].row == e[i].row && again[i].col == e[i].col;
    differs = differs || other[i].row != e[i].row || other[i].col != e[i].col;
  }
  CHECK(same);
  CHECK(differs);
}

TEST_CASE("the comparison finds a wrong entry, an unwritten one and a write past the end") {
  const gm::Shape s{4, 6, 8};
  std::vector<float> a(s.m * s.k), b(s.k * s.n), bt(s.n * s.k), c0(s.m * s.n);
  gm::fill_input(a.data(), a.size(), 3, gm::Operand::kA);
  gm::fill_input(b.data(), b.size(), 3, gm::Operand::kB);
  gm::fill_input(c0.data(), c0.size(), 3, gm::Operand::kC);
  for (int64_t p = 0; p < s.k; ++p)
    for (int64_t j = 0; j < s.n; ++j) bt[j * s.k + p] = b[p * s.n + j];
  std::vector<gm::Entry> e = gm::checked_entries(s, 3);
  gm::reference_entries(e, s, a.data(), bt.data(), c0.data(), 0.5, -2.0);
  constexpr int64_t kGuard = 16;
  std::vector<float> c(s.m * s.n + kGuard);
  std::memset(c.data() + s.m * s.n, 0xFF, kGuard * sizeof(float));  // the poison
  for (const gm::Entry& x : e) c[x.row * s.n + x.col] = static_cast<float>(x.want);
  gm::Comparison r = gm::compare(c.data(), s, kGuard, e);
  CHECK(r.ok());
  CHECK(r.detail.empty());
  CHECK(r.rel_error < 1e-7);

  c[7] += 0.01f;  // wrong
  r = gm::compare(c.data(), s, kGuard, e);
  CHECK(r.wrong == 1);
  CHECK(r.detail.find("C[1][1]") == 0);
  c[7] = static_cast<float>(e[7].want);

  std::memset(&c[9], 0xFF, sizeof(float));  // unwritten: the poison, NaN
  r = gm::compare(c.data(), s, kGuard, e);
  CHECK(r.not_finite == 1);
  CHECK(!r.ok());
  c[9] = static_cast<float>(e[9].want);

  c[s.m * s.n + 3] = 1.0f;  // a write past the end
  r = gm::compare(c.data(), s, kGuard, e);
  CHECK(!r.guard_kept);
  CHECK(r.detail.find("past the end") != std::string::npos);
  std::memset(c.data() + s.m * s.n, 0, kGuard * sizeof(float));  // STEPWISE_POISON=zero's poison
  CHECK(gm::compare(c.data(), s, kGuard, e).ok());
}

// --- 16-bit inputs (chapter 20) ------------------------------------------------------------

namespace {

// The float that fp16 bits h stand for (sign, 5 exponent bits, 10 mantissa bits).
float fp16_value(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  const double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                           : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                            : std::ldexp(1024 + mantissa, exponent - 25);
  return static_cast<float>((h & 0x8000) ? -magnitude : magnitude);
}

float bf16_value(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// x truncated (toward zero) to a multiple of 2^q.
double truncate_to(double x, int q) { return std::trunc(std::ldexp(x, -q)) * std::ldexp(1.0, q); }

// One block operation of a tensor core as the bound models it: the accumulator and `count`
// exact products aligned to the largest, each truncated 24 bits below its leading bit,
// added exactly, the sum truncated to 24 significant bits.
float block_add(float acc, const double* products, int64_t count) {
  double largest = std::fabs(acc);
  for (int64_t i = 0; i < count; ++i) largest = std::max(largest, std::fabs(products[i]));
  if (largest == 0) return acc;
  int e = 0;
  std::frexp(largest, &e);  // largest in [2^(e-1), 2^e)
  double sum = truncate_to(acc, e - 24);
  for (int64_t i = 0; i < count; ++i) sum += truncate_to(products[i], e - 24);  // exact
  if (sum == 0) return 0.0f;
  std::frexp(sum, &e);
  return static_cast<float>(truncate_to(sum, e - 24));
}

// A dot product of k terms in blocks of `block` products, each block one block_add.
float tensor_dot(const float* a, const float* b, int64_t k, int64_t block) {
  float acc = 0;
  std::vector<double> products(block);
  for (int64_t t = 0; t < k; t += block) {
    const int64_t count = std::min(block, k - t);
    for (int64_t i = 0; i < count; ++i) products[i] = static_cast<double>(a[t + i]) * b[t + i];
    acc = block_add(acc, products.data(), count);
  }
  return acc;
}

}  // namespace

TEST_CASE("rounding to bf16 and fp16: every value of the type is kept, ties go to even") {
  for (const gm::InputType t : {gm::InputType::kBf16, gm::InputType::kFp16}) {
    for (uint32_t h = 0; h <= 0xFFFF; ++h) {
      const float v = t == gm::InputType::kBf16 ? bf16_value(static_cast<uint16_t>(h))
                                                : fp16_value(static_cast<uint16_t>(h));
      if (std::isnan(v)) continue;
      CAPTURE(h);
      REQUIRE(gm::round_to(t, v) == v);
      REQUIRE(gm::half_bits(t, v) == h);
    }
  }
  using gm::InputType;
  CHECK(gm::round_to(InputType::kBf16, 1 + std::ldexp(1.0f, -8)) == 1.0f);  // tie: even is 1
  CHECK(gm::round_to(InputType::kBf16, 1 + 3 * std::ldexp(1.0f, -8)) == 1 + std::ldexp(1.0f, -6));
  CHECK(gm::round_to(InputType::kBf16, 1 + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) ==
        1 + std::ldexp(1.0f, -7));
  CHECK(gm::round_to(InputType::kBf16, -0.3f) == -0.30078125f);
  CHECK(gm::half_bits(InputType::kBf16, -0.30078125f) == 0xBE9A);
  CHECK(gm::round_to(InputType::kFp16, 1 + std::ldexp(1.0f, -11)) == 1.0f);
  CHECK(gm::round_to(InputType::kFp16, 1 + 3 * std::ldexp(1.0f, -11)) == 1 + std::ldexp(1.0f, -9));
  CHECK(gm::round_to(InputType::kFp16, -0.3f) == -0.300048828125f);
  CHECK(gm::half_bits(InputType::kFp16, -0.300048828125f) == 0xB4CD);
  CHECK(gm::round_to(InputType::kFp16, 65519.0f) == 65504.0f);
  CHECK(std::isinf(gm::round_to(InputType::kFp16, 65520.0f)));
  CHECK(gm::round_to(InputType::kFp16, std::ldexp(1.0f, -25)) == 0.0f);  // tie: even is 0
  CHECK(gm::round_to(InputType::kFp16, 3 * std::ldexp(1.0f, -26)) == std::ldexp(1.0f, -24));
  CHECK(gm::round_to(InputType::kFp32, 0.1f) == 0.1f);
  // The generator's values: within half a unit in the last place of the type.
  for (int i = 0; i < 10000; ++i) {
    const float x = gm::input_value(5, gm::Operand::kA, i);
    const double ulp16 = std::ldexp(1.0, std::max(std::ilogb(x) - 10, -24));
    CHECK(std::fabs(gm::round_to(InputType::kFp16, x) - x) <= ulp16 / 2);
    CHECK(std::fabs(gm::round_to(InputType::kBf16, x) - x) <= std::ldexp(1.0, std::ilogb(x) - 8));
  }
}

TEST_CASE(
    "tensor-core sums (blocks, truncated) stay within the 16-bit bound; a missing product does "
    "not") {
  for (const gm::InputType t : {gm::InputType::kBf16, gm::InputType::kFp16}) {
    for (int64_t k : {1, 2, 3, 17, 431, 4095}) {
      for (uint64_t seed = 1; seed <= 10; ++seed) {
        Case c = make_case(k, seed);
        for (float& x : c.a) x = gm::round_to(t, x);
        for (float& x : c.b) x = gm::round_to(t, x);
        for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{-1.5f, 0.75f}}) {
          gm::Entry e;
          gm::reference_entry(e, c.a.data(), c.b.data(), k, alpha, beta, c.c0, t);
          auto epilogue = [&](float s) {
            return beta == 0 ? alpha * s : std::fmaf(beta, c.c0, alpha * s);
          };
          CAPTURE(k);
          CAPTURE(seed);
          for (int64_t block : {1, 4, 8, 16})
            CHECK(std::fabs(epilogue(tensor_dot(c.a.data(), c.b.data(), k, block)) - e.want) <=
                  e.bound);
          CHECK(std::fabs(epilogue(dot(c.a.data(), c.b.data(), k, Order::kForward)) - e.want) <=
                e.bound);
          if (k < 2 || k > 1000) continue;  // six times the fp32 bound: loose for large k
          int64_t largest = 0;
          for (int64_t p = 1; p < k; ++p)
            if (std::fabs(c.a[p] * c.b[p]) > std::fabs(c.a[largest] * c.b[largest])) largest = p;
          std::vector<float> a = c.a;
          a[largest] = 0;
          CHECK(std::fabs(epilogue(tensor_dot(a.data(), c.b.data(), k, 8)) - e.want) > e.bound);
        }
      }
    }
  }
  // Truncation at its worst: in one block, 15 products just under 2^-23 after one of 1 are
  // dropped whole, an error of almost 15 u' = 30 u, past the fp32 bound of 16 products
  // (gamma_18 S, about 18 u) and inside the tensor-core bound (about 50 u' S).
  constexpr int64_t kK = 16;
  std::vector<float> a(kK, std::ldexp(1.0f, -23) - std::ldexp(1.0f, -31)), b(kK, 1.0f);
  a[0] = 1.0f;
  REQUIRE(gm::round_to(gm::InputType::kBf16, a[1]) == a[1]);
  gm::Entry e;
  gm::reference_entry(e, a.data(), b.data(), kK, 1.0, 0.0, 0.0, gm::InputType::kBf16);
  const float got = tensor_dot(a.data(), b.data(), kK, kK);
  CHECK(got == 1.0f);
  CHECK(std::fabs(got - e.want) <= e.bound);
  CHECK(std::fabs(got - e.want) > gm::entry_bound(kK, 1.0, e.scale, 0.0, 0.0));  // fp32's
}
