// The shapes of chapter 21's --sweep, reported whole, including where cuBLASLt wins: the
// squares from 1024 to 16384 (one wave of tiles or less up to 64 waves), skinny products
// (one side of 256: few tiles, or a short k: the epilogue's share grows), a long k, and odd
// shapes (no side a multiple of a tile: partial tiles on every edge), and two shapes whose
// units fill whole waves of an H100's or H200's 66 clusters (1056 and 528 units of two
// 128 x 256 tiles: no last wave with clusters idle).
#pragma once

#include <vector>

#include "common/problems/gemm_reference.h"

namespace ch21 {

inline std::vector<sw::gemm::Shape> sweep_shapes() {
  return {
      {1024, 1024, 1024},  {2048, 2048, 2048},    {4096, 4096, 4096},  // squares
      {8192, 8192, 8192},  {16384, 16384, 16384},                      //
      {256, 8192, 8192},   {8192, 256, 8192},     {8192, 8192, 256},   // skinny
      {1024, 1024, 16384},                                             // a long k
      {4095, 4097, 4099},  {3000, 5000, 2000},    {8191, 8193, 1000},  // odd
      {8448, 8192, 8192},  {4096, 8448, 4096},                         // whole waves
  };
}

}  // namespace ch21
