// Chapter 21's host arithmetic (common/hopper/arith.h, freivalds.h): the 128-byte swizzle,
// the wgmma descriptor's bit fields, the accumulator layout, the tensor-map parameters and
// their limits, box starts, the tile order, and Freivalds' check; and the power window's
// average (common/gpu_sensors.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "common/gpu_sensors.h"
#include "common/hopper/arith.h"
#include "common/hopper/freivalds.h"

namespace hp = sw::hopper;

TEST_CASE("the 128-byte swizzle permutes 16-byte chunks within each row, XOR row % 8") {
  for (uint32_t atom = 0; atom < 3; ++atom) {
    std::set<uint32_t> seen;
    for (uint32_t off = 0; off < 1024; ++off) {
      const uint32_t at = atom * 1024 + off, to = hp::swizzle128(at);
      CHECK(to / 128 == at / 128);  // the same row
      CHECK(to % 16 == at % 16);    // the same byte within its chunk
      seen.insert(to);
    }
    CHECK(seen.size() == 1024);
    CHECK(*seen.begin() == atom * 1024);
  }
  // element (row, col) of a 64-wide bf16 tile: chunk col / 8 moves to (col / 8) ^ (row % 8)
  CHECK(hp::swizzled_offset(0, 0) == 0);
  CHECK(hp::swizzled_offset(1, 0) == 128 + 16);
  CHECK(hp::swizzled_offset(3, 9) == 3 * 128 + ((1 ^ 3) * 16) + 2);
  CHECK(hp::swizzled_offset(8, 0) == 8 * 128);  // the pattern repeats every 8 rows
  // the 8 rows of one chunk column land in 8 different chunks: no bank conflict
  std::set<uint32_t> chunks;
  for (uint32_t r = 0; r < 8; ++r) chunks.insert(hp::swizzled_offset(r, 0) % 128 / 16);
  CHECK(chunks.size() == 8);
}

TEST_CASE("the wgmma descriptor: address >> 4, leading 16, stride 1024, 128-byte swizzle") {
  const uint32_t tile = 0x1C400;  // 1024-byte aligned, below 2^18
  const uint64_t d = hp::matrix_descriptor(tile);
  const hp::DescriptorFields f = hp::descriptor_fields(d);
  CHECK(f.start_address == tile);
  CHECK(f.leading_bytes == 16);
  CHECK(f.stride_bytes == 1024);
  CHECK(f.base_offset == 0);
  CHECK(f.swizzle_mode == 1);  // 1: 128-byte (sm_90's encoding)
  CHECK((d & 0x3FFF) == (tile >> 4));
  CHECK(((d >> 32) & 0x3FFF) == 64);
  CHECK((d >> 62) == 1);
  CHECK(((d >> 14) & 3) == 0);  // reserved bits stay 0
  CHECK(((d >> 46) & 7) == 0);
  CHECK(((d >> 52) & 0x3FF) == 0);
  // k-steps 0..3 of a 64-wide tile: 32 bytes apart, all inside the first 128-byte row
  for (int kk = 0; kk < 4; ++kk) {
    const uint64_t dk = hp::matrix_descriptor(hp::k_step_address(tile, kk));
    CHECK(hp::descriptor_fields(dk).start_address == tile + 32u * kk);
    CHECK((dk >> 16) == (d >> 16));  // only the address moves
  }
}

TEST_CASE("the accumulator layout of m64nNk16 covers the 64 x N tile once") {
  for (const int n : {128, 256}) {
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < n / 2; ++i) {
        const int r = hp::accumulator_row(t, i), c = hp::accumulator_col(t, i);
        CHECK(r >= 0);
        CHECK(r < 64);
        CHECK(c >= 0);
        CHECK(c < n);
        seen.insert({r, c});
        if (i % 2 == 1) {  // entries i - 1 and i: one row, adjacent columns (an 8-byte pair)
          CHECK(hp::accumulator_row(t, i - 1) == r);
          CHECK(hp::accumulator_col(t, i - 1) + 1 == c);
          CHECK((c - 1) % 2 == 0);
        }
      }
    CHECK(seen.size() == static_cast<size_t>(64 * n));
  }
  CHECK(hp::accumulator_row(37, 2) == 16 + 1 + 8);  // warp 1, lane 5
  CHECK(hp::accumulator_col(37, 5) == 8 + 2 + 1);
}

TEST_CASE("tensor-map parameters: dims, stride, box, and the limits") {
  const hp::TileMapParams p = hp::tile_map_params(4096, 4000, 4000, 128, 64);
  CHECK(p.dims[0] == 4000);  // innermost: the columns (k)
  CHECK(p.dims[1] == 4096);
  CHECK(p.stride_bytes[0] == 8000);
  CHECK(p.box[0] == 64);
  CHECK(p.box[1] == 128);
  CHECK(hp::box_bytes(p) == 16384);
  CHECK(hp::tile_map_problem(p).empty());
  CHECK(hp::tile_map_problem(hp::tile_map_params(100, 431, 432, 256, 64)).empty());
  // k = 431 with ld = 431: 862-byte rows, not a multiple of 16
  CHECK_FALSE(hp::tile_map_problem(hp::tile_map_params(100, 431, 431, 128, 64)).empty());
  CHECK_FALSE(hp::tile_map_problem(hp::tile_map_params(100, 64, 64, 512, 64)).empty());  // box 512
  CHECK_FALSE(hp::tile_map_problem(hp::tile_map_params(100, 128, 128, 128, 128)).empty());  // 256 B
  CHECK_FALSE(hp::tile_map_problem(hp::tile_map_params(100, 128, 64, 128, 64)).empty());  // overlap
  CHECK_FALSE(hp::tile_map_problem(hp::tile_map_params(0, 128, 128, 128, 64)).empty());
  CHECK(hp::tile_map_problem(hp::tile_map_params(65536, 32768, 32768, 128, 64)).empty());
}

TEST_CASE("C's fp32 tensor map (chapter 21, step 8): boxes of 64 x 32, rows of 16-byte multiples") {
  const hp::TileMapParams p = hp::tile_map_params(4096, 4096, 4096, 64, 32, 4);
  CHECK(p.stride_bytes[0] == 16384);
  CHECK(hp::box_bytes(p) == 8192);
  CHECK(hp::tile_map_problem(p).empty());
  CHECK(hp::tile_map_problem(hp::tile_map_params(4095, 4100, 4100, 64, 32, 4)).empty());
  // n = 4097: 16,388-byte rows, which the copy engine cannot address (step 8 stores directly)
  CHECK_FALSE(hp::tile_map_problem(hp::tile_map_params(4095, 4097, 4097, 64, 32, 4)).empty());
  CHECK_FALSE(hp::tile_map_problem(hp::tile_map_params(64, 64, 64, 64, 64, 4)).empty());  // 256 B
}

TEST_CASE("step 8's boxes: a warpgroup's 16 entries a thread fill each 64 x 32 box once") {
  constexpr int kHalfN = 128, kBoxN = 32, kPerBox = kHalfN / (2 * kHalfN / kBoxN);
  for (int q = 0; q < 2 * kHalfN / kBoxN; ++q) {
    std::set<uint32_t> words;  // the 4-byte words written in the box
    for (int t = 0; t < 128; ++t)
      for (int i = q * kPerBox; i < (q + 1) * kPerBox; i += 2) {
        const int row = hp::accumulator_row(t, i), col = hp::accumulator_col(t, i) - q * kBoxN;
        REQUIRE(col >= 0);
        REQUIRE(col + 1 < kBoxN);
        const uint32_t at = hp::swizzled_offset_fp32(row, col);
        CHECK(at % 8 == 0);               // a float2 store
        CHECK(at / 16 == (at + 4) / 16);  // both floats in one 16-byte chunk
        words.insert(at / 4);
        words.insert(at / 4 + 1);
      }
    CHECK(words.size() == 64 * kBoxN);
    CHECK(*words.rbegin() == 64 * kBoxN - 1);
  }
}

TEST_CASE("a box's start stays inside the matrix") {
  CHECK(hp::box_start(0, 10) == 0);
  CHECK(hp::box_start(9, 10) == 9);
  CHECK(hp::box_start(128, 100) == 99);
  CHECK(hp::box_start(256, 257) == 256);
}

TEST_CASE("the tile order takes every tile exactly once, in bands of `group` rows") {
  for (const int tiles_m : {1, 3, 8, 17, 32})
    for (const int tiles_n : {1, 5, 16})
      for (const int group : {1, 2, 8}) {
        std::set<std::pair<int, int>> seen;
        const int64_t count = static_cast<int64_t>(tiles_m) * tiles_n;
        for (int64_t i = 0; i < count; ++i) {
          const hp::TileIndex t = hp::tile_of(i, tiles_m, tiles_n, group);
          REQUIRE(t.m >= 0);
          REQUIRE(t.m < tiles_m);
          REQUIRE(t.n >= 0);
          REQUIRE(t.n < tiles_n);
          CHECK(t.m / group == i / (static_cast<int64_t>(group) * tiles_n));  // its band
          seen.insert({t.m, t.n});
        }
        CHECK(seen.size() == static_cast<size_t>(count));
      }
  // group 1: row after row
  CHECK(hp::tile_of(7, 4, 5, 1).m == 1);
  CHECK(hp::tile_of(7, 4, 5, 1).n == 2);
  // group 8 of 32 x 16: the first 8 indices go down column 0
  for (int i = 0; i < 8; ++i) {
    CHECK(hp::tile_of(i, 32, 16, 8).m == i);
    CHECK(hp::tile_of(i, 32, 16, 8).n == 0);
  }
}

TEST_CASE("step 9's tail: every k-tile of the last wave's units taken once, pieces in order") {
  for (const int workers : {1, 2, 7, 66})
    for (const int64_t units : {int64_t{1}, int64_t{5}, int64_t{66}, int64_t{72}, int64_t{256},
                                int64_t{1024}, int64_t{1057}})
      for (const int k_tiles : {1, 2, 3, 9, 64, 128}) {
        CAPTURE(workers);
        CAPTURE(units);
        CAPTURE(k_tiles);
        const hp::TailPlan plan = hp::tail_plan(units, workers, k_tiles);
        REQUIRE(plan.whole + plan.tail == units);
        if (plan.tail > 0) REQUIRE(plan.whole % workers == 0);  // whole waves, then the cut ones
        if (plan.tail == 0) {
          CHECK(plan.share == 0);
        } else {
          CHECK(plan.tail < workers);
          CHECK(plan.share < k_tiles);
          CHECK(plan.share * hp::kMaxPieces >= k_tiles);  // no piece shorter than a quarter unit
        }
        // Each (unit, k-tile) of the tail once; each unit's pieces 0 .. count-1, in order of k.
        std::map<int64_t, std::vector<hp::Piece>> by_unit;
        int64_t taken = 0;
        for (int w = 0; w < workers; ++w) {
          hp::Piece pieces[2];
          const int n = hp::tail_pieces(plan, k_tiles, w, pieces);
          REQUIRE(n >= 0);
          REQUIRE(n <= 2);
          if (n == 2) CHECK(pieces[0].index == 0);  // the piece that waits for nobody first
          for (int i = 0; i < n; ++i) {
            const hp::Piece& p = pieces[i];
            REQUIRE(p.unit >= plan.whole);
            REQUIRE(p.unit < units);
            REQUIRE(p.k_begin >= 0);
            REQUIRE(p.k_begin < p.k_end);
            REQUIRE(p.k_end <= k_tiles);
            taken += p.k_end - p.k_begin;
            by_unit[p.unit].push_back(p);
          }
        }
        CHECK(taken == plan.tail * k_tiles);
        CHECK(by_unit.size() == static_cast<size_t>(plan.tail));
        for (auto& [unit, pieces] : by_unit) {
          std::sort(pieces.begin(), pieces.end(),
                    [](const hp::Piece& a, const hp::Piece& b) { return a.k_begin < b.k_begin; });
          int next = 0;
          for (size_t i = 0; i < pieces.size(); ++i) {
            CHECK(pieces[i].k_begin == next);  // contiguous, no overlap
            next = pieces[i].k_end;
            CHECK(pieces[i].index == static_cast<int>(i));
            CHECK(pieces[i].count == static_cast<int>(pieces.size()));
          }
          CHECK(next == k_tiles);
          CHECK(static_cast<int>(pieces.size()) <= hp::kMaxPieces + 1);
        }
      }
  // The waits: each worker does its pieces in its order, a piece i > 0 only once piece i - 1
  // of its unit is done. Rounds of "every worker finishes what it can": all done, and within
  // kMaxPieces + 2 rounds (the piece that starts a unit first; the other order chains the
  // waits through the workers).
  for (const auto& [units, workers, k_tiles] :
       {std::tuple{256, 66, 64}, std::tuple{1024, 66, 128}, std::tuple{4096, 66, 256},
        std::tuple{72, 66, 16}, std::tuple{67, 66, 64}, std::tuple{131, 66, 9}}) {
    CAPTURE(units);
    const hp::TailPlan plan = hp::tail_plan(units, workers, k_tiles);
    std::vector<std::vector<hp::Piece>> todo(workers);
    for (int w = 0; w < workers; ++w) {
      hp::Piece pieces[2];
      todo[w].assign(pieces, pieces + hp::tail_pieces(plan, k_tiles, w, pieces));
    }
    std::map<int64_t, int> done;  // unit: pieces done
    std::vector<size_t> next(workers, 0);
    int rounds = 0;
    for (bool moved = true; moved; ++rounds) {
      moved = false;
      std::map<int64_t, int> now = done;
      for (int w = 0; w < workers; ++w)
        if (next[w] < todo[w].size() && todo[w][next[w]].index == done[todo[w][next[w]].unit]) {
          ++now[todo[w][next[w]].unit];
          ++next[w];
          moved = true;
        }
      done = now;
    }
    for (int w = 0; w < workers; ++w) CHECK(next[w] == todo[w].size());  // no wait forever
    CHECK(rounds <= hp::kMaxPieces + 2);
  }
  // 8192^3 on 66 clusters: 1024 units of 128 k-tiles, 15 whole waves, 34 units cut in runs of 66
  const hp::TailPlan p = hp::tail_plan(1024, 66, 128);
  CHECK(p.whole == 990);
  CHECK(p.tail == 34);
  CHECK(p.share == 66);
}

namespace {
// A small product and its exact result (in double, rounded to float like a correct GPU).
struct Small {
  int64_t m = 7, n = 9, k = 13;
  std::vector<float> a, bt, c;
  Small() : a(m * k), bt(n * k), c(m * n) {
    for (int64_t i = 0; i < m * k; ++i) a[i] = static_cast<float>((i * 37 % 17) - 8) / 8;
    for (int64_t i = 0; i < n * k; ++i) bt[i] = static_cast<float>((i * 11 % 13) - 6) / 4;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += static_cast<double>(a[i * k + p]) * bt[j * k + p];
        c[i * n + j] = static_cast<float>(s);
      }
  }
};
}  // namespace

TEST_CASE("Freivalds' check passes a right product and fails a wrong one") {
  Small s;
  CHECK(hp::freivalds(s.c.data(), s.a.data(), s.bt.data(), s.m, s.n, s.k, 1).empty());
  Small wrong = s;
  wrong.c[3 * s.n + 4] += 1.0f;  // one entry off by far more than the bound
  const std::string why = hp::freivalds(wrong.c.data(), s.a.data(), s.bt.data(), s.m, s.n, s.k, 1);
  CHECK(why.find("row 3") != std::string::npos);
  Small nan = s;
  nan.c[5] = NAN;
  CHECK_FALSE(hp::freivalds(nan.c.data(), s.a.data(), s.bt.data(), s.m, s.n, s.k, 1).empty());
  Small zero = s;  // a row never written (zeros where the product is not)
  for (int64_t j = 0; j < s.n; ++j) zero.c[2 * s.n + j] = 0;
  CHECK_FALSE(hp::freivalds(zero.c.data(), s.a.data(), s.bt.data(), s.m, s.n, s.k, 7).empty());
}

TEST_CASE("a power window's average: delta energy over delta time, NaN where it cannot tell") {
  const sw::EnergyReading before{1000.0, 50.0};
  CHECK(sw::average_power_w(before, {1150.0, 50.5}) == doctest::Approx(300.0));
  CHECK(std::isnan(sw::average_power_w(before, {1000.0, 50.5})));       // the counter did not move
  CHECK(std::isnan(sw::average_power_w(before, {1010.0, 50.01})));      // 10 ms: too short
  CHECK(std::isnan(sw::average_power_w({NAN, 50.0}, {1150.0, 50.5})));  // no counter
}
