// Chapter 03's finish, reused by chapters 04 and 05: launch the kernel again over
// the block sums until one value is left, so the whole sum stays on the GPU (the
// paper's recursive launches). Each launcher writes the loop, its <<<>>> inside:
//
//   for (ch03::Pass p(s, kBlock); !p.done(); p.next()) {
//     reduce_sequential<<<rd::grid_size(p.blocks), kBlock>>>(p.in, p.out, p.count);
//     CHECK_LAUNCH();
//   }
//
// Pass says where each launch reads and writes, and how many blocks it takes.
#pragma once

#include <cstdint>

#include "common/cuda_utils.cuh"
#include "common/problems/reduce.h"

namespace ch03 {

// One pass of a kernel whose blocks each turn per_block values into one sum: the
// first pass reads s.x; each later one the block sums of the pass before, until a
// single block writes the sum to s.out. A pass never reads the buffer it writes:
// the block sums alternate between s.partials and s.partials2.
struct Pass {
  Pass(const sw::reduce::Sum& s, int64_t per_block) : s(s), per_block(per_block) { aim(); }

  bool done() const { return count == 0; }  // after the pass of a single block
  void next() {                             // on to the pass over this one's block sums
    in = out;
    count = blocks == 1 ? 0 : blocks;
    ++index;
    aim();
  }

  const sw::reduce::Sum& s;
  int64_t per_block;
  int index = 0;
  const float* in = s.x;  // this pass reads `count` values of `in`
  int64_t count = s.n;
  int64_t blocks = 0;  // and its blocks write one sum each to `out`
  float* out = nullptr;

 private:
  void aim() {
    blocks = sw::ceil_div(count, per_block);
    out = blocks == 1 ? s.out : index % 2 == 0 ? s.partials : s.partials2;
  }
};

// How many passes over n values: the error bound counts the tree of every pass.
inline int64_t passes(int64_t n, int64_t per_block) {
  int64_t p = 1;
  for (int64_t count = n; count > per_block; count = sw::ceil_div(count, per_block)) ++p;
  return p;
}

}  // namespace ch03
