// Chapter 21, steps 3 to 9: each step's kernel, an instance of specialized.cuh's block with
// its template switches, and the step's launcher.
#include <algorithm>
#include <cstdint>

#include "common/check.h"
#include "specialized.cuh"

namespace ch21 {
namespace specialized {

// Step 3: one tile per block, tiles row after row, each k-tile's wgmmas waited for.
__global__ void __launch_bounds__(kThreads, 1)
    gemm_warp_specialized(const __grid_constant__ CUtensorMap map_a,
                          const __grid_constant__ CUtensorMap map_b, float* C, int m, int n,
                          int k) {
  specialized<false, 1, false>(&map_a, &map_b, C, m, n, k, 1);
}
// Step 4: step 3 with one group of wgmmas kept in flight.
__global__ void __launch_bounds__(kThreads, 1)
    gemm_in_flight(const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b, float* C, int m, int n, int k) {
  specialized<false, 1, true>(&map_a, &map_b, C, m, n, k, 1);
}
// Step 5: one block per SM, tiles in bands of kGroup tile rows.
__global__ void __launch_bounds__(kThreads, 1)
    gemm_persistent(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, float* C, int m, int n, int k) {
  specialized<true, 1, true>(&map_a, &map_b, C, m, n, k, kGroup);
}
// Step 6: persistent clusters of 2 blocks stacked down, B multicast.
constexpr int kCluster = 2;
__global__ void __launch_bounds__(kThreads, 1)
    gemm_clusters(const __grid_constant__ CUtensorMap map_a,
                  const __grid_constant__ CUtensorMap map_b, float* C, int m, int n, int k) {
  specialized<true, kCluster, true>(&map_a, &map_b, C, m, n, k, kGroup / kCluster);
}

// Step 7: step 6 with units of 64 rows a block, the consumers taking them in turn. Bands of
// as many rows of A as step 6's (2048).
__global__ void __launch_bounds__(kThreads, 1)
    gemm_ping_pong(const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b, float* C, int m, int n, int k) {
  specialized<true, kCluster, true, true>(&map_a, &map_b, C, m, n, k,
                                          kGroup * kTileM / (kCluster * kWgmmaM));
}

// Step 8: step 6 with C through shared memory and the copy engine.
__global__ void __launch_bounds__(kThreads, 1)
    gemm_tma_store(const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_c, float* C, int m, int n, int k) {
  specialized<true, kCluster, true, false, true>(&map_a, &map_b, C, m, n, k, kGroup / kCluster,
                                                 &map_c);
}

// Step 9: step 8 with the last wave's units cut along k, each cut unit's pieces added up in C
// in turn (flags: Args::flags).
__global__ void __launch_bounds__(kThreads, 1)
    gemm_split_tail(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, float* C, int m, int n, int k,
                    int* flags) {
  specialized<true, kCluster, true, false, true, true>(&map_a, &map_b, C, m, n, k,
                                                       kGroup / kCluster, &map_c, flags);
}

using Kernel = void (*)(CUtensorMap, CUtensorMap, float*, int, int, int);

// A launch's configuration: blocks (a multiple of `cluster`), clusters of `cluster` blocks,
// `bytes` of dynamic shared memory each. `attr` names the cluster's shape.
template <typename K>
cudaLaunchConfig_t config_of(K kernel, int64_t blocks, int cluster, cudaLaunchAttribute* attr,
                             int bytes = kSharedBytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  *attr = {};
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim = {static_cast<unsigned>(cluster), 1, 1};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = bytes;
  config.attrs = attr;
  config.numAttrs = 1;
  return config;
}

// A launch with A's box unit_m rows (a block's unit) and B's box_b rows.
void launch(Kernel kernel, const Args& a, int64_t blocks, int cluster, int box_b,
            int unit_m = kTileM) {
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t config = config_of(kernel, blocks, cluster, &attr);
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, tile_map(a.a, a.m, a.k, a.ld, unit_m),
                                tile_map(a.b, a.n, a.k, a.ld, box_b), a.c, a.m, a.n, a.k));
  CHECK_LAUNCH();
}

// The units: output tiles of unit_m x kTileN, kCluster stacked down counting as one.
int64_t units(const Args& a, int cluster, int unit_m = kTileM) {
  return sw::ceil_div(sw::ceil_div(a.m, unit_m), cluster) * sw::ceil_div(a.n, kTileN);
}

}  // namespace specialized

void launch_warp_specialized(const Args& a) {
  using namespace specialized;
  launch(gemm_warp_specialized, a, tile_blocks<kTileN>(a), 1, kTileN);
}

void launch_in_flight(const Args& a) {
  using namespace specialized;
  launch(gemm_in_flight, a, tile_blocks<kTileN>(a), 1, kTileN);
}

int64_t persistent_blocks(const Args& a) {
  return std::min<int64_t>(a.sms, specialized::units(a, 1));
}
void launch_persistent(const Args& a) {
  using namespace specialized;
  launch(gemm_persistent, a, persistent_blocks(a), 1, kTileN);
}

// As many clusters as fit on the GPU at once (cudaOccupancyMaxActiveClusters: the GPCs decide,
// not SMs / 2), at most one per unit; the table's blocks= shows the grid. Steps 6 to 8 have
// the same threads and one block an SM (step 8 with 32 KiB more shared memory): the same fit.
int64_t clusters_fit(const Args& a) {
  using namespace specialized;
  static int fit = 0;
  if (fit == 0) {
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t config =
        config_of(gemm_clusters, a.sms / kCluster * kCluster, kCluster, &attr);
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, gemm_clusters, &config));
    if (fit < 1) CUDA_CHECK(cudaErrorInvalidConfiguration);
  }
  return fit;
}
int64_t cluster_blocks(const Args& a) {
  using namespace specialized;
  return std::min<int64_t>(clusters_fit(a), units(a, kCluster)) * kCluster;
}
void launch_clusters(const Args& a) {
  using namespace specialized;
  launch(gemm_clusters, a, cluster_blocks(a), kCluster, kTileN / kCluster);
}

int64_t ping_pong_blocks(const Args& a) {
  using namespace specialized;
  return std::min<int64_t>(clusters_fit(a), units(a, kCluster, kWgmmaM)) * kCluster;
}
void launch_ping_pong(const Args& a) {
  using namespace specialized;
  launch(gemm_ping_pong, a, ping_pong_blocks(a), kCluster, kTileN / kCluster, kWgmmaM);
}

void launch_tma_store(const Args& a) {
  using namespace specialized;
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t config =
      config_of(gemm_tma_store, cluster_blocks(a), kCluster, &attr, kSharedBytes + kEpilogueBytes);
  CUDA_CHECK(cudaLaunchKernelEx(&config, gemm_tma_store, tile_map(a.a, a.m, a.k, a.ld, kTileM),
                                tile_map(a.b, a.n, a.k, a.ld, kTileN / kCluster), c_map(a), a.c,
                                a.m, a.n, a.k));
  CHECK_LAUNCH();
}

void launch_split_tail(const Args& a) {
  using namespace specialized;
  const int64_t blocks = cluster_blocks(a);
  if (blocks * 2 > kSplitFlags) CUDA_CHECK(cudaErrorInvalidValue);  // a flag per block and consumer
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t config =
      config_of(gemm_split_tail, blocks, kCluster, &attr, kSharedBytes + kEpilogueBytes);
  CUDA_CHECK(cudaLaunchKernelEx(&config, gemm_split_tail, tile_map(a.a, a.m, a.k, a.ld, kTileM),
                                tile_map(a.b, a.n, a.k, a.ld, kTileN / kCluster), c_map(a), a.c,
                                a.m, a.n, a.k, a.flags));
  CHECK_LAUNCH();
}

}  // namespace ch21
