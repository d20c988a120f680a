// A 2-D tensor map (CUtensorMap, what the copy engine reads a tile through), encoded by the
// driver's cuTensorMapEncodeTiled. The program does not link the driver library: the
// function's address comes from the runtime (cudaGetDriverEntryPointByVersion, the
// versioned form of cudaGetDriverEntryPoint), so a machine without a GPU builds and tests,
// and <cuda.h> is used for its types only. The parameters come from tile_map_params
// (arith.h), which the host tests check against the driver's limits.
//
//   const CUtensorMap a_map = sw::hopper::encode_tile_map(ptr, rows, cols, ld, 128, 64);
//   kernel<<<...>>>(a_map, ...);  // a `const __grid_constant__ CUtensorMap` parameter
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/hopper/arith.h"

namespace sw::hopper {

// The signature of cuTensorMapEncodeTiled (CUDA driver API, "Tensor Map Object Management").
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

constexpr unsigned kEncodeSinceVersion = 12000;  // cuTensorMapEncodeTiled came with CUDA 12.0

inline EncodeTiled encode_tiled() {
  static EncodeTiled fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t e = cudaGetDriverEntryPointByVersion(
        "cuTensorMapEncodeTiled", &p, kEncodeSinceVersion, cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || !p) {
      std::fprintf(stderr, "error: the driver has no cuTensorMapEncodeTiled (%s)\n",
                   cudaGetErrorString(e));
      std::exit(1);
    }
    return reinterpret_cast<EncodeTiled>(p);
  }();
  return fn;
}

// The map of a row-major matrix at `base` (bf16, or fp32 for C), rows x cols, rows row_stride
// elements apart, moved in boxes of box_rows x box_cols with the 128-byte swizzle; elements
// outside the matrix read as zeros (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE fills zeros) and are
// not written by a store. Exits 1 with the reason when the parameters break a limit or the
// driver refuses them.
inline CUtensorMap encode_tile_map(const void* base, uint64_t rows, uint64_t cols,
                                   uint64_t row_stride, uint32_t box_rows, uint32_t box_cols,
                                   CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16) {
  const uint32_t bytes = type == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 ? 4 : kElementBytes;
  const TileMapParams p = tile_map_params(rows, cols, row_stride, box_rows, box_cols, bytes);
  const std::string why = tile_map_problem(p);
  if (!why.empty() || reinterpret_cast<uintptr_t>(base) % kStrideAlign != 0) {
    std::fprintf(stderr, "error: tensor map of %llux%llu: %s\n",
                 static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols),
                 why.empty() ? "the base is not 16-byte aligned" : why.c_str());
    std::exit(1);
  }
  CUtensorMap map{};
  const cuuint64_t dims[2] = {p.dims[0], p.dims[1]};
  const cuuint64_t strides[1] = {p.stride_bytes[0]};
  const cuuint32_t box[2] = {p.box[0], p.box[1]};
  const cuuint32_t element_strides[2] = {p.element_strides[0], p.element_strides[1]};
  const CUresult r =
      encode_tiled()(&map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "error: cuTensorMapEncodeTiled failed (CUresult %d)\n",
                 static_cast<int>(r));
    std::exit(1);
  }
  return map;
}

}  // namespace sw::hopper
