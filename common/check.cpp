#include "check.h"

#include <cstdio>
#include <cstdlib>

namespace sw {

void cuda_fail(cudaError_t err, const char* expr, const char* file, int line) {
  std::fprintf(stderr, "CUDA error: %s failed at %s:%d: %s (%s)\n", expr, file, line,
               cudaGetErrorName(err), cudaGetErrorString(err));
  std::exit(1);
}

}  // namespace sw
