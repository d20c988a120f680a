// Error checking for NCCL calls, as check.h does for CUDA's.
//
//   NCCL_CHECK(ncclAllReduce(send, recv, n, ncclFloat, ncclSum, comm, stream));
//
// Include it only where NCCL was found (meson.build: nccl_dep), as chapter 14 does.
#pragma once

#include <nccl.h>

#include <cstdio>
#include <cstdlib>

#include "common/cli.h"

// Prints "NCCL error: <expr> failed at <file>:<line>: <text>" and exits 1.
#define NCCL_CHECK(expr)                                                                      \
  do {                                                                                        \
    const ncclResult_t sw_nccl_ = (expr);                                                     \
    if (sw_nccl_ != ncclSuccess) {                                                            \
      std::fprintf(stderr, "NCCL error: %s failed at %s:%d: %s\n", #expr, __FILE__, __LINE__, \
                   ncclGetErrorString(sw_nccl_));                                             \
      std::exit(sw::kExitFailed);                                                             \
    }                                                                                         \
  } while (0)
