// cuBLAS for every chapter: CUBLAS_CHECK(expr), like CUDA_CHECK, and sw::Blas,
// the one cuBLAS handle class.
//
//   const sw::Blas blas;                                    // cublasCreate
//   CUBLAS_CHECK(cublasSgeam_64(blas.get(), ...));          // cublasDestroy on scope exit
#pragma once

#include <cublas_v2.h>

#include <cstdio>
#include <cstdlib>

#define CUBLAS_CHECK(expr)                                                                      \
  do {                                                                                          \
    cublasStatus_t sw_st_ = (expr);                                                             \
    if (sw_st_ != CUBLAS_STATUS_SUCCESS) {                                                      \
      std::fprintf(stderr, "cuBLAS error: %s failed at %s:%d: %s\n", #expr, __FILE__, __LINE__, \
                   cublasGetStatusString(sw_st_));                                              \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

namespace sw {

// A cuBLAS handle, created with the object and destroyed with it. Settings such
// as the pointer mode belong to the handle: set them on your own Blas.
class Blas {
 public:
  Blas() { CUBLAS_CHECK(cublasCreate(&handle_)); }
  ~Blas() { cublasDestroy(handle_); }
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace sw
