// Evidence for docs/18 (issue 46, sort pairs): the write-out of one radix pass over random
// keys, alone: no ranking, no look-back. The host sorts each tile of random keys by their low
// byte and computes each tile's place[d] (where digit d's keys of the tile go, less where
// they start in the tile), as the look-back would; a block loads its tile (keys, or keys
// and values), and key i of the tile goes to place[digit] + i. What is left is a pass's
// memory pattern: a coalesced read, then 256 runs of random length a tile (tile / 256 keys
// on average). Each tile shape with and without chapter 16's L2 prefetch 4 MiB ahead; the
// keys' output is checked to be in digit order. 2^28 keys; the median of 20 timed launches.
// A probe outside the chapters' programs, it times its launches itself (CUDA events, three
// warm-up launches left out, sw::median of 20); the chapters' rows go through sw::bench::measure.
// usage: bash docs/evidence/18_write_out.sh <build_dir>
//        18_write_out [RxB [K]]: only the tile of R rows x B threads, at most K blocks an SM
//        (dynamic shared memory that only K blocks fit), for the profiler.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/timing.h"

template <int R, int B, bool kPairs, bool kAhead>
__global__ void __launch_bounds__(B)
    write_out(const uint32_t* __restrict__ k_in, const uint32_t* __restrict__ v_in,
              const uint32_t* __restrict__ place, uint32_t* k_out, uint32_t* v_out, int64_t n,
              int64_t ahead) {
  constexpr int T = R * B;
  __shared__ uint32_t p[256];
  const int64_t tile = blockIdx.x;
  if (kAhead && threadIdx.x == 0 && (tile + ahead + 1) * T <= n) {  // chapter 16's L2 prefetch
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(k_in + (tile + ahead) * T),
                 "r"(T * 4)
                 : "memory");
    if (kPairs)
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(v_in + (tile + ahead) * T),
                   "r"(T * 4)
                   : "memory");
  }
  if (threadIdx.x < 256) p[threadIdx.x] = place[tile * 256 + threadIdx.x];
  uint32_t k[R], v[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t i = tile * T + r * B + threadIdx.x;
    k[r] = i < n ? k_in[i] : 0;
    if (kPairs) v[r] = i < n ? v_in[i] : 0;
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const unsigned i = r * B + threadIdx.x;
    if (tile * T + i >= n) break;
    const uint32_t to = p[k[r] & 255] + i;
    k_out[to] = k[r];
    if (kPairs) v_out[to] = v[r];
  }
}

static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

int g_blocks_cap = 0;  // 0: as many blocks an SM as fit

template <int R, int B>
void run(const std::vector<uint32_t>& keys, uint32_t* d_keys, const uint32_t* d_vals, uint32_t* ko,
         uint32_t* vo, uint32_t* d_place, int64_t n) {
  constexpr int T = R * B;
  const int64_t tiles = (n + T - 1) / T;
  std::vector<uint32_t> sorted(n), place(tiles * 256);
  std::vector<uint32_t> count(tiles * 256, 0);
#pragma omp parallel for
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t b = t * T, e = std::min(n, b + T);
    uint32_t* c = &count[t * 256];
    for (int64_t i = b; i < e; ++i) ++c[keys[i] & 255];
    uint32_t start[256], s = 0;
    for (int d = 0; d < 256; ++d) start[d] = s, s += c[d];
    for (int64_t i = b; i < e; ++i) sorted[b + start[keys[i] & 255]++] = keys[i];
  }
  // place[t][d] = (digit d's keys before it: all tiles) + (tiles before t: digit d) - start in tile t
  std::vector<uint64_t> base(257, 0);
  for (int64_t t = 0; t < tiles; ++t)
    for (int d = 0; d < 256; ++d) base[d + 1] += count[t * 256 + d];
  for (int d = 0; d < 256; ++d) base[d + 1] += base[d];
  std::vector<uint64_t> run_at(base.begin(), base.end() - 1);
  for (int64_t t = 0; t < tiles; ++t) {
    uint32_t s = 0;
    for (int d = 0; d < 256; ++d) {
      place[t * 256 + d] = static_cast<uint32_t>(run_at[d] - s);
      s += count[t * 256 + d];
      run_at[d] += count[t * 256 + d];
    }
  }
  CUDA_CHECK(cudaMemcpy(d_keys, sorted.data(), n * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_place, place.data(), tiles * 256 * 4, cudaMemcpyHostToDevice));
  for (int variant = 0; variant < 4; ++variant) {
    const bool pairs = variant & 1, with_ahead = variant & 2;
    auto kern = pairs ? (with_ahead ? write_out<R, B, true, true> : write_out<R, B, true, false>)
                      : (with_ahead ? write_out<R, B, false, true> : write_out<R, B, false, false>);
    const int64_t ahead = (int64_t{4} << 20) / (int64_t{T} * 4 * (pairs ? 2 : 1));
    int smem_sm = 0, blocks = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
    const int shm = g_blocks_cap ? smem_sm / g_blocks_cap - 2048 : 0;  // 1 KiB reserved, 1 KiB p[]
    CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, shm));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kern, B, shm));
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    std::vector<double> ms;
    for (int rep = 0; rep < 23; ++rep) {
      CUDA_CHECK(cudaEventRecord(a));
      kern<<<tiles, B, shm>>>(d_keys, d_vals, d_place, ko, vo, n, ahead);
      CHECK_LAUNCH();
      CUDA_CHECK(cudaEventRecord(b));
      CUDA_CHECK(cudaEventSynchronize(b));
      float t;
      CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
      if (rep >= 3) ms.push_back(t);
    }
    const double med = sw::median(ms), bytes = 2.0 * n * 4 * (pairs ? 2 : 1);
    if (!pairs) {  // the output in digit order: every key placed, none overwritten
      const std::vector<uint32_t> out = sw::read(ko, n);
      int64_t bad = 0;
      for (int64_t i = 1; i < n; ++i) bad += (out[i - 1] & 255) > (out[i] & 255);
      if (bad) {
        printf("CHECK FAILED: %lld descents\n", static_cast<long long>(bad));
        std::exit(1);
      }
    }
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    printf(
        "write-out%s %s %2dx%3d (%5d keys, %4.1f a run)  %2d blocks/SM  %8.1f us  %7.1f GB/s  "
        "%6.2f GKey/s\n",
        with_ahead ? "+ahead" : "      ", pairs ? "pairs" : "keys ", R, B, T, T / 256.0, blocks,
        med * 1e3, bytes / (med * 1e6), n / (med * 1e6));
  }
}

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  if (argc > 2) g_blocks_cap = std::atoi(argv[2]);
  const int64_t n = int64_t{1} << 28;
  std::vector<uint32_t> keys(n);
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) keys[i] = static_cast<uint32_t>(mix(i) >> 16);
  uint32_t *dk, *dv, *ko, *vo, *dp;
  CUDA_CHECK(cudaMalloc(&dk, n * 4));
  CUDA_CHECK(cudaMalloc(&dv, n * 4));
  CUDA_CHECK(cudaMalloc(&ko, n * 4));
  CUDA_CHECK(cudaMalloc(&vo, n * 4));
  CUDA_CHECK(cudaMalloc(&dp, (n / 1024 + 1) * 256 * 4));
  CUDA_CHECK(cudaMemset(dv, 2, n * 4));
  if (only.empty() || only == "20x384") run<20, 384>(keys, dk, dv, ko, vo, dp, n);
  if (only.empty() || only == "24x384") run<24, 384>(keys, dk, dv, ko, vo, dp, n);
  if (only.empty() || only == "16x512") run<16, 512>(keys, dk, dv, ko, vo, dp, n);
  if (only.empty() || only == "24x512") run<24, 512>(keys, dk, dv, ko, vo, dp, n);
  if (only.empty() || only == "32x512") run<32, 512>(keys, dk, dv, ko, vo, dp, n);
  if (only.empty() || only == "48x512") run<48, 512>(keys, dk, dv, ko, vo, dp, n);
  if (only.empty() || only == "64x512") run<64, 512>(keys, dk, dv, ko, vo, dp, n);
  return 0;
}
