// The plan of chapter 21's --sweep (sweep.h): the squares 1024 to 16384, the goal's shapes
// 4096^3 and 8192^3, shapes with a side of one or two tiles, and for each of m, n and k a
// shape where it is no multiple of the tile (128, 256, 64), shapes whose units (two tiles of
// 128 x 256) fill whole waves of 66 clusters; every side within --m's range, no shape twice.
#include <doctest/doctest.h>

#include <set>
#include <tuple>

#include "chapters/21_hopper_gemm/sweep.h"
#include "common/problems/gemm.h"

namespace gm = sw::gemm;

TEST_CASE("the sweep: squares, the goal's shapes, skinny and odd shapes, each once") {
  const std::vector<gm::Shape> shapes = ch21::sweep_shapes();
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  std::set<int64_t> squares;
  bool odd_m = false, odd_n = false, odd_k = false, skinny_m = false, skinny_n = false;
  int whole_waves = 0;
  for (const gm::Shape& s : shapes) {
    for (const int64_t side : {s.m, s.n, s.k}) {
      CHECK(side >= 1);
      CHECK(side <= gm::kMaxSide);
    }
    CHECK(seen.insert({s.m, s.n, s.k}).second);
    if (s.m == s.n && s.n == s.k) squares.insert(s.m);
    odd_m = odd_m || s.m % 128 != 0;
    odd_n = odd_n || s.n % 256 != 0;
    odd_k = odd_k || s.k % 64 != 0;
    skinny_m = skinny_m || (s.m <= 256 && s.n >= 4096);
    skinny_n = skinny_n || (s.n <= 256 && s.m >= 4096);
    const int64_t units = (s.m + 255) / 256 * ((s.n + 255) / 256);
    if (s.m % 256 == 0 && s.n % 256 == 0 && units >= 4 * 66 && units % 66 == 0) ++whole_waves;
  }
  CHECK(squares == std::set<int64_t>{1024, 2048, 4096, 8192, 16384});
  CHECK(odd_m);
  CHECK(odd_n);
  CHECK(odd_k);
  CHECK(skinny_m);
  CHECK(skinny_n);
  CHECK(whole_waves == 2);
}
