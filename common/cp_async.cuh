// cp.async (compute capability 8.0): copies from global to shared memory that skip the
// registers and finish later, in groups (chapters 19 and 20).
//
//   sw::cp_async<16>(shared, global, src_bytes)  16 bytes (.cg: cached in L2 only)
//   sw::cp_async<4>(shared, global, src_bytes)   4 bytes (.ca), for rows not of whole 16 bytes
//   sw::cp_async_commit()                        closes a group of this thread's copies
//   sw::cp_async_wait<N>()                       waits until at most N of its groups are in flight
//
// src_bytes 0 reads nothing and writes zeros (a piece outside the matrix); the source
// address must still be a valid one. A group's copies are visible to the other threads of
// the block only after the wait and a barrier. A build for an older GPU (-Demulate=t4
// compiles PTX for compute_75) puts a trap where each instruction would be: the programs
// skip the steps that use them on such a GPU (sw::gemm::kNeedsSm80), with the reason.
//
// CUDA only: include it from .cu and .cuh files.
#pragma once

#include <cstdint>

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define SW_CP_ASYNC 1
#else
#define SW_CP_ASYNC 0
#endif

namespace sw {

template <int kBytes>
__device__ __forceinline__ void cp_async(void* shared, const void* global, int src_bytes) {
  static_assert(kBytes == 16 || kBytes == 4, "cp.async copies 16 bytes (.cg) or 4 (.ca) here");
#if SW_CP_ASYNC
  const uint32_t to = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
  if constexpr (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(global),
                 "r"(src_bytes)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(to), "l"(global),
                 "r"(src_bytes)
                 : "memory");
#else
  __trap();
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if SW_CP_ASYNC
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#else
  __trap();
#endif
}

template <int kInFlight>
__device__ __forceinline__ void cp_async_wait() {
#if SW_CP_ASYNC
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kInFlight) : "memory");
#else
  __trap();
#endif
}

}  // namespace sw
