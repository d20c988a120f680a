// Chapter 15, step 9: partition, for more bins than one SM holds: the values sorted
// by slice of the bins through global memory, then each slice counted in one block.
// Kernels and launchers as one unit, included at the top of 15_many_bins_histogram.cu.
#pragma once

#include <algorithm>
#include <cstdint>

#include "counting.cuh"
#include "packed16.cuh"

namespace ch15 {

// Slices of at most 2^16 bins (a value's index in its slice is 16 bits).
constexpr int kMaxSliceLog2 = 16;
constexpr int kMaxParts = 64;
constexpr int kScatterThreads = 512;      // pass 1's block
constexpr int kTileValuesPerThread = 16;  // pass 1: values per thread per tile
constexpr int kTileValues = kScatterThreads * kTileValuesPerThread;  // 8192 values per tile
constexpr int kTilesPerClaim = 4;              // pass 2: tiles a warp takes at a time
constexpr int kCountUnroll = 8;                // pass 2: loads in flight per lane
constexpr uint32_t kHotCountLimit = 1u << 26;  // pass 1: a register count this large goes out

// =========================================================================================
// Step 9: partition. Bins beyond one SM are split into slices of 2^16 bins (a slice's
// packed counters fill 128 KiB). Pass 1 reads each tile of 8192 values, counts the
// warp's hot bin in registers (as packed16-hot) and sorts the other values by slice in
// shared memory; the tile's sorted values, as 16-bit indices within their slice, go
// to the tile's own place in global memory with 16-byte stores, with the slices'
// offsets in a small header. Pass 2 gives every slice blocks in proportion to its
// values; each block holds its slice's counters and its warps take tiles from a
// per-slice counter, counting the slice's part of each tile with packed16-hot.
// DRAM traffic per 32-bit value: 4 bytes read, 2 written, 2 read again.
// =========================================================================================

// Slices of 2^16 bins, or fewer where a GPU's shared memory is smaller.
inline int slice_log2() {
  int s = kMaxSliceLog2;
  while (s > 1 && (int64_t{1} << s) / 2 * 4 > smem_optin() - 64)
    --s;  // 64: its static shared memory
  return s;
}
inline int64_t slice_count(uint32_t bins) { return sw::ceil_div(bins, int64_t{1} << slice_log2()); }

inline bool fits_partition(const Job& j) {
  return slice_count(j.bins) >= 2 && slice_count(j.bins) <= kMaxParts;
}

// The warp's counts of its hot bin (the same bin in every lane) in one global atomic:
// one per lane would queue up to 32 adds on one L2 address. The whole warp calls it.
__device__ inline void add_warp_count(HistCount* hist, uint32_t hot, uint32_t count) {
  uint32_t sum = count;  // lanes hold at most kHotCountLimit each: the sum fits 32 bits
#pragma unroll
  for (int d = kWarp / 2; d > 0; d /= 2) sum += __shfl_xor_sync(kFullMask, sum, d);
  if (threadIdx.x % kWarp == 0 && sum) atomicAdd(&hist[hot], HistCount{sum});
}

// Pass 1. `values` holds kTileValues 16-bit entries per tile; header[t][r] is where
// slice r's entries of tile t start (header[t][parts] = how many the tile kept).
template <class T>
__global__ void __launch_bounds__(kScatterThreads)
    scatter_partitions(const T* __restrict__ in, int64_t n, uint32_t bins, int slice_log2,
                       int parts, uint16_t* __restrict__ values, uint16_t* __restrict__ header,
                       unsigned long long* __restrict__ part_total, HistCount* __restrict__ hist) {
  constexpr int kVecs = kTileValuesPerThread / kVec<T>;  // vectors per thread per tile
  constexpr int kTileVecs = kScatterThreads * kVecs;
  __shared__ uint32_t count[kMaxParts];       // the tile's values per slice, then positions in it
  __shared__ uint32_t offset[kMaxParts + 1];  // where each slice starts in the sorted tile
  __shared__ __align__(16) uint16_t stage[kTileValues];
  const int lane = threadIdx.x % kWarp;
  const uint32_t slice_mask = (1u << slice_log2) - 1;
  const sw::Split16 s = sw::split16(in, n);
  const int64_t tid = int64_t{blockIdx.x} * kScatterThreads + threadIdx.x;
  if (tid < s.head)
    atomicAdd(&hist[bin_of_key(key_of(in[tid]), bins)], HistCount{1});  // edges: straight to memory
  if (tid < n - s.tail) atomicAdd(&hist[bin_of_key(key_of(in[s.tail + tid]), bins)], HistCount{1});
  for (int r = threadIdx.x; r < kMaxParts; r += kScatterThreads) count[r] = 0;
  __syncthreads();
  const uint4* vec = reinterpret_cast<const uint4*>(in + s.head);
  const int64_t tiles = sw::ceil_div(s.nvec, kTileVecs);
  uint32_t hot = kNoBin, hot_count = 0;  // as in packed16-hot, but the count goes to global memory
  for (int64_t t = blockIdx.x; t < tiles;
       t += gridDim.x) {  // the same trip count for the whole block
    uint4 v[kVecs];
    bool ok[kVecs];
#pragma unroll
    for (int u = 0; u < kVecs; ++u) {
      const int64_t i = t * kTileVecs + int64_t{u} * kScatterThreads + threadIdx.x;
      ok[u] = i < s.nvec;
      v[u] = ok[u] ? __ldg(&vec[i]) : make_uint4(0, 0, 0, 0);
    }
    // The vote of packed16-hot.
    const uint32_t mine = ok[0] ? bin_of_key(key_at<T>(v[0], 0), bins) : kNoBin;
    const uint32_t lead = __shfl_sync(kFullMask, mine, 0);
    const unsigned agree = __ballot_sync(kFullMask, mine == lead);
    if (lead != kNoBin && lead != hot && __popc(agree) >= kHotLanes) {
      add_warp_count(hist, hot, hot_count);
      hot = lead;
      hot_count = 0;
    }
    // Each value: the hot bin in the register, the others take a place in their slice.
    uint32_t where[kTileValuesPerThread];  // slice << 16 | place in the slice, or kNoBin
    uint32_t local[kTileValuesPerThread];  // the bin's index in its slice
#pragma unroll
    for (int u = 0; u < kVecs; ++u)
#pragma unroll
      for (int k = 0; k < kVec<T>; ++k) {
        const int j = u * kVec<T> + k;
        const uint32_t bin = bin_of_key(key_at<T>(v[u], k), bins);
        where[j] = kNoBin;
        local[j] = bin & slice_mask;
        if (ok[u]) {
          if (bin == hot) {
            ++hot_count;
          } else {
            const uint32_t r = bin >> slice_log2;
            where[j] = (r << 16) | atomicAdd(&count[r], 1u);
          }
        }
      }
    if (hot_count >= kHotCountLimit) {
      atomicAdd(&hist[hot], HistCount{hot_count});
      hot_count = 0;
    }
    __syncthreads();            // 1: the tile's counts are complete
    if (threadIdx.x < kWarp) {  // warp 0: offsets by a scan over the slices (two per lane), totals
      const uint32_t a = lane < parts ? count[lane] : 0;
      const uint32_t b = lane + kWarp < parts ? count[lane + kWarp] : 0;
      uint32_t sa = a, sb = b;
#pragma unroll
      for (int d = 1; d < kWarp; d *= 2) {
        const uint32_t ya = __shfl_up_sync(kFullMask, sa, d), yb = __shfl_up_sync(kFullMask, sb, d);
        if (lane >= d) sa += ya, sb += yb;
      }
      const uint32_t first_half = __shfl_sync(kFullMask, sa, kWarp - 1);
      if (lane == 0) offset[0] = 0;
      offset[lane + 1] = sa;
      offset[lane + kWarp + 1] = first_half + sb;
      if (a) atomicAdd(&part_total[lane], static_cast<unsigned long long>(a));
      if (b) atomicAdd(&part_total[lane + kWarp], static_cast<unsigned long long>(b));
    }
    __syncthreads();  // 2: offsets known; count[] read
#pragma unroll
    for (int j = 0; j < kTileValuesPerThread; ++j)
      if (where[j] != kNoBin)
        stage[offset[where[j] >> 16] + (where[j] & 0xFFFFu)] = static_cast<uint16_t>(local[j]);
    for (int r = threadIdx.x; r <= parts; r += kScatterThreads)
      header[t * (parts + 1) + r] = static_cast<uint16_t>(offset[r]);
    for (int r = threadIdx.x; r < kMaxParts; r += kScatterThreads) count[r] = 0;
    __syncthreads();  // 3: the tile is sorted in `stage`
    const int64_t kept = offset[parts];
    uint4* out = reinterpret_cast<uint4*>(values + t * kTileValues);
    const uint4* sorted = reinterpret_cast<const uint4*>(stage);
    for (int64_t i = threadIdx.x; i < sw::ceil_div(kept, 8); i += kScatterThreads)
      out[i] = sorted[i];
  }
  add_warp_count(hist, hot, hot_count);
}

// Pass 2's choice for block g of `blocks`: one block for each slice with values,
// the others spread in proportion to the values (block g stands for the point
// (g - busy + 1/2) / spare of all values).
__device__ inline int pick_slice(const unsigned long long* total, int parts, unsigned g,
                                 unsigned blocks) {
  int busy = 0;
  unsigned long long sum = 0;
  for (int r = 0; r < parts; ++r) {
    busy += total[r] > 0;
    sum += total[r];
  }
  if (busy == 0) return static_cast<int>(g % parts);
  if (g < static_cast<unsigned>(busy)) {
    for (int r = 0, seen = 0; r < parts; ++r)
      if (total[r] > 0 && seen++ == static_cast<int>(g)) return r;
  }
  const unsigned long long spare = blocks - busy;
  const unsigned long long point = ((g - busy) * 2ull + 1) * sum / (2 * spare);
  unsigned long long below = 0;
  for (int r = 0; r < parts; ++r) {
    below += total[r];
    if (point < below) return r;
  }
  return parts - 1;
}

// Pass 2: the block's slice of the bins in shared memory (packed), its warps
// taking tiles kTilesPerClaim at a time.
__global__ void __launch_bounds__(kBlockThreads, 1)
    count_partitions(const uint16_t* __restrict__ values, const uint16_t* __restrict__ header,
                     int64_t tiles, int parts, int slice_log2, uint32_t bins,
                     const unsigned long long* __restrict__ part_total,
                     unsigned* __restrict__ part_next, HistCount* __restrict__ hist,
                     uint32_t* __restrict__ partials, uint32_t* __restrict__ row_base) {
  extern __shared__ uint32_t words[];  // 2^slice_log2 bins, packed
  __shared__ int slice;
  const int64_t nwords = int64_t{1} << (slice_log2 - 1);
  const int lane = threadIdx.x % kWarp;
  if (threadIdx.x == 0) slice = pick_slice(part_total, parts, blockIdx.x, gridDim.x);
  for (int64_t i = threadIdx.x; i < nwords; i += kBlockThreads) words[i] = 0;
  __syncthreads();
  const int r = slice;
  const uint32_t first_bin = static_cast<uint32_t>(r) << slice_log2;
  uint32_t hot = kNoBin, hot_count = 0;  // a local index, as in packed16-hot
  for (;;) {
    unsigned t0 = 0;
    if (lane == 0) t0 = atomicAdd(&part_next[r], static_cast<unsigned>(kTilesPerClaim));
    t0 = __shfl_sync(kFullMask, t0, 0);
    if (t0 >= tiles) break;
    const int64_t t_end = t0 + kTilesPerClaim < tiles ? t0 + kTilesPerClaim : tiles;
    for (int64_t t = t0; t < t_end; ++t) {
      const int b = header[t * (parts + 1) + r], e = header[t * (parts + 1) + r + 1];
      const uint16_t* tile = values + t * kTileValues;
      for (int base = b; base < e;
           base += kWarp * kCountUnroll) {  // the same trips for the whole warp
        uint32_t x[kCountUnroll];
#pragma unroll
        for (int u = 0; u < kCountUnroll; ++u) {
          const int i = base + u * kWarp + lane;
          x[u] = i < e ? __ldg(&tile[i]) : kNoBin;
        }
        const uint32_t lead = __shfl_sync(kFullMask, x[0], 0);
        const unsigned agree = __ballot_sync(kFullMask, x[0] == lead);
        if (lead != kNoBin && lead != hot && __popc(agree) >= kHotLanes) {
          if (hot_count) packed_add(words, hot, first_bin + hot, hot_count, bins, hist);
          hot = lead;
          hot_count = 0;
        }
        uint32_t old[kCountUnroll], seen = 0;  // as packed_add_batch
#pragma unroll
        for (int u = 0; u < kCountUnroll; ++u) {
          const bool valid = x[u] != kNoBin, is_hot = valid && x[u] == hot;
          hot_count += is_hot;
          old[u] = valid && !is_hot ? packed_issue(words, x[u], 1) : 0u;
          seen |= old[u];
        }
        if (seen & 0x80008000u) {
#pragma unroll
          for (int u = 0; u < kCountUnroll; ++u)
            if (packed_wrapped(old[u], x[u], 1))
              hand_over_wrap(first_bin + x[u], old[u], bins, hist);
        }
        if (hot_count >= kFlushAt) {
          packed_add(words, hot, first_bin + hot, hot_count, bins, hist);
          hot_count = 0;
        }
      }
    }
  }
  if (hot_count) packed_add(words, hot, first_bin + hot, hot_count, bins, hist);
  __syncthreads();
  store_row(words, nwords, partials, row_base, int64_t{r} * nwords);
}

// partition's launcher: pass 1 and pass 2 each on a full wave (pass 2 at least one block
// per slice), then add_partials adds up the slices' rows.
template <class T>
void launch_partition(const Job& j) {
  constexpr int kTileVecs = kScatterThreads * (kTileValuesPerThread / kVec<T>);
  const int sl = slice_log2();
  const int parts = static_cast<int>(slice_count(j.bins));
  const int64_t nwords = int64_t{1} << (sl - 1);
  const int64_t tiles = sw::ceil_div(sw::split16(j.values<T>(), j.n).nvec, kTileVecs);
  Workspace& w = *j.ws;
  uint16_t* values = Workspace::grow(w.part_values, std::max<int64_t>(tiles, 1) * kTileValues);
  uint16_t* header = Workspace::grow(w.part_header, std::max<int64_t>(tiles, 1) * (parts + 1));
  unsigned long long* part_total = Workspace::grow(w.part_total, kMaxParts);
  unsigned* part_next = Workspace::grow(w.part_next, kMaxParts);
  const size_t smem = sizeof(uint32_t) * nwords;
  const int64_t grid1 = wave(scatter_partitions<T>, kScatterThreads, 0);
  const int64_t grid2 = std::max<int64_t>(wave(count_partitions, kBlockThreads, smem), parts);
  uint32_t* partials = Workspace::grow(w.partials, grid2 * nwords);
  uint32_t* row_base = Workspace::grow(w.row_base, grid2);
  zero_hist(j);
  CUDA_CHECK(cudaMemsetAsync(part_total, 0, sizeof(unsigned long long) * kMaxParts));
  CUDA_CHECK(cudaMemsetAsync(part_next, 0, sizeof(unsigned) * kMaxParts));
  scatter_partitions<T><<<grid1, kScatterThreads>>>(j.values<T>(), j.n, j.bins, sl, parts, values,
                                                    header, part_total, j.hist);
  CHECK_LAUNCH();
  count_partitions<<<grid2, kBlockThreads, smem>>>(
      values, header, tiles, parts, sl, j.bins, part_total, part_next, j.hist, partials, row_base);
  CHECK_LAUNCH();
  add_partials<true><<<add_grid<true>(j.bins, grid2), kAddThreads>>>(partials, row_base, grid2,
                                                                     nwords, j.bins, j.hist);
  CHECK_LAUNCH();
}

}  // namespace ch15
