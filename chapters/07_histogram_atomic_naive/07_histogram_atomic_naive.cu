// Chapter 07: a byte histogram with one global atomicAdd per byte.
//
// What changed:  the problem changes from sums to counting. A 256-bin histogram
//                of bytes cannot be split into independent partial results as
//                easily as a sum can: each byte increments one of only 256
//                counters, and many threads want the same counter at once. This
//                chapter does the obvious thing, the seed's first GPU version:
//                a grid-stride loop where every byte is one atomicAdd on a 64-bit
//                counter in global memory.
//                  global-atomic-2xsm   the seed's launch: 2 x SM blocks of 256 threads
//                  global-atomic-full   enough blocks to fill every SM
// Why it is slow: every atomic travels to L2, and atomics on one address are
//                done one after another there. 256 addresses for the whole GPU
//                means long queues; with all bytes equal, one queue, slow
//                enough that one CPU core (chapter 01) counting into its L1
//                cache keeps up with the whole GPU.
// Bottleneck:    the L2 atomic units' throughput on a few hot addresses, not DRAM.
// Run:           build/chapters/07_histogram_atomic_naive [--bytes 2^30] [--offset K]
//                [--dist uniform|equal|skewed|mix --value V --p P] [--file PATH]
//                [--verify-only [--large]] [--json]
#include <algorithm>
#include <cstdint>
#include <string>
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

constexpr int kThreads = 256;        // the seed's block size
constexpr int kSeedBlocksPerSm = 2;  // the seed's grid: 2 x SM count
// These kernels run at a few GB/s: a 1 GiB input takes a fraction of a second
// per run, and with all bytes equal, far longer. They are timed with few reps,
// and the all-equal input is cut to kContendedBytes.
constexpr int kNaiveReps = 3;
constexpr int kNaiveWarmup = 1;
constexpr int64_t kContendedBytes = int64_t{1} << 28;

// --- kernel -------------------------------------------------------------------------

// One atomicAdd per byte on the global 64-bit counters. 64 bits, so that a bin
// passes 2^32 without wrapping (--verify-only --large proves it).
__global__ void __launch_bounds__(kThreads)
histogram_global_atomic(const uint8_t* __restrict__ in, int64_t n, HistCount* __restrict__ hist) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(&hist[in[i]], HistCount{1});
}

void launch_global_atomic(const uint8_t* in, int64_t n, HistCount* hist, int blocks) {
  CUDA_CHECK(cudaMemsetAsync(hist, 0, kBins * sizeof(HistCount)));  // zeroing is part of the job
  histogram_global_atomic<<<blocks, kThreads>>>(in, n, hist);
  CHECK_LAUNCH();
}

}  // namespace

int main(int argc, char** argv) {
  sw::HistOptions h;
  sw::Cli cli("07_histogram_atomic_naive", "256-bin byte histogram with one global atomicAdd per byte.");
  sw::add_histogram_options(cli, &h);
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::ByteSpec spec = sw::histogram_spec(cli, &h);
  sw::check_histogram_file_or_exit(h);
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "07", "histogram");

  const int sms = gpu.info.sm_count;
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, histogram_global_atomic, kThreads, 0));
  const int seed_grid = kSeedBlocksPerSm * sms;
  const int full_grid = std::max(1, per_sm) * sms;

  sw::DeviceBuffer<HistCount> d_hist(kBins);
  const std::vector<sw::HistVariant> steps = {
      sw::device_histogram_variant("global-atomic-2xsm", d_hist.get(),
          [=](const uint8_t* in, int64_t n, HistCount* out) { launch_global_atomic(in, n, out, seed_grid); }),
      sw::device_histogram_variant("global-atomic-full", d_hist.get(),
          [=](const uint8_t* in, int64_t n, HistCount* out) { launch_global_atomic(in, n, out, full_grid); }),
  };
  if (opt.verify_only) return sw::verify_histogram(report, opt, gpu, h, steps);

  sw::CommonOptions naive = opt;
  naive.reps = std::min(opt.reps, kNaiveReps);
  naive.warmup = std::min(opt.warmup, kNaiveWarmup);
  sw::CubHistogram cub;
  if (!h.file.empty()) {
    std::vector<sw::HistVariant> all = {cub.variant()};
    all.insert(all.end(), steps.begin(), steps.end());
    return sw::histogram_file(report, naive, gpu, h, all);
  }

  // CUB at full reps, the slow kernels at naive.reps; the decrement check on the last.
  sw::HistData data(gpu, "--bytes", h.bytes);
  auto bench = [&](int64_t n, sw::ByteSpec s) {
    data.generate(n, s, opt.seed, sw::spec_note(s), h.offset);
    sw::bench_histogram(report, opt, data, cub.variant(), false);
    for (const auto& v : steps) sw::bench_histogram(report, naive, data, v, &v == &steps.back());
  };
  report.note("the global-atomic kernels are timed with " + std::to_string(naive.reps) + " reps after " +
              std::to_string(naive.warmup) + " warm-up");
  if (h.custom_input) {
    bench(h.bytes, spec);
  } else {
    bench(h.bytes, sw::ByteSpec{});
    const int64_t contended = std::min(h.bytes, kContendedBytes);
    report.note("all bytes equal: " + std::to_string(contended) + " bytes, to keep the run short");
    bench(contended, sw::ByteSpec{sw::ByteDist::Equal, 0});
  }
  return report.exit_code();
}
