// Hopper's instructions as short inline-PTX wrappers (chapter 21): mbarriers, the proxy
// fence, the tensor copies (TMA) in and out, wgmma and its fences, setmaxnreg, cluster
// barriers. Each names the PTX ISA section it implements (PTX ISA 8.x, CUDA 12 and 13).
//
// wgmma and setmaxnreg exist only in the architecture-specific target sm_90a (built with
// -gencode arch=compute_90a,code=sm_90a); nvcc defines __CUDA_ARCH_FEAT_SM90_ALL there.
// Every other device pass (sm_90 without the a, older GPUs) compiles these to a trap, and the
// chapter's kernels leave their bodies out (SW_SM90A): chapter 21 runs them only after its
// probe (sm90a_loaded) saw the sm_90a image on the GPU.
#pragma once

#include <cstdint>

#include "common/hopper/arith.h"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SW_SM90A 1
#else
#define SW_SM90A 0
#endif

// The body of a wrapper on sm_90a, a trap elsewhere.
#if SW_SM90A
#define SW_PTX(...) __VA_ARGS__
#else
#define SW_PTX(...) __trap()
#endif

namespace sw::hopper {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// --- mbarrier (PTX ISA 9.7.13.15, "Parallel Synchronization and Communication: mbarrier") ---

// mbarrier.init: the barrier expects `count` arrivals per phase; its phase starts at 0.
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  SW_PTX(asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count)
                      : "memory"));
}
// fence.mbarrier_init: the inits visible to the cluster (and the copy engine) before use.
__device__ __forceinline__ void fence_barrier_init() {
  SW_PTX(asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"));
}
// mbarrier.arrive.expect_tx: one arrival, and `bytes` more transaction bytes this phase
// waits for (the tensor copies signal them with complete_tx).
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  SW_PTX(asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
      : "memory"));
}
// mbarrier.arrive: one arrival on this block's barrier.
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  SW_PTX(asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar))
                      : "memory"));
}
// One arrival on the barrier at the same offset in block `cta` of the cluster (mapa gives
// its shared::cluster address). The default semantics (.release at .cta scope): a consumer
// arrives after wgmma.wait_group, when its reads of the stage are complete, so nothing needs
// ordering at cluster scope. (.release.cluster compiles to a GPU-wide memory barrier,
// MEMBAR.ALL.GPU, before every arrival: on the consumers' path it halved chapter 21's
// clusters step.)
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, uint32_t cta) {
  SW_PTX(
      asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
                   " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
                   "r"(cta)
                   : "memory"));
}
// mbarrier.try_wait.parity: true once the phase of parity `parity` has completed (the
// barrier's current phase has the other parity). A fresh barrier (phase 0) counts the phase
// of parity 1 as completed: a first wait on parity 1 returns at once.
__device__ __forceinline__ bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  SW_PTX(
      asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                   " selp.u32 %0, 1, 0, p;\n}\n"
                   : "=r"(done)
                   : "r"(smem_u32(bar)), "r"(parity)
                   : "memory"));
  return done != 0;
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}

// --- proxies and clusters (PTX ISA 9.7.13.4 "membar/fence", 9.7.13.3 "barrier.cluster") ----

// fence.proxy.async: this thread's ordinary shared-memory writes become visible to the async
// proxy (the copy engine, wgmma) — needed before a TMA store reads what st.shared wrote.
__device__ __forceinline__ void fence_proxy_async() {
  SW_PTX(asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"));
}
// Every thread of the cluster arrives, then waits for all (release/acquire at cluster scope).
__device__ __forceinline__ void cluster_sync() {
  SW_PTX(asm volatile(
      "barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory"));
}
// This block's rank in its cluster (%cluster_ctarank, PTX ISA "Special Registers").
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r = 0;
  SW_PTX(asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r)));
  return r;
}

// --- tensor copies (PTX ISA 9.7.9.25 "cp.async.bulk.tensor", 9.7.9.26 the bulk groups) -------

// One box of a 2-D tensor map (a __grid_constant__ kernel parameter) at element coordinates
// (col, row) into shared memory at dst, the bytes counted on `bar` (complete_tx).
__device__ __forceinline__ void tma_load_2d(void* dst, const void* map, uint64_t* bar, int col,
                                            int row) {
  SW_PTX(
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                   " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(smem_u32(dst)),
                   "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(col), "r"(row)
                   : "memory"));
}
// The same box into the same shared-memory offset of every block of the cluster in
// `cta_mask`, each block's barrier at bar's offset counting the bytes it received.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const void* map, uint64_t* bar,
                                                      int col, int row, uint16_t cta_mask) {
  SW_PTX(asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(col), "r"(row), "h"(cta_mask)
      : "memory"));
}
// A box from shared memory to the tensor at (col, row) (elements outside it are not
// written), in the thread's bulk group; commit closes the group; wait_read<0> waits until
// every committed group has read its shared memory (it may be written again).
__device__ __forceinline__ void tma_store_2d(const void* map, const void* src, int col, int row) {
  SW_PTX(asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          reinterpret_cast<uint64_t>(map)),
      "r"(smem_u32(src)), "r"(col), "r"(row)
      : "memory"));
}
// The same, adding the box to the tensor element by element instead of overwriting it
// (cp.reduce.async.bulk.tensor .add: fp32 here, the tensor map's type).
__device__ __forceinline__ void tma_reduce_add_2d(const void* map, const void* src, int col,
                                                  int row) {
  SW_PTX(
      asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, "
                   "{%2, %3}], [%1];\n" ::"l"(reinterpret_cast<uint64_t>(map)),
                   "r"(smem_u32(src)), "r"(col), "r"(row)
                   : "memory"));
}
__device__ __forceinline__ void tma_store_commit() {
  SW_PTX(asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"));
}
template <int kInFlight>
__device__ __forceinline__ void tma_store_wait_read() {
  SW_PTX(asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kInFlight) : "memory"));
}
// Waits until every committed group has finished, its writes to global memory done.
__device__ __forceinline__ void tma_store_wait_all() {
  SW_PTX(asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"));
}

// --- flags between blocks (PTX ISA 8 "Memory Consistency Model": release and acquire) -------

// A flag in global memory that one block sets after its copy engine's writes and another
// waits on before its own: set_flag_after_bulk first waits for the thread's bulk groups to
// finish (their writes done), orders them before the flag (fence.proxy.async: the copy
// engine's writes and the thread's own), then stores the value with release at GPU scope;
// wait_flag loads with acquire until the flag holds `value`, then orders what follows
// (the copy engine's next reads and writes) after it.
__device__ __forceinline__ void set_flag_after_bulk(int* flag, int value) {
  SW_PTX(
      asm volatile("cp.async.bulk.wait_group 0;\n fence.proxy.async.global;\n"
                   " st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag),
                   "r"(value)
                   : "memory"));
}
__device__ __forceinline__ void wait_flag(const int* flag, int value) {
  int seen = value - 1;
  while (seen != value) {
    SW_PTX(asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n"
                        : "=r"(seen)
                        : "l"(flag)
                        : "memory"));
  }
  SW_PTX(asm volatile("fence.proxy.async.global;\n" ::: "memory"));
}

// --- named barriers (PTX ISA 9.7.13.1 "bar.sync") ------------------------------------------

// `threads` threads (whole warps) of the block wait for each other at barrier `id` (1 to 15;
// 0 is __syncthreads'): a warpgroup synchronizes without the block's other warps.
__device__ __forceinline__ void named_barrier(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// --- wgmma (PTX ISA 9.7.15 "Asynchronous Warpgroup Level Matrix Multiply-Accumulate") --------

// wgmma.fence: registers (the accumulators) written before it are seen by the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
  SW_PTX(asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"));
}
// wgmma.commit_group: the wgmmas issued since the last commit form one group.
__device__ __forceinline__ void wgmma_commit() {
  SW_PTX(asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"));
}
// wgmma.wait_group N: at most N groups still in flight (their accumulators not to be read).
template <int kInFlight>
__device__ __forceinline__ void wgmma_wait() {
  SW_PTX(asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kInFlight) : "memory"));
}
// Keeps the compiler from moving reads or writes of the accumulators across a wait or fence.
template <int kCount>
__device__ __forceinline__ void fence_registers(float (&d)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

#define SW_F8(d, i)                                                                           \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define SW_R16_0 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
#define SW_R16_1 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
#define SW_R16_2 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
#define SW_R16_3 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define SW_R16_4 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
#define SW_R16_5 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
#define SW_R16_6 \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
#define SW_R16_7 \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

// d (64 x N, fp32, spread over the warpgroup) += A (64 x 16) B^T (B: N x 16), both bf16 and
// K-major in shared memory, described by a and b (matrix_descriptor). scale_d = 0 ignores d's
// old values. Thread t of the warpgroup (warp w = t / 32, lane l) holds in d[i] the entry
// row 16 w + l / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (l % 4) + i % 2 (accumulator_row,
// accumulator_col below). The trailing immediates: scale A and B by 1, no transpose (K-major).
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t a, uint64_t b,
                                                 int scale_d) {
  SW_PTX(asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" SW_R16_0 SW_R16_1 SW_R16_2 SW_R16_3
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : SW_F8(d, 0), SW_F8(d, 8), SW_F8(d, 16), SW_F8(d, 24), SW_F8(d, 32), SW_F8(d, 40),
        SW_F8(d, 48), SW_F8(d, 56)
      : "l"(a), "l"(b), "r"(scale_d)));
}
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t a, uint64_t b,
                                                 int scale_d) {
  SW_PTX(asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" SW_R16_0 SW_R16_1 SW_R16_2 SW_R16_3
      ", " SW_R16_4 SW_R16_5 SW_R16_6 SW_R16_7 "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : SW_F8(d, 0), SW_F8(d, 8), SW_F8(d, 16), SW_F8(d, 24), SW_F8(d, 32), SW_F8(d, 40),
        SW_F8(d, 48), SW_F8(d, 56), SW_F8(d, 64), SW_F8(d, 72), SW_F8(d, 80), SW_F8(d, 88),
        SW_F8(d, 96), SW_F8(d, 104), SW_F8(d, 112), SW_F8(d, 120)
      : "l"(a), "l"(b), "r"(scale_d)));
}
// d of m64nNk16 as n / 2 floats: the one wrapper for N = 128 or 256.
template <int kHalfN>
__device__ __forceinline__ void wgmma_bf16(float (&d)[kHalfN], uint64_t a, uint64_t b) {
  static_assert(kHalfN == 64 || kHalfN == 128, "N = 128 or 256");
  if constexpr (kHalfN == 64)
    wgmma_m64n128k16(d, a, b, 1);
  else
    wgmma_m64n256k16(d, a, b, 1);
}

// --- registers per warpgroup (PTX ISA 9.7.17.x "setmaxnreg") -----------------------------------

// The warpgroup gives registers back to the SM's pool (dec) or takes them (inc): a producer
// that only issues copies needs few, the consumers holding accumulators many. Needs a
// register cap at kernel entry (__launch_bounds__(threads, 1)).
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  SW_PTX(asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs)));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  SW_PTX(asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs)));
}

}  // namespace sw::hopper
