// Chapter 08: privatized histograms, from the seed's shared-memory kernel to one that beats CUB.
//
// What changed:  chapter 07 sent every byte to one of 256 counters in global
//                memory. Here each block counts into private counters in shared
//                memory and adds them to the global totals once, at the end: the
//                seed's two phases. Then one measured step at a time:
//                  seed-2xsm         the seed: one shared histogram per block, 2 x SM blocks
//                  shared-full-grid  the same kernel with enough blocks to fill every SM
//                  per-warp          one sub-histogram per warp: warps stop sharing counters
//                  per-warp-vec16    each thread loads 16 bytes at a time
//                  spread16-vec16    16 copies per warp, so that the 32 lanes of one atomic
//                                    instruction fall into different shared-memory banks
//                  adaptive-vec16    the warp votes: when most lanes hold the same byte they
//                                    share one copy again, because the hardware merges
//                                    atomics to one address but not to 16 addresses
// Why faster:    a shared-memory atomic is a short trip inside the SM, where a global one
//                crosses the chip to L2; private copies cut the contention; 16-byte loads
//                keep enough bytes in flight to cover DRAM latency.
// Bottleneck:    byte loads are latency-bound (the seed); with 16-byte loads, the shared-
//                memory atomic unit: bank conflicts on uniform bytes, same-address traffic
//                on repeated bytes. The best variant gets close to DRAM bandwidth on
//                repeated bytes.
// Run:           build/chapters/08_histogram_privatized [--bytes 2^30] [--offset K]
//                [--dist uniform|equal|skewed|mix --value V --p P] [--file PATH]
//                [--verify-only [--large]] [--json]
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/cli.h"
#include "common/data.h"
#include "common/device.h"
#include "common/histogram_harness.h"
#include "common/report.h"

namespace {

using sw::HistCount;
using sw::kBins;

constexpr int kSeedThreads = 256;       // the seed's block: one thread per bin
constexpr int kSeedBlocksPerSm = 2;     // the seed's grid: 2 x SM count
constexpr int kVecThreads = 64;         // 2 warps: with 16 copies, 33 to 37 KiB of shared memory per
                                        // block, under the 48 KiB every GPU gives without opting in
constexpr int kUnroll = 8;              // 16-byte loads in flight per thread
constexpr int kSpreadCopies = 16;       // copies per warp in the spread variants
constexpr int kHotLanes = 16;           // adaptive: this many lanes agreeing with lane 0 share one copy
constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
// A block's shared counters are 32 bits: no block may see 2^32 bytes. The grid
// is made large enough that each block gets at most this many.
constexpr int64_t kMaxBytesPerBlock = int64_t{1} << 31;
constexpr double kSweepRepsFraction = 0.25;  // the sweep times fewer reps than the main table
const std::vector<double> kSweepP = {0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0};

static_assert(kSeedThreads == kBins, "the seed's kernel has one thread per bin");
static_assert(kVecThreads % kWarp == 0 && kBins % kWarp == 0, "whole warps");

// --- kernels ------------------------------------------------------------------------

// The seed (kPerWarp = false): a grid-stride loop over bytes, one shared-memory
// atomic per byte into the block's histogram; then each thread adds its bin to
// the global total. kPerWarp = true: each warp counts into its own copy, and the
// copies are summed at the end.
template <bool kPerWarp>
__global__ void __launch_bounds__(kSeedThreads)
histogram_shared_bytes(const uint8_t* __restrict__ in, int64_t n, HistCount* __restrict__ hist) {
  constexpr int kCopies = kPerWarp ? kSeedThreads / kWarp : 1;
  __shared__ uint32_t sub[kCopies][kBins];
  const int bin = threadIdx.x;
  for (int c = 0; c < kCopies; ++c) sub[c][bin] = 0;
  __syncthreads();

  uint32_t* mine = sub[kPerWarp ? threadIdx.x / kWarp : 0];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(&mine[in[i]], 1u);
  __syncthreads();

  uint32_t total = 0;
  for (int c = 0; c < kCopies; ++c) total += sub[c][bin];
  if (total) atomicAdd(&hist[bin], static_cast<HistCount>(total));  // one global atomic per bin per block
}

// Counts the 16 bytes of v into one column of a [kBins][kCopies] sub-histogram.
template <int kCopies>
__device__ __forceinline__ void count16(uint32_t* column, uint4 v) {
  const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int k = 0; k < 4; ++k)
#pragma unroll
    for (int j = 0; j < 4; ++j) atomicAdd(&column[((words[k] >> (8 * j)) & 0xFFu) * kCopies], 1u);
}

// 16-byte loads. Each warp owns a [kBins][kCopies] sub-histogram: bin b of copy c
// is word b * kCopies + c, and lane l uses copy l % kCopies. With one copy
// (per-warp-vec16) the bank of a lane's atomic is set by its byte alone, so 32
// random bytes collide in a few banks; with 16 copies, only lanes l and l + 16
// can share a bank. kAdaptive adds a plain [kBins] histogram per warp: a warp
// whose lanes mostly start their vectors with lane 0's byte counts that step
// there, where the many atomics to one address merge.
template <int kCopies, bool kAdaptive, bool kRuns = false>
__global__ void __launch_bounds__(kVecThreads)
histogram_vec16(const uint8_t* __restrict__ in, int64_t n, HistCount* __restrict__ hist) {
  static_assert(!kRuns || kAdaptive, "runs are counted on the adaptive kernel's plain path");
  extern __shared__ uint32_t smem[];  // [kBins] block totals, then kWarps x kWarpWords
  constexpr int kWarps = kVecThreads / kWarp;
  constexpr int kWarpWords = kBins * kCopies + (kAdaptive ? kBins : 0) + (kRuns ? kBins : 0);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  uint32_t* block_total = smem;
  uint32_t* sub = smem + kBins + warp * kWarpWords;  // the warp's copies...
  uint32_t* dense = sub + kBins * kCopies;           // ...and, if kAdaptive, its plain histogram
  uint32_t* runs = dense + kBins;                    // kRuns: vectors of 16 equal bytes, per byte value
  for (int i = threadIdx.x; i < kBins + kWarps * kWarpWords; i += kVecThreads) smem[i] = 0;
  __syncthreads();

  uint32_t* column = sub + lane % kCopies;  // this lane's copy
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kVecThreads;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * kVecThreads + threadIdx.x;

  // [in, in + n) = a head up to the first 16-byte boundary, whole 16-byte
  // vectors, and a tail of fewer than 16 bytes. Head and tail bytes (at most 15
  // each) go one per thread to the first threads of the grid.
  const int64_t to_boundary = (16 - (reinterpret_cast<uintptr_t>(in) & 15)) & 15;
  const int64_t head = n < to_boundary ? n : to_boundary;
  const int64_t nvec = (n - head) / 16;
  const int64_t tail = head + nvec * 16;
  const uint4* vec = reinterpret_cast<const uint4*>(in + head);
  if (tid < head) atomicAdd(&column[in[tid] * kCopies], 1u);
  if (tid < n - tail) atomicAdd(&column[in[tail + tid] * kCopies], 1u);

  // Main loop: kUnroll loads in flight per thread before the first atomic. Its
  // bounds are the same for the whole warp, since the vote needs all 32 lanes.
  int64_t first = tid - lane;  // the warp's first vector
  for (; first + (kWarp - 1) + (kUnroll - 1) * threads < nvec; first += kUnroll * threads) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(&vec[first + lane + u * threads]);
    bool hot = false;
    if (kAdaptive) {
      const uint32_t mine = v[0].x & 0xFFu;
      const uint32_t lead = __shfl_sync(kFullMask, mine, 0);
      hot = __popc(__ballot_sync(kFullMask, mine == lead)) >= kHotLanes;  // the same for all lanes
    }
    if (hot) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const uint4 x = v[u];
        // 16 equal bytes (x.x == its byte 0 repeated) count as one run. Only when
        // every lane has a run, so that the warp never executes both paths.
        const bool run = x.x == x.y && x.x == x.z && x.x == x.w && x.x == __byte_perm(x.x, 0, 0);
        if (kRuns && __all_sync(kFullMask, run))
          atomicAdd(&runs[x.x & 0xFFu], 1u);
        else
          count16<1>(dense, x);
      }
    } else {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) count16<kCopies>(column, v[u]);
    }
  }
  for (int64_t i = first + lane; i < nvec; i += threads) count16<kCopies>(column, __ldg(&vec[i]));

  // Merge: the warp's copies into the block total (copies read in a rotated
  // order, to spread the banks), then one global atomic per bin per block.
  __syncwarp();
  for (int bin = lane; bin < kBins; bin += kWarp) {
    uint32_t sum = (kAdaptive ? dense[bin] : 0) + (kRuns ? 16 * runs[bin] : 0);
    for (int c = 0; c < kCopies; ++c) sum += sub[bin * kCopies + (c + lane) % kCopies];
    if (sum) atomicAdd(&block_total[bin], sum);
  }
  __syncthreads();
  for (int bin = threadIdx.x; bin < kBins; bin += kVecThreads)
    if (block_total[bin]) atomicAdd(&hist[bin], static_cast<HistCount>(block_total[bin]));
}

// --- launches -------------------------------------------------------------------------

// At least enough blocks that none gets more than kMaxBytesPerBlock bytes.
int grid_for(int64_t n, int64_t blocks) {
  return static_cast<int>(std::max<int64_t>(blocks, (n + kMaxBytesPerBlock - 1) / kMaxBytesPerBlock));
}

// Resident blocks of `kernel` per SM times the SM count: the grid that fills the GPU.
template <class Kernel>
int full_grid(Kernel kernel, int threads, size_t smem, int sms) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  return std::max(1, per_sm) * sms;
}

template <bool kPerWarp>
void launch_bytes(const uint8_t* in, int64_t n, HistCount* hist, int blocks) {
  CUDA_CHECK(cudaMemsetAsync(hist, 0, kBins * sizeof(HistCount)));  // zeroing is part of the job
  histogram_shared_bytes<kPerWarp><<<grid_for(n, blocks), kSeedThreads>>>(in, n, hist);
  CHECK_LAUNCH();
}

// A vec16 kernel with its shared memory and its full grid, set up once.
template <int kCopies, bool kAdaptive, bool kRuns = false>
struct Vec16 {
  size_t smem = sizeof(uint32_t) * kBins * (1 + (kVecThreads / kWarp) * (kCopies + kAdaptive + kRuns));
  int max_blocks = 0;

  explicit Vec16(int sms) {
    CUDA_CHECK(cudaFuncSetAttribute(histogram_vec16<kCopies, kAdaptive, kRuns>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    max_blocks = full_grid(histogram_vec16<kCopies, kAdaptive, kRuns>, kVecThreads, smem, sms);
  }
  void operator()(const uint8_t* in, int64_t n, HistCount* hist) const {
    // No more blocks than there are vectors to give one to each thread.
    const int64_t wanted = (n / 16 + kVecThreads - 1) / kVecThreads;
    const int blocks = grid_for(n, std::clamp<int64_t>(wanted, 1, max_blocks));
    CUDA_CHECK(cudaMemsetAsync(hist, 0, kBins * sizeof(HistCount)));
    histogram_vec16<kCopies, kAdaptive, kRuns><<<blocks, kVecThreads, smem>>>(in, n, hist);
    CHECK_LAUNCH();
  }
};

}  // namespace

int main(int argc, char** argv) {
  sw::HistOptions h;
  sw::Cli cli("08_histogram_privatized", "256-bin byte histogram with privatized shared-memory counters.");
  sw::add_histogram_options(cli, &h);
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::ByteSpec spec = sw::histogram_spec(cli, &h);
  sw::check_histogram_file_or_exit(h);
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "08", "histogram");

  const int sms = gpu.info.sm_count;
  const int seed_grid = kSeedBlocksPerSm * sms;
  const int bytes_grid = full_grid(histogram_shared_bytes<false>, kSeedThreads, 0, sms);
  const int warp_grid = full_grid(histogram_shared_bytes<true>, kSeedThreads, 0, sms);
  const Vec16<1, false> per_warp_vec16(sms);
  const Vec16<kSpreadCopies, false> spread16(sms);
  const Vec16<kSpreadCopies, true> adaptive16(sms);
  const Vec16<kSpreadCopies, true, true> adaptive_runs16(sms);

  sw::DeviceBuffer<HistCount> d_hist(kBins);
  HistCount* out = d_hist.get();
  const std::vector<sw::HistVariant> steps = {
      sw::device_histogram_variant("seed-2xsm", out,
          [=](const uint8_t* in, int64_t n, HistCount* hist) { launch_bytes<false>(in, n, hist, seed_grid); }),
      sw::device_histogram_variant("shared-full-grid", out,
          [=](const uint8_t* in, int64_t n, HistCount* hist) { launch_bytes<false>(in, n, hist, bytes_grid); }),
      sw::device_histogram_variant("per-warp", out,
          [=](const uint8_t* in, int64_t n, HistCount* hist) { launch_bytes<true>(in, n, hist, warp_grid); }),
      sw::device_histogram_variant("per-warp-vec16", out, per_warp_vec16),
      sw::device_histogram_variant("spread16-vec16", out, spread16),
      sw::device_histogram_variant("adaptive-vec16", out, adaptive16),
      sw::device_histogram_variant("adaptive-runs-vec16", out, adaptive_runs16),
  };
  if (opt.verify_only) return sw::verify_histogram(report, opt, gpu, h, steps);

  sw::CubHistogram cub;
  std::vector<sw::HistVariant> all = {cub.variant()};
  all.insert(all.end(), steps.begin(), steps.end());
  if (!h.file.empty()) return sw::histogram_file(report, opt, gpu, h, all);

  sw::HistData data(gpu, "--bytes", h.bytes);
  if (h.custom_input) {
    data.generate(h.bytes, spec, opt.seed, sw::spec_note(spec), h.offset);
    sw::bench_all(report, opt, data, all);
    return report.exit_code();
  }
  for (sw::ByteSpec s : {sw::ByteSpec{}, sw::ByteSpec{sw::ByteDist::Equal, 0}, sw::ByteSpec{sw::ByteDist::Skewed}}) {
    data.generate(h.bytes, s, opt.seed, sw::spec_note(s), h.offset);
    sw::bench_all(report, opt, data, all);
  }
  // From uniform (p = 0) to all zeros (p = 1), with fewer reps.
  sw::CommonOptions sweep_opt = opt;
  sweep_opt.reps = std::max(1, static_cast<int>(opt.reps * kSweepRepsFraction));
  sweep_opt.warmup = std::min(opt.warmup, 1);
  sw::sweep_histogram(report, sweep_opt, data, h.bytes, all, kSweepP, 0, h.offset);
  return report.exit_code();
}
