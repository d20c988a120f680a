// Chapter 21: a Hopper GEMM from the copy engine (TMA), wgmma and warp specialization.
//
// What changed:  chapter 20 fed mma.sync from registers: every thread loaded its fragments
//                with ldmatrix, and issuing them was the limit. Hopper's wgmma lets a
//                warpgroup (4 warps) multiply 64 x N x 16 with both operands read straight
//                from shared memory, asynchronously; the copy engine (cp.async.bulk.tensor,
//                one thread, a tensor map) moves a whole tile from global to shared memory,
//                128-byte swizzled, and counts its bytes on an mbarrier. The problem is now
//                "TN": A (m x k) and B (n x k) both K-major, C = A B^T in fp32
//                (problem.cuh). The steps:
//   tma-wgmma         one warpgroup, a 128 x 128 tile, two stages loaded by TMA, waited on
//                     with mbarriers, multiplied by wgmma m64n128k16.
//   bigger-tile       a 128 x 256 tile, two warpgroups, each wgmma m64n256k16: half the
//                     shared-memory bytes per flop of B.
//   warp-specialized  a producer warpgroup (setmaxnreg.dec: few registers) that only issues
//                     copies, two consumer warpgroups (setmaxnreg.inc) that only multiply, a
//                     ring of 4 stages with full and empty mbarriers (specialized.cuh).
//   in-flight         the consumers keep one group of wgmmas in flight: issue k-tile t, wait
//                     for k-tile t - 1's group (wait_group 1), release t - 1's stage.
//   persistent        one block per SM, taking tiles in bands of 16 tile rows (L2-aware
//                     order); the producer loads the next tile while the consumers write C.
//   clusters          2 x 1 clusters: the two blocks' tiles share B, and each block loads
//                     half of it and multicasts it to both.
//   ping-pong         units of 64 x 256 a block, the two consumers taking them in turn:
//                     one multiplies while the other writes its tile to C.
//   tma-store         clusters (step 6) with C written through shared memory: the
//                     consumers fill 8 KiB boxes, the copy engine stores them (TMA store).
//   split-tail        tma-store with the last wave's units cut along k among all the
//                     clusters, each cut unit's pieces added into C in turn (TMA add).
//                cuBLASLt (the fastest of its heuristic's candidates, 32 MiB workspace,
//                fp32 C) is the bar, timed in the same run: every row is measured twice, in
//                turn (cuBLASLt first and last), and keeps its faster median.
// Checked:       part 1's reference and bound gamma'_{3k+2} sum |a||b| at the awkward shapes,
//                Freivalds' check of every row, C poisoned before every run, a guard after
//                it. Rows of A and B are padded to 16 bytes (TMA's stride rule); the tensor
//                maps' width is k, so partial tiles (any m, n, k) read zeros.
// Bottleneck:    tma-wgmma and bigger-tile: every warp waits for every copy and every
//                multiply (a __syncthreads a stage); warp-specialized: each consumer idles
//                while its last wgmma drains; in-flight: a block's start and its epilogue
//                with the tensor cores idle; persistent: L2's bandwidth to the SMs (48 KiB
//                a k-tile for each SM); clusters: not settled (twice the library's warp
//                instructions and barrier stalls, docs/21's Evidence); ping-pong: not
//                settled either (more L2 bytes and long-scoreboard stalls than clusters):
//                slower on large squares, faster where 128 x 256 units leave SMs idle;
//                tma-store: not settled (the tensor pipe busier than in clusters, less
//                than in the library's fastest candidates: docs/21's Evidence);
//                split-tail: the same steady state (the last wave no longer idles; at
//                8192^3 the library's candidate keeps the tensor pipe busier: docs/21).
// Needs:         sm_90a (H100, H200): the build adds -gencode arch=compute_90a,code=sm_90a to
//                this chapter; any other GPU or build prints one line and exits 77.
// Steps:         tma-wgmma, bigger-tile, warp-specialized, in-flight, persistent, clusters,
//                ping-pong, tma-store, split-tail
// Run:           build/chapters/21_hopper_gemm [--size 4096 | --m M --n N --k K]
//                [--variant clusters] [--json]
//                build/chapters/21_hopper_gemm --sweep [--variant clusters] [--json]
//                build/chapters/21_hopper_gemm --verify-only [--large | --m M --n N --k K]
#include <cstdint>
#include <vector>

#include "common/check.h"
#include "kernels.cuh"

namespace ch21 {
namespace {

// --- steps 1 and 2: one block waits for its copies, then multiplies ------------------------

// kWarpgroups warpgroups compute a 128 x kTileN tile of C, each 128 / kWarpgroups rows of it
// (kBlocks wgmmas of 64 rows). Two stages: thread 0 starts the copies of k-tiles 0 and 1;
// for each k-tile every thread waits on its stage's mbarrier (the copies' bytes arrived),
// the warpgroups issue 4 wgmmas per 64-row block (k = 16 each), wait for them, and
// __syncthreads (nobody reads the stage any more) lets thread 0 refill it with k-tile t + 2.
template <int kWarpgroups, int kTileN>
__device__ __forceinline__ void double_buffered(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                                float* C, int m, int n, int k) {
#if SW_SM90A
  constexpr int kStages = 2, kBlocks = kTileM / kWgmmaM / kWarpgroups, kHalfN = kTileN / 2;
  constexpr uint32_t kStage = kABytes + kTileN * kRowBytes;
  extern __shared__ uint8_t raw[];
  uint8_t* base = align_1024(raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(base + kStages * kStage);
  const int tiles_k = static_cast<int>(sw::ceil_div(k, kTileK));
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN, wg = threadIdx.x / kWarpgroup;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) hp::mbar_init(&full[s], 1);
    hp::fence_barrier_init();
  }
  __syncthreads();
  auto load = [&](int t) {  // k-tile t into stage t % 2, counted on its mbarrier
    uint8_t* a_tile = base + (t % kStages) * kStage;
    hp::mbar_arrive_expect_tx(&full[t % kStages], kStage);
    hp::tma_load_2d(a_tile, map_a, &full[t % kStages], t * kTileK, row0);
    hp::tma_load_2d(a_tile + kABytes, map_b, &full[t % kStages], t * kTileK, col0);
  };
  if (threadIdx.x == 0)
    for (int t = 0; t < kStages && t < tiles_k; ++t) load(t);
  float d[kBlocks][kHalfN];
#pragma unroll
  for (int b = 0; b < kBlocks; ++b) {
#pragma unroll
    for (int i = 0; i < kHalfN; ++i) d[b][i] = 0.0f;
    hp::fence_registers(d[b]);
  }
  for (int t = 0; t < tiles_k; ++t) {
    const int s = t % kStages;
    hp::mbar_wait(&full[s], (t / kStages) & 1);
    const uint32_t a_tile = hp::smem_u32(base + s * kStage), b_tile = a_tile + kABytes;
    hp::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kTileK / hp::kWgmmaK; ++kk)
#pragma unroll
      for (int b = 0; b < kBlocks; ++b)
        hp::wgmma_bf16(d[b], desc_at(a_tile + (wg * kBlocks + b) * kWgmmaM * kRowBytes, kk),
                       desc_at(b_tile, kk));
    hp::wgmma_commit();
    hp::wgmma_wait<0>();
#pragma unroll
    for (int b = 0; b < kBlocks; ++b) hp::fence_registers(d[b]);
    __syncthreads();  // every warpgroup is done with stage s
    if (threadIdx.x == 0 && t + kStages < tiles_k) load(t + kStages);
  }
#pragma unroll
  for (int b = 0; b < kBlocks; ++b)
    store_accumulators(C, m, n, row0 + (wg * kBlocks + b) * kWgmmaM, col0, d[b]);
#endif
}

template <int kWarpgroups, int kTileN>
constexpr int double_buffered_bytes() {
  return 2 * (kABytes + kTileN * kRowBytes) + kAlignSlack + kBarrierBytes;
}

// Step 1: one warpgroup, a 128 x 128 tile (two m64n128k16 per k = 16).
__global__ void __launch_bounds__(kWarpgroup)
    gemm_tma_wgmma(const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b, float* C, int m, int n, int k) {
  double_buffered<1, 128>(&map_a, &map_b, C, m, n, k);
}
void launch_tma_wgmma(const Args& a) {
  constexpr int kTileN = 128, kBytes = double_buffered_bytes<1, kTileN>();
  static const bool raised =
      cudaFuncSetAttribute(gemm_tma_wgmma, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes) ==
      cudaSuccess;
  if (!raised) CUDA_CHECK(cudaErrorInvalidValue);
  const dim3 grid(static_cast<unsigned>(sw::ceil_div(a.n, kTileN)),
                  static_cast<unsigned>(sw::ceil_div(a.m, kTileM)));  // tile_blocks<kTileN>
  gemm_tma_wgmma<<<grid, kWarpgroup, kBytes>>>(tile_map(a.a, a.m, a.k, a.ld, kTileM),
                                               tile_map(a.b, a.n, a.k, a.ld, kTileN), a.c, a.m, a.n,
                                               a.k);
  CHECK_LAUNCH();
}

// Step 2: two warpgroups, a 128 x 256 tile (one m64n256k16 each per k = 16).
__global__ void __launch_bounds__(2 * kWarpgroup)
    gemm_bigger_tile(const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b, float* C, int m, int n, int k) {
  double_buffered<2, 256>(&map_a, &map_b, C, m, n, k);
}
void launch_bigger_tile(const Args& a) {
  constexpr int kTileN = 256, kBytes = double_buffered_bytes<2, kTileN>();
  static const bool raised =
      cudaFuncSetAttribute(gemm_bigger_tile, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes) ==
      cudaSuccess;
  if (!raised) CUDA_CHECK(cudaErrorInvalidValue);
  const dim3 grid(static_cast<unsigned>(sw::ceil_div(a.n, kTileN)),
                  static_cast<unsigned>(sw::ceil_div(a.m, kTileM)));  // tile_blocks<kTileN>
  gemm_bigger_tile<<<grid, 2 * kWarpgroup, kBytes>>>(tile_map(a.a, a.m, a.k, a.ld, kTileM),
                                                     tile_map(a.b, a.n, a.k, a.ld, kTileN), a.c,
                                                     a.m, a.n, a.k);
  CHECK_LAUNCH();
}

// sm_90a's image is the one loaded: the probe reports 1 only when compiled for it.
__global__ void sm90a_probe(int* out) { *out = SW_SM90A ? 1 : 2; }

// The step table, in the order the chapter teaches them, each with its grid's blocks.
const std::vector<Step> kSteps = {
    {"tma-wgmma", launch_tma_wgmma, tile_blocks<128>},
    {"bigger-tile", launch_bigger_tile, tile_blocks<256>},
    {"warp-specialized", launch_warp_specialized, tile_blocks<256>},
    {"in-flight", launch_in_flight, tile_blocks<256>},
    {"persistent", launch_persistent, persistent_blocks},
    {"clusters", launch_clusters, cluster_blocks},
    {"ping-pong", launch_ping_pong, ping_pong_blocks},
    {"tma-store", launch_tma_store, cluster_blocks},
    {"split-tail", launch_split_tail, cluster_blocks},
};

}  // namespace

std::string sm90a_missing(const sw::Gpu& gpu) {
  const sw::DeviceInfo& d = gpu.info;
  if (d.cc_major != 9 || d.cc_minor != 0)
    return sw::print_text("chapter 21 needs an sm_90a GPU (H100, H200); this GPU has %d.%d%s",
                          d.cc_major, d.cc_minor,
                          d.emulated.empty() ? "" : (" (an emulated " + d.emulated + ")").c_str());
  sw::DeviceBuffer<int> flag(1);
  CUDA_CHECK(cudaMemset(flag.get(), 0, sizeof(int)));
  sm90a_probe<<<1, 1>>>(flag.get());
  const cudaError_t e = cudaDeviceSynchronize();
  int seen = 0;
  if (e == cudaSuccess)
    CUDA_CHECK(cudaMemcpy(&seen, flag.get(), sizeof seen, cudaMemcpyDeviceToHost));
  cudaGetLastError();
  if (seen == 1) return "";
  return "this build has no sm_90a code for the GPU (configure with -Dgpu_arch=90 or portable)";
}

}  // namespace ch21

int main(int argc, char** argv) {
  const sw::bench::Program<ch21::Step> program{
      "21_hopper_gemm",
      "bf16 GEMM (C = A B^T, fp32 out) on Hopper: TMA, wgmma, warp specialization, to cuBLASLt.",
      "21", ch21::kSteps};
  return sw::bench::run(argc, argv, program, ch21::Problem{});
}
