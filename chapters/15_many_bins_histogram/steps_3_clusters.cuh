// Chapter 15, steps 7 and 8: cluster-dsmem and cluster-packed16, the CUDA Programming
// Guide's distributed shared memory histogram, with 32-bit and with packed 16-bit
// counters. Clusters need compute capability 9.0: has_clusters() (counting.cuh) is the
// one gate. Kernels and launchers as one unit, included at the top of
// 15_many_bins_histogram.cu.
#pragma once

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

#include "counting.cuh"
#include "packed16.cuh"

namespace ch15 {

// =========================================================================================
// A cluster of k blocks splits the bins into k slices, one per block; every value is
// an atomic add on the shared memory of the block that owns its bin, through
// cluster.map_shared_rank. cluster.sync() after the zeroing (no add lands on
// uncleared memory) and before any block stores its slice or exits (no add still in
// flight to it). The grid: as many clusters as fit at once
// (cudaOccupancyMaxActiveClusters), striding over the input.
// =========================================================================================

// Clusters exist from compute capability 9.0; below it these are never called (the
// cluster steps are skipped) but must compile.
__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#endif
}
__device__ __forceinline__ unsigned cluster_rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().block_rank();
#else
  return 0;
#endif
}
__device__ __forceinline__ uint32_t* cluster_words(uint32_t* words, unsigned rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().map_shared_rank(words, rank);
#else
  return words;
#endif
}

// Step 7 (cluster-dsmem) counts with 32-bit counters, step 8 (cluster-packed16) with
// packed 16-bit ones (2^20 bins fit in 16 SMs).
template <class T, bool kPacked>
struct ClusterCounter {
  uint32_t* words;
  uint32_t bins, slice;  // bins per block (even when packed)
  HistCount* hist;
  __device__ void add(uint32_t key) {
    const uint32_t bin = bin_of_key(key, bins);
    const uint32_t owner = bin / slice, local = bin - owner * slice;
    uint32_t* theirs = cluster_words(words, owner);
    if (kPacked)
      packed_add(theirs, local, bin, 1, bins, hist);
    else
      atomicAdd(&theirs[local], 1u);
  }
  __device__ void step(const uint4 (&v)[kUnroll]) { add_all<T>(*this, v); }
};

// A block's slice of the bins, in bins (even when packed) and in words.
struct Slice {
  uint32_t bins;
  int64_t words;
};
inline Slice cluster_slice(uint32_t bins, int k, bool packed) {
  uint32_t slice = static_cast<uint32_t>(sw::ceil_div(bins, k));
  if (packed) slice += slice & 1;
  return {slice, packed ? slice / 2 : slice};
}

inline cudaLaunchConfig_t cluster_config(cudaLaunchAttribute* attr, int64_t grid, int k,
                                         size_t smem) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(grid));
  config.blockDim = dim3(kBlockThreads);
  config.dynamicSmemBytes = smem;
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = static_cast<unsigned>(k);
  attr->val.clusterDim.y = 1;
  attr->val.clusterDim.z = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  return config;
}

// Clusters of k blocks with `smem` bytes each that fit on the GPU at once; 0 when
// none does (no clusters, too much shared memory, or a size this GPU does not allow).
template <class Kernel>
int active_clusters(Kernel kernel, int k, size_t smem) {
  static std::map<std::tuple<const void*, int, size_t>, int> known;
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), k, smem);
  const auto it = known.find(key);
  if (it != known.end()) return it->second;
  int clusters = 0;
  if (has_clusters() && static_cast<int64_t>(smem) <= smem_optin()) {
    allow_all_smem(kernel);
    bool allowed = true;
    if (k > 8 && cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) !=
                     cudaSuccess) {
      cudaGetLastError();  // clear it: this GPU allows no more than 8
      allowed = false;
    }
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t config = cluster_config(&attr, k, k, smem);
    if (allowed && cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
      cudaGetLastError();
      clusters = 0;
    }
  }
  return known[key] = clusters;
}

template <class T, bool kPacked>
__global__ void __launch_bounds__(kBlockThreads)
    count_cluster(const T* __restrict__ in, int64_t n, uint32_t bins, uint32_t slice,
                  HistCount* __restrict__ hist, uint32_t* __restrict__ partials,
                  uint32_t* __restrict__ row_base) {
  extern __shared__ uint32_t words[];  // this block's slice of the bins
  const int64_t nwords = kPacked ? slice / 2 : slice;
  for (int64_t i = threadIdx.x; i < nwords; i += kBlockThreads) words[i] = 0;
  cluster_sync();
  ClusterCounter<T, kPacked> counter{words, bins, slice, hist};
  count_input<T, kBlockThreads>(in, n, counter);
  cluster_sync();
  store_row(words, nwords, partials, row_base, int64_t{cluster_rank()} * nwords);
}

// Both cluster steps' launcher: as many clusters as fit at once, striding over the
// input; then add_partials adds up the blocks' slices.
template <class T, bool kPacked>
void launch_cluster(const Job& j) {
  const Slice s = cluster_slice(j.bins, j.cluster, kPacked);
  const size_t smem = sizeof(uint32_t) * s.words;
  // 32-bit counters: no cluster may see 2^32 values.
  const int64_t clusters =
      std::max<int64_t>(active_clusters(count_cluster<T, kPacked>, j.cluster, smem),
                        kPacked ? 1 : sw::ceil_div(j.n, kMaxValuesPerBlock));
  const int64_t grid = clusters * j.cluster;
  uint32_t* partials = Workspace::grow(j.ws->partials, grid * s.words);
  uint32_t* row_base = Workspace::grow(j.ws->row_base, grid);
  zero_hist(j);
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t config = cluster_config(&attr, grid, j.cluster, smem);
  CUDA_CHECK(cudaLaunchKernelEx(&config, count_cluster<T, kPacked>, j.values<T>(), j.n, j.bins,
                                s.bins, j.hist, partials, row_base));
  CHECK_LAUNCH();
  add_partials<kPacked><<<add_grid<kPacked>(j.bins, grid), kAddThreads>>>(partials, row_base, grid,
                                                                          s.words, j.bins, j.hist);
  CHECK_LAUNCH();
}

// The clusters of the job's size that fit at once (the grid of the cluster steps).
template <class T, bool kPacked>
int clusters_for(const Job& j) {
  const size_t smem = sizeof(uint32_t) * cluster_slice(j.bins, j.cluster, kPacked).words;
  return active_clusters(count_cluster<T, kPacked>, j.cluster, smem);
}
template <class T, bool kPacked>
bool fits_cluster(const Job& j) {
  return clusters_for<T, kPacked>(j) > 0;
}

}  // namespace ch15
