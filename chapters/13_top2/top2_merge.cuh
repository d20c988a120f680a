// Chapter 13: the top-2 of a multiset. The empty top-2, the ranking of two elements, the
// merge of two top-2s and the insert of one element, on the host and the device: the CPU
// baseline (top2_problem.cu), every step (13_top2.cu) and CUB's operator (top2_cub.cu)
// use the same ones: inline functions only, included at the top of each.
#pragma once

#include <cstdint>

#include "top2_problem.h"

namespace ch13 {

__host__ __device__ constexpr Top2 empty_top2() { return {0, 0, kNoIndex, kNoIndex}; }

// Does element (ka, ia) rank above (kb, ib)? Larger key first, then smaller index;
// anything ranks above an empty slot.
__host__ __device__ __forceinline__ bool ranks_above(int32_t ka, int64_t ia, int32_t kb,
                                                     int64_t ib) {
  return ia >= 0 && (ib < 0 || ka > kb || (ka == kb && ia < ib));
}

// The top-2 of the union of two disjoint sets.
__host__ __device__ __forceinline__ Top2 merge(const Top2& a, const Top2& b) {
  Top2 r;
  if (ranks_above(a.k1, a.i1, b.k1, b.i1)) {  // a's first wins; second: a's second or b's first
    r.k1 = a.k1, r.i1 = a.i1;
    const bool a2 = ranks_above(a.k2, a.i2, b.k1, b.i1);
    r.k2 = a2 ? a.k2 : b.k1, r.i2 = a2 ? a.i2 : b.i1;
  } else {
    r.k1 = b.k1, r.i1 = b.i1;
    const bool a1 = ranks_above(a.k1, a.i1, b.k2, b.i2);
    r.k2 = a1 ? a.k1 : b.k2, r.i2 = a1 ? a.i1 : b.i2;
  }
  return r;
}

// Adds element (k, i). Precondition: i is larger than every index already in t
// (true in a grid-stride pass), so an equal key ranks below and strict > suffices.
__host__ __device__ __forceinline__ void insert(Top2& t, int32_t k, int64_t i) {
  if (t.i2 < 0 || k > t.k2) {  // usually false once both slots are full
    if (t.i1 < 0 || k > t.k1) {
      t.k2 = t.k1, t.i2 = t.i1;
      t.k1 = k, t.i1 = i;
    } else {
      t.k2 = k, t.i2 = i;
    }
  }
}

}  // namespace ch13
