// Error checking for CUDA calls and kernel launches.
//
//   CUDA_CHECK(cudaMalloc(&p, bytes));   // any runtime call
//   kernel<<<grid, block>>>(...);
//   CHECK_LAUNCH();                      // launch errors; in debug builds also waits
//                                        // for the kernel so faults show up here
#pragma once

#include <cuda_runtime_api.h>

namespace sw {
// Prints "CUDA error: <expr> failed at <file>:<line>: <name> (<text>)" and exits 1.
[[noreturn]] void cuda_fail(cudaError_t err, const char* expr, const char* file, int line);
}  // namespace sw

#define CUDA_CHECK(expr)                                                             \
  do {                                                                               \
    cudaError_t sw_err_ = (expr);                                                    \
    if (sw_err_ != cudaSuccess) ::sw::cuda_fail(sw_err_, #expr, __FILE__, __LINE__); \
  } while (0)

#ifdef NDEBUG
#define CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
#else
#define CHECK_LAUNCH()                   \
  do {                                   \
    CUDA_CHECK(cudaGetLastError());      \
    CUDA_CHECK(cudaDeviceSynchronize()); \
  } while (0)
#endif
