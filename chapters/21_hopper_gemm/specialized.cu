// Chapter 21, steps 3 to 5: warp specialization, a persistent grid, clusters with multicast.
//
// Three warpgroups per block. Warpgroup 0 is the producer: it gives registers back
// (setmaxnreg.dec) and one of its threads only issues copies. Warpgroups 1 and 2 are the
// consumers (setmaxnreg.inc): each multiplies 64 rows of a 128 x 256 tile. Between them a
// ring of 4 stages (48 KiB each: A 128 x 64, B 256 x 64), each with two mbarriers:
//   full[s]   the producer arrives with the stage's byte count (expect_tx); the copies
//             complete it. Consumers wait on it.
//   empty[s]  each consumer warpgroup arrives when its wgmmas have read the stage (in a
//             cluster: on the stage's empty barrier of every block, since each block's
//             copies write into both). The producer waits on it before refilling.
// Use u of the ring (u counts k-tiles over all of a block's tiles) is stage u % 4 in phase
// (u / 4) % 2: consumers wait for full's phase of that parity; the producer waits for
// empty's phase of the other parity, which a fresh barrier counts as complete (the first
// round of the ring needs no release).
#include <algorithm>
#include <cstdint>

#include "common/check.h"
#include "kernels.cuh"

namespace ch21 {
namespace specialized {

constexpr int kTileN = 256, kStages = 4, kHalfN = kTileN / 2;
constexpr int kThreads = 3 * kWarpgroup;
constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 128 x 40 + 256 x 232 <= 65536
constexpr uint32_t kBBytes = kTileN * kRowBytes, kStage = kABytes + kBBytes;  // 48 KiB
constexpr int kSharedBytes = kStages * kStage + kAlignSlack + kBarrierBytes;
constexpr int kGroup = 8;  // tile rows per band of the persistent order (hp::tile_of)
static_assert(2 * kStages * 8 <= kBarrierBytes, "the mbarriers fit");
static_assert(kWarpgroup * (kProducerRegs + 2 * kConsumerRegs) <= 65536, "the SM's registers");
static_assert(kHalfN == 128, "each consumer: one m64n256k16 accumulator");

// One block's work (see the top of this file). kPersistent: the block takes units
// blockIdx.x / kCluster, + gridDim.x / kCluster, ... in the order of hp::tile_of with bands of
// `group` unit rows; else unit blockIdx.x / kCluster alone. A unit is kCluster tiles stacked
// down (the cluster's blocks, rank r taking the r-th), sharing their tile of B.
template <bool kPersistent, int kCluster>
__device__ __forceinline__ void specialized(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                            float* C, int m, int n, int k, int group) {
#if SW_SM90A
  extern __shared__ uint8_t raw[];
  uint8_t* base = align_1024(raw);
  uint64_t* full = reinterpret_cast<uint64_t*>(base + kStages * kStage);
  uint64_t* empty = full + kStages;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      hp::mbar_init(&full[s], 1);
      hp::mbar_init(&empty[s], 2 * kCluster);  // 2 consumer warpgroups in each block
    }
    hp::fence_barrier_init();
  }
  if constexpr (kCluster > 1)
    hp::cluster_sync();  // every block's barriers exist before any copy or arrival
  else
    __syncthreads();
  const int rank = kCluster > 1 ? static_cast<int>(hp::cluster_rank()) : 0;
  const int tiles_m = static_cast<int>(sw::ceil_div(m, kTileM));
  const int tiles_n = static_cast<int>(sw::ceil_div(n, kTileN));
  const int tiles_k = static_cast<int>(sw::ceil_div(k, kTileK));
  const int units_m = static_cast<int>(sw::ceil_div(tiles_m, kCluster));
  const int64_t units = static_cast<int64_t>(units_m) * tiles_n;
  const int64_t first = blockIdx.x / kCluster;
  const int64_t stride = kPersistent ? gridDim.x / kCluster : units;
  if (threadIdx.x < kWarpgroup) {  // the producer
    hp::setmaxnreg_dec<kProducerRegs>();
    uint32_t use = 0;
    for (int64_t u = first; threadIdx.x == 0 && u < units; u += stride) {
      const hp::TileIndex tile = hp::tile_of(u, units_m, tiles_n, group);
      const int a_row = hp::box_start((tile.m * kCluster + rank) * kTileM, m);
      for (int t = 0; t < tiles_k; ++t, ++use) {
        const int s = use % kStages;
        hp::mbar_wait(&empty[s], ((use / kStages) & 1) ^ 1);
        uint8_t* a_tile = base + s * kStage;
        hp::mbar_arrive_expect_tx(&full[s], kStage);
        hp::tma_load_2d(a_tile, map_a, &full[s], t * kTileK, a_row);
        if constexpr (kCluster == 1) {
          hp::tma_load_2d(a_tile + kABytes, map_b, &full[s], t * kTileK, tile.n * kTileN);
        } else {  // this block's part of B, to every block of the cluster
          constexpr int kPart = kTileN / kCluster;
          hp::tma_load_2d_multicast(a_tile + kABytes + rank * kPart * kRowBytes, map_b, &full[s],
                                    t * kTileK, hp::box_start(tile.n * kTileN + rank * kPart, n),
                                    static_cast<uint16_t>((1 << kCluster) - 1));
        }
      }
    }
  } else {  // a consumer: rows 64 (wg - 1) .. of the tile
    hp::setmaxnreg_inc<kConsumerRegs>();
    const int rows = (threadIdx.x / kWarpgroup - 1) * kWgmmaM;
    uint32_t use = 0;
    float d[kHalfN];
    for (int64_t u = first; u < units; u += stride) {
      const hp::TileIndex tile = hp::tile_of(u, units_m, tiles_n, group);
#pragma unroll
      for (int i = 0; i < kHalfN; ++i) d[i] = 0.0f;
      hp::fence_registers(d);
      for (int t = 0; t < tiles_k; ++t, ++use) {
        const int s = use % kStages;
        hp::mbar_wait(&full[s], (use / kStages) & 1);
        const uint32_t a_tile = hp::smem_u32(base + s * kStage) + rows * kRowBytes;
        const uint32_t b_tile = hp::smem_u32(base + s * kStage + kABytes);
        hp::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kTileK / hp::kWgmmaK; ++kk)
          hp::wgmma_bf16(d, desc_at(a_tile, kk), desc_at(b_tile, kk));
        hp::wgmma_commit();
        hp::wgmma_wait<0>();
        hp::fence_registers(d);
        if (threadIdx.x % kWarpgroup == 0) {  // this warpgroup is done with stage s
          if constexpr (kCluster == 1)
            hp::mbar_arrive(&empty[s]);
          else
            for (int c = 0; c < kCluster; ++c) hp::mbar_arrive_cluster(&empty[s], c);
        }
      }
      store_accumulators(C, m, n, (tile.m * kCluster + rank) * kTileM + rows, tile.n * kTileN, d);
    }
  }
  if constexpr (kCluster > 1) hp::cluster_sync();  // no block leaves while others may write to it
#endif
}

// Step 3: one tile per block, tiles row after row.
__global__ void __launch_bounds__(kThreads, 1)
    gemm_warp_specialized(const __grid_constant__ CUtensorMap map_a,
                          const __grid_constant__ CUtensorMap map_b, float* C, int m, int n,
                          int k) {
  specialized<false, 1>(&map_a, &map_b, C, m, n, k, 1);
}
// Step 4: one block per SM, tiles in bands of kGroup tile rows.
__global__ void __launch_bounds__(kThreads, 1)
    gemm_persistent(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, float* C, int m, int n, int k) {
  specialized<true, 1>(&map_a, &map_b, C, m, n, k, kGroup);
}
// Step 5: persistent clusters of 2 blocks stacked down, B multicast.
__global__ void __launch_bounds__(kThreads, 1)
    gemm_clusters(const __grid_constant__ CUtensorMap map_a,
                  const __grid_constant__ CUtensorMap map_b, float* C, int m, int n, int k) {
  specialized<true, 2>(&map_a, &map_b, C, m, n, k, kGroup / 2);
}

using Kernel = void (*)(CUtensorMap, CUtensorMap, float*, int, int, int);

// The launch of a specialized kernel: blocks (a multiple of `cluster`), clusters of `cluster`
// blocks, kSharedBytes of dynamic shared memory each.
void launch(Kernel kernel, const Args& a, int64_t blocks, int cluster, int box_b) {
  CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim = {static_cast<unsigned>(cluster), 1, 1};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSharedBytes;
  config.attrs = &attr;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, tile_map(a.a, a.m, a.k, a.ld, kTileM),
                                tile_map(a.b, a.n, a.k, a.ld, box_b), a.c, a.m, a.n, a.k));
  CHECK_LAUNCH();
}

// The output tiles (kCluster stacked down count as one unit).
int64_t units(const Args& a, int cluster) {
  return sw::ceil_div(sw::ceil_div(a.m, kTileM), cluster) * sw::ceil_div(a.n, kTileN);
}

}  // namespace specialized

void launch_warp_specialized(const Args& a) {
  using namespace specialized;
  launch(gemm_warp_specialized, a, units(a, 1), 1, kTileN);
}

void launch_persistent(const Args& a) {
  using namespace specialized;
  launch(gemm_persistent, a, std::min<int64_t>(a.sms, units(a, 1)), 1, kTileN);
}

// As many clusters as fit on the GPU at once (cudaOccupancyMaxActiveClusters: the GPCs decide,
// not SMs / 2), at most one per unit.
void launch_clusters(const Args& a) {
  using namespace specialized;
  constexpr int kCluster = 2;
  static int fit = 0;
  if (fit == 0) {
    CUDA_CHECK(cudaFuncSetAttribute(gemm_clusters, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kSharedBytes));
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim = {kCluster, 1, 1};
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(a.sms / kCluster * kCluster));
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = kSharedBytes;
    config.attrs = &attr;
    config.numAttrs = 1;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, gemm_clusters, &config));
    if (fit < 1) CUDA_CHECK(cudaErrorInvalidConfiguration);
  }
  launch(gemm_clusters, a, std::min<int64_t>(fit, units(a, kCluster)) * kCluster, kCluster,
         kTileN / kCluster);
}

}  // namespace ch21
