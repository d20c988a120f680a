// Chapter 13: top-2, the two largest elements of an array and where they are.
//
// What changed:  chapters 02-06 combined partial results with +. Here two partial
//                results are combined by merging two top-2 lists: four values (two
//                keys, two indices) instead of one, so the merge costs more registers
//                and more shuffles, but the shape of the reduction is the same.
// Semantics:     int32 elements ranked by value, equal values by the smaller index first;
//                the answer is the first two of that ranking, so a repeated maximum gives
//                (max at its first index, max at its second). An empty slot is index -1,
//                never a sentinel value: the seed's INT_MIN sentinel cannot report an
//                INT_MIN element (the checks show it). --n starts at 2.
// Versions:      thread-pairs  each thread keeps a top-2 in registers during a
//                              grid-stride pass and writes it to memory
//                shared-tree   + the block merges its threads' pairs in a shared-memory
//                              tree (the seed's version, with the indices added)
//                warp-shuffle  + the block merges with __shfl_xor_sync instead
//                shuffle-int4  + 16-byte loads, two in flight per thread
//                Every step ends with a second pass: one block merges the results of
//                the first pass in a fixed order, so the answer is deterministic.
// Steps:         thread-pairs, shared-tree, warp-shuffle, shuffle-int4
// Bottleneck:    DRAM read bandwidth once the merge is cheap. Goal: at least
//                cub::DeviceReduce::Reduce with the same merge as its operator.
// Exercise:      float input: rank by an unsigned key of the float's bits (NaN above
//                +inf, -0 equal to +0) and make these kernels a template on the key.
// Files:         this file (the block merges, the second pass, the steps, the step
//                table, main); top2_merge.cuh (ranking, merge, insert); top2_first_pass.cuh
//                (each thread's grid-stride pass, the buffers); top2_cub.cuh (the vendor).
// Checks:        top2_checks.cu (--verify-only, --large).
// Run:           build/chapters/13_top2 [--n 2^28] [--variant shuffle-int4] [--verify-only]
//                [--large] [--json]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench/protocol.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/parallel.h"
#include "common/report.h"
#include "common/timing.h"
#include "top2_checks.h"
#include "top2_cub.cuh"
#include "top2_first_pass.cuh"
#include "top2_merge.cuh"

namespace {

using namespace ch13;  // Top2 (top2_checks.h) and what the three headers above define

constexpr int kFinalBlock = 1024;                // threads of the single block of the second pass
constexpr int64_t kDefaultN = int64_t{1} << 28;  // 1 GiB of int32, far beyond L2

// --- block merges: thread 0 ends with the block's top-2 --------------------------------------

__device__ __forceinline__ Top2 shfl_xor(const Top2& t, int lane_mask) {
  Top2 o;
  o.k1 = __shfl_xor_sync(sw::kFullMask, t.k1, lane_mask);
  o.k2 = __shfl_xor_sync(sw::kFullMask, t.k2, lane_mask);
  o.i1 = __shfl_xor_sync(sw::kFullMask, static_cast<long long>(t.i1), lane_mask);
  o.i2 = __shfl_xor_sync(sw::kFullMask, static_cast<long long>(t.i2), lane_mask);
  return o;
}

// Butterfly over the warp: every lane ends with the warp's top-2. Partners are
// always different lanes, so no element is merged with itself.
__device__ __forceinline__ Top2 warp_merge(Top2 t) {
// lab top2-merge: begin
#pragma unroll
  for (int m = sw::kWarp / 2; m > 0; m >>= 1) t = merge(t, shfl_xor(t, m));
  return t;
  // lab top2-merge: end
}

// Warps merge with shuffles, then warp 0 merges the warps' results.
template <int kThreads>
__device__ Top2 block_merge_shuffle(Top2 t) {
  static_assert(kThreads % sw::kWarp == 0 && kThreads / sw::kWarp <= sw::kWarp,
                "one warp merges the warps");
  constexpr int kWarps = kThreads / sw::kWarp;
  __shared__ Top2 warp_best[kWarps];
  const int lane = threadIdx.x % sw::kWarp, warp = threadIdx.x / sw::kWarp;
  t = warp_merge(t);
  if (lane == 0) warp_best[warp] = t;
  __syncthreads();
  if (warp == 0) t = warp_merge(lane < kWarps ? warp_best[lane] : empty_top2());
  return t;
}

// The seed's tree in shared memory: halve the active threads each round.
template <int kThreads>
__device__ Top2 block_merge_shared(Top2 t) {
  static_assert((kThreads & (kThreads - 1)) == 0, "the tree halves a power of two");
  __shared__ Top2 s[kThreads];
  s[threadIdx.x] = t;
  __syncthreads();
  // lab top2-merge: begin
  for (int h = kThreads / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] = merge(s[threadIdx.x], s[threadIdx.x + h]);
    __syncthreads();  // outside the if: the seed synchronizes inside it, which is undefined
  }
  // lab top2-merge: end
  return s[0];
}

// --- second pass: one block merges `count` first-pass results in a fixed order ---------------

__global__ void __launch_bounds__(kFinalBlock)
    top2_final(const Top2* __restrict__ in, int64_t count, Top2* __restrict__ out) {
  Top2 t = empty_top2();
  for (int64_t i = threadIdx.x; i < count; i += kFinalBlock) t = merge(t, in[i]);
  t = block_merge_shuffle<kFinalBlock>(t);
  if (threadIdx.x == 0) *out = t;
}

// --- the steps: one first-pass kernel each, then the second pass ------------------------------

// thread-pairs: every thread writes its own top-2; the second pass merges them all.
__global__ void __launch_bounds__(kBlock)
    top2_thread_pairs(const int32_t* __restrict__ x, int64_t n, Top2* out) {
  out[static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x] = thread_top2(x, n);
}
int64_t launch_thread_pairs(const int32_t* x, int64_t n, Buffers& b) {
  static const int64_t resident = sw::resident_grid(top2_thread_pairs, kBlock);
  const int64_t grid =
      std::min(resident, sw::ceil_div(n, kBlock));  // all resident blocks, fewer for small n
  top2_thread_pairs<<<grid, kBlock>>>(x, n, b.partials.get());
  CHECK_LAUNCH();
  top2_final<<<1, kFinalBlock>>>(b.partials.get(), grid * kBlock, b.out.get());
  CHECK_LAUNCH();
  return grid;
}

// shared-tree: the block merges its threads' top-2s in a shared-memory tree.
__global__ void __launch_bounds__(kBlock)
    top2_shared_tree(const int32_t* __restrict__ x, int64_t n, Top2* out) {
  const Top2 t = block_merge_shared<kBlock>(thread_top2(x, n));
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}
int64_t launch_shared_tree(const int32_t* x, int64_t n, Buffers& b) {
  static const int64_t resident = sw::resident_grid(top2_shared_tree, kBlock);
  const int64_t grid = std::min(resident, sw::ceil_div(n, kBlock));
  top2_shared_tree<<<grid, kBlock>>>(x, n, b.partials.get());
  CHECK_LAUNCH();
  top2_final<<<1, kFinalBlock>>>(b.partials.get(), grid, b.out.get());
  CHECK_LAUNCH();
  return grid;
}

// warp-shuffle: the block merges with shuffles within each warp, then across warps.
__global__ void __launch_bounds__(kBlock)
    top2_warp_shuffle(const int32_t* __restrict__ x, int64_t n, Top2* out) {
  const Top2 t = block_merge_shuffle<kBlock>(thread_top2(x, n));
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}
int64_t launch_warp_shuffle(const int32_t* x, int64_t n, Buffers& b) {
  static const int64_t resident = sw::resident_grid(top2_warp_shuffle, kBlock);
  const int64_t grid = std::min(resident, sw::ceil_div(n, kBlock));
  top2_warp_shuffle<<<grid, kBlock>>>(x, n, b.partials.get());
  CHECK_LAUNCH();
  top2_final<<<1, kFinalBlock>>>(b.partials.get(), grid, b.out.get());
  CHECK_LAUNCH();
  return grid;
}

// shuffle-int4: the same merge, 16-byte loads. A start that is not 16-byte aligned
// falls back to warp-shuffle.
__global__ void __launch_bounds__(kBlock)
    top2_shuffle_int4(const int32_t* __restrict__ x, int64_t n, Top2* out) {
  const Top2 t = block_merge_shuffle<kBlock>(thread_top2_int4(x, n));
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}
int64_t launch_shuffle_int4(const int32_t* x, int64_t n, Buffers& b) {
  if (reinterpret_cast<uintptr_t>(x) % sizeof(int4) != 0) return launch_warp_shuffle(x, n, b);
  static const int64_t resident = sw::resident_grid(top2_shuffle_int4, kBlock);
  const int64_t grid = std::min(resident, sw::ceil_div(n, kBlock * kVec));
  top2_shuffle_int4<<<grid, kBlock>>>(x, n, b.partials.get());
  CHECK_LAUNCH();
  top2_final<<<1, kFinalBlock>>>(b.partials.get(), grid, b.out.get());
  CHECK_LAUNCH();
  return grid;
}

// --- the step table ---------------------------------------------------------------------------

struct Step {
  const char* name;
  // Puts the answer in b.out; returns the first pass's blocks.
  int64_t (*launch)(const int32_t* x, int64_t n, Buffers& b);
  const char* role;
};
const Step kSteps[] = {
    {"cub-reduce-top2", launch_cub, "vendor"},     {"thread-pairs", launch_thread_pairs, "step"},
    {"shared-tree", launch_shared_tree, "step"},   {"warp-shuffle", launch_warp_shuffle, "step"},
    {"shuffle-int4", launch_shuffle_int4, "step"},
};

}  // namespace

// The CPU baseline: one core, the same insert as the GPU threads.
Top2 ch13::top2_serial(const int32_t* x, int64_t n) {
  Top2 t = empty_top2();
  for (int64_t i = 0; i < n; ++i) insert(t, x[i], i);
  return t;
}

std::vector<ch13::Answer> ch13::run_every_step(const int32_t* d_x, int64_t n, const Top2& want) {
  Buffers b;
  const uint64_t digest = sw::device_digest(d_x, static_cast<size_t>(n) * sizeof(int32_t));
  const Top2Data data{b.out.get(), &want, d_x, n, /*check_input=*/true, digest};
  std::vector<Answer> answers;
  for (const Step& s : kSteps) {
    const sw::bench::Verdict v = sw::bench::check_once(data, [&] { s.launch(d_x, n, b); });
    answers.push_back({s.name, v.ok, v.detail});
  }
  return answers;
}

double ch13::workspace_bytes() {
  return 2.0 * partial_capacity() * sizeof(Top2);
}  // and CUB's, smaller

int main(int argc, char** argv) {
  int64_t n = kDefaultN;
  bool large = false;
  sw::Cli cli("13_top2", "Top-2: the two largest int32 values and their indices.");
  cli.add_int("--n", &n, 2, sw::kMaxElements, "number of int32 elements (top-2 needs at least 2)");
  cli.add_flag("--large", &large,
               "instead of the benchmark or the sweep: check every version on 2^31 + 2^20 + 3 "
               "elements (ignores --n)");
  std::vector<std::string> steps;
  for (const Step& s : kSteps)
    if (std::string(s.role) == "step") steps.push_back(s.name);
  std::string variant = "all";
  cli.add_variant(&variant, steps, "the step(s) to run (CUB's row always; the CPU rows with all)");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "13", "top2");
  const uint64_t seed = static_cast<uint64_t>(opt.seed);
  if (large) return ch13::verify_large(report, gpu, seed);
  if (opt.verify_only) return ch13::verify(report, seed);

  // --- benchmark: every version by sw::bench::measure (poisoned result, one checked run, the
  // timed runs, the last one checked again; --graded-timing: new values and a check every call)
  sw::require_fits(gpu, "--n", n, sizeof(int32_t), ch13::workspace_bytes());
  ch13::Values v(n);
  v.generate(seed);
  const double bytes = static_cast<double>(n) * sizeof(int32_t);  // every element read once
  report.note("answer: " + ch13::describe(v.want));
  Buffers b;
  const ch13::Top2Data data = ch13::values_data(v, b.out.get());
  for (const Step& s : kSteps) {
    if (variant != "all" && variant != s.name && std::string(s.role) == "step") continue;
    // The first pass's grid, for the row: one run before the protocol's, neither
    // checked nor timed, so that the timed call stays the launcher call alone.
    const int64_t blocks = s.launch(v.d.get(), n, b);
    const sw::bench::Row row{s.name, n, bytes, 1, false, s.role};
    sw::Result r = sw::bench::measure(opt, row, data, [&] { s.launch(v.d.get(), n, b); });
    r.note = "uniform";  // every int32 equally likely
    if (blocks > 0) r.extra["blocks"] = static_cast<double>(blocks);
    report.add(r);
  }
  if (variant != "all") return report.exit_code();
  // The CPU baselines: one core (a lesson), then every core ("vs CPU" compares with it;
  // it is the reference's own loop, so it is checked against the one-core result).
  Top2 cpu{}, all{};
  const sw::Timing t1 = sw::time_cpu(0, 1, [&] { cpu = ch13::top2_serial(v.h.get(), n); });
  sw::Result serial{"cpu-serial", n, bytes, t1, ch13::same(cpu, v.want), "lesson"};
  serial.note = "uniform";
  serial.extra = {{"threads", 1.0}};
  report.add(serial);
  const sw::Timing tn = sw::time_cpu(0, 1, [&] { all = ch13::top2_reference(v.h.get(), n); });
  sw::Result every{"cpu-all-cores", n, bytes, tn, ch13::same(all, cpu), "cpu"};
  every.note = "uniform";
  every.extra = {{"threads", static_cast<double>(sw::host_threads())}};
  report.add(every);
  return report.exit_code();
}
