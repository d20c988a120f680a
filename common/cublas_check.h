// CUBLAS_CHECK(expr): like CUDA_CHECK, for cuBLAS calls.
#pragma once

#include <cublas_v2.h>

#include <cstdio>
#include <cstdlib>

#define CUBLAS_CHECK(expr)                                                         \
  do {                                                                             \
    cublasStatus_t sw_st_ = (expr);                                                \
    if (sw_st_ != CUBLAS_STATUS_SUCCESS) {                                         \
      std::fprintf(stderr, "cuBLAS error: %s failed at %s:%d: %s\n", #expr, __FILE__, \
                   __LINE__, cublasGetStatusString(sw_st_));                       \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)
