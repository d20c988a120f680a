// Chapter 12: a dot product, end to end.
//
// What changed:  chapters 02-06 timed a sum whose data was already on the GPU. A
//                caller of a library (the seed calls a DLL from Go) has its vectors in
//                host memory, so every call copies 8 bytes per element over PCIe and
//                then runs a kernel that reads the same 8 bytes from DRAM about 50
//                times faster. This chapter times the whole call and splits it into
//                copy time and kernel time.
// The kernel:    two-pass-float4 (dot_kernel.cuh, shared with the C ABI library in
//                abi/): float4 loads of x and y, four fmaf chains per thread, chapter
//                06's block sum; then one block of chapter 06's kernel adds the block
//                sums in a fixed order (deterministic). Compared with cublasSdot in
//                device pointer mode (the result stays on the GPU, as ours does).
// End to end:    e2e-pageable        cudaMemcpy from ordinary (pageable) host memory,
//                                    buffers kept in a context (the seed's second version)
//                e2e-pinned          the same from page-locked memory (cudaMallocHost)
//                e2e-overlap         pinned, in chunks on several streams, so the kernel
//                                    of one chunk runs while the next chunk is copied
//                e2e-alloc-per-call  cudaMalloc and cudaFree on every call (the seed's
//                                    first version)
// Steps:         two-pass-float4, e2e-pageable, e2e-pinned, e2e-overlap, e2e-alloc-per-call
// Bottleneck:    the kernel is bound by DRAM bandwidth; every end-to-end case is bound
//                by the host-to-device copy (PCIe, and for pageable memory the driver's
//                extra host copy into a staging buffer).
// Precision:     float accumulation against a double reference; the bound is
//                gamma_depth * sum |x_i y_i| with the depth of each version below.
// Files:         dot_problem.cuh (x and y in host and device memory, the events that
//                split a call, DotData: what the measurement protocol checks),
//                dot_end_to_end.cuh (the four end-to-end versions); here the kernel-only
//                versions, the error depths, the step table, the runs.
// Protocol:      every GPU row but the copy ceiling is measured by sw::bench::measure
//                (common/bench/protocol.h): time_gpu -> [&] { s.launch(d); } -> the
//                launcher (launch_two_pass_float4, launch_e2e, ...) -> <<<>>>.
// Checks:        dot_checks.cpp (--verify-only; the CPU reference and baselines too).
//                The C ABI and its Python test: abi/.
// Run:           build/chapters/12_dot_product [--n 2^28] [--variant two-pass-float4]
//                [--verify-only] [--json]
//                (without --n the benchmark runs at 2^28 and at 2^20)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench/protocol.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/cublas_check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/gpu_timer.h"
#include "common/parallel.h"
#include "common/report.h"
#include "common/verify.h"
#include "dot_checks.h"
#include "dot_end_to_end.cuh"
#include "dot_kernel.cuh"
#include "dot_problem.cuh"

namespace {

using ch12::Alloc;
using ch12::chunk_length;
using ch12::Dot;
using ch12::From;
using ch12::kChunks;
using ch12::kStreams;
using ch12::launch_e2e;
using ch12::launch_e2e_overlap;
using dot::kBlock;
using dot::kVec;
constexpr int64_t kDefaultN = int64_t{1} << 28;  // 1 GiB per vector, far beyond L2
constexpr int64_t kSmallN = int64_t{1} << 20;    // 4 MiB per vector: fits in L2
constexpr double kBigCall = 64e6;                // bytes; slower calls are timed fewer times
constexpr int kBigCallReps = 5;
constexpr int kBigCallWarmup = 1;
// cuBLAS does not document its order of additions; we allow chains of n/1024
// roundings (any reduction over at least 1024 threads has shorter ones).
constexpr int64_t kVendorThreads = 1024;

// --- the versions: kernel only (device in, device out) --------------------------------------

// cublas-sdot, the vendor row: the result stays on the GPU (device pointer mode).
void launch_cublas_sdot(Dot& d) {
  CUBLAS_CHECK(cublasSdot_64(d.blas, d.n, d.x.get(), 1, d.y.get(), 1, d.result.get()));
}

// two-pass-float4 (dot_kernel.cuh): the block sums, one full wave at most, then one block adds
// them in a fixed order.
void launch_two_pass_float4(Dot& d) {
  const int64_t blocks = dot::blocks_for(d.n, d.max_blocks);
  dot::dot_partials<<<blocks, kBlock>>>(d.x.get(), d.y.get(), d.n, d.partials.get());
  CHECK_LAUNCH();
  dot::dot_final<<<1, kBlock>>>(d.partials.get(), blocks, d.result.get());
  CHECK_LAUNCH();
}

// --- error bounds: the longest chain of float roundings a product goes through -------------

// First pass over len floats: the fmaf steps of one chain (+1 for the tail), 2 to add
// the four lanes, then the block sum (dot::kBlockSumDepth).
int64_t first_pass_depth(int64_t len, int64_t blocks) {
  return sw::ceil_div(len / kVec, blocks * kBlock) + 3 + dot::kBlockSumDepth;
}
// Second pass: one block over `count` block sums, a strided loop per thread, then the block sum.
int64_t final_pass_depth(int64_t count) {
  return sw::ceil_div(count, kBlock) + dot::kBlockSumDepth;
}

int64_t depth_two_pass(const Dot& d) {
  const int64_t blocks = dot::blocks_for(d.n, d.max_blocks);
  return first_pass_depth(d.n, blocks) + final_pass_depth(blocks);
}
int64_t depth_overlap(const Dot& d) {  // the longest chunk, then all chunks' block sums
  const int64_t chunk = std::min(chunk_length(d.n), d.n);
  int64_t partials = 0;
  for (int64_t off = 0; off < d.n; off += chunk)
    partials += dot::blocks_for(std::min(chunk, d.n - off), d.max_blocks);
  return first_pass_depth(chunk, dot::blocks_for(chunk, d.max_blocks)) + final_pass_depth(partials);
}
int64_t depth_vendor(const Dot& d) { return sw::ceil_div(d.n, kVendorThreads) + 64; }

// --- the step table ---------------------------------------------------------------------------

struct Step {
  const char* name;
  void (*launch)(Dot& d);  // From::Device: the answer in d.result (device); else in d.answer (host)
  int64_t (*depth)(const Dot& d);
  const char* role;
  From from;
  int streams;
};
const Step kSteps[] = {
    {"cublas-sdot", launch_cublas_sdot, depth_vendor, "vendor", From::Device, 1},
    {"two-pass-float4", launch_two_pass_float4, depth_two_pass, "step", From::Device, 1},
    {"e2e-pageable", launch_e2e<From::Pageable, Alloc::kOnce>, depth_two_pass, "step",
     From::Pageable, 1},
    {"e2e-pinned", launch_e2e<From::Pinned, Alloc::kOnce>, depth_two_pass, "step", From::Pinned, 1},
    {"e2e-overlap", launch_e2e_overlap, depth_overlap, "step", From::Pinned, kStreams},
    {"e2e-alloc-per-call", launch_e2e<From::Pageable, Alloc::kPerCall>, depth_two_pass,
     "anti-example", From::Pageable, 1},
};

// --- benchmark --------------------------------------------------------------------------------

// The median of the last `count` samples: those of the timed calls (the checked
// call and the warm-up calls come first).
double median_of_last(const std::vector<double>& ms, int count) {
  const auto k = static_cast<std::ptrdiff_t>(std::min(ms.size(), static_cast<size_t>(count)));
  return sw::summarize(std::vector<double>(ms.end() - k, ms.end())).ms_median;
}

// Every version by sw::bench::measure: poisoned result, one checked run, the timed runs,
// the last one checked again (--graded-timing: new vectors and a check for every call).
void benchmark(sw::Report& report, const sw::CommonOptions& opt, int64_t n,
               const std::string& variant, bool time_cpu) {
  Dot d(n);
  d.generate(static_cast<uint64_t>(opt.seed));  // x and y, uploaded, and their reference
  const ch12::DotRef& ref = d.ref;
  const double bytes = 8.0 * n;  // x and y, read once (end to end: copied once)
  sw::CommonOptions e2e = opt;   // end-to-end calls over kBigCall bytes take tenths of a second
  if (bytes > kBigCall)
    e2e.reps = std::min(opt.reps, kBigCallReps), e2e.warmup = std::min(opt.warmup, kBigCallWarmup);

  bool ceiling_done = false;
  for (const Step& s : kSteps) {
    if (variant != "all" && variant != s.name && std::string(s.role) != "vendor") continue;
    const ch12::DotData data{d, s.from, s.depth(d)};
    const auto run = [&] { s.launch(d); };  // the timed call: the version's launcher
    sw::Result r;
    if (s.from == From::Device) {
      r = sw::bench::measure(opt, {s.name, n, bytes, 1, false, s.role}, data, run);
      r.extra["rel_bound"] = data.bound() / ref.abs_sum;
    } else {
      if (!ceiling_done) {  // the ceiling of every end-to-end row: the copies alone, unchecked
        const sw::Timing t = sw::time_gpu(e2e, [&] {
          CUDA_CHECK(cudaMemcpy(d.x.get(), d.px.get(), n * sizeof(float), cudaMemcpyHostToDevice));
          CUDA_CHECK(cudaMemcpy(d.y.get(), d.py.get(), n * sizeof(float), cudaMemcpyHostToDevice));
        });
        sw::Result c{"h2d-copy-pinned", n, bytes, t, true, "ceiling"};
        c.note = "copies only";
        report.add(c);
        ceiling_done = true;
      }
      // The row's time is the protocol's, the events around the call, as for every row.
      // Inside it the call records the events of d.split, which split it into copy,
      // kernel and other time; before the next call, outside the timed events, they
      // are collected.
      d.split.clear();
      bool pending = false;
      const auto collect = [&] {
        if (pending) d.split.collect();
        pending = true;
      };
      const double moved = bytes + sizeof(float);  // x and y to the device, the result back
      r = sw::bench::measure(e2e, {s.name, n, moved, 1, false, s.role}, data, run, collect);
      d.split.collect();  // the last timed call
      const double copy_ms = median_of_last(d.split.copy_ms, e2e.reps);
      r.note = "end-to-end";  // a different measure from the kernel rows: no "vs cuBLAS" ratio
      r.extra["pinned"] = s.from == From::Pinned ? 1.0 : 0.0;
      r.extra["streams"] = static_cast<double>(s.streams);
      r.extra["copy_ms"] = copy_ms;
      r.extra["copy_gbps"] = sw::gbps(bytes, copy_ms);
      r.extra["kernel_ms"] = median_of_last(d.split.kernel_ms, e2e.reps);
      r.extra["other_ms"] = median_of_last(d.split.other_ms, e2e.reps);
    }
    if (s.launch == launch_two_pass_float4)
      r.extra["blocks"] = static_cast<double>(dot::blocks_for(n, d.max_blocks));
    report.add(r);
  }
  if (time_cpu) {  // the CPU baselines, once each
    double got = 0;
    sw::Timing t =
        sw::time_cpu(0, 1, [&] { got = ch12::dot_serial_double(d.hx.data(), d.hy.data(), n); });
    sw::Result serial{"cpu-serial-double",
                      n,
                      bytes,
                      t,
                      sw::check_sum(got, ref.value, ref.abs_sum, 1, n).ok,
                      "lesson"};
    serial.extra = {{"threads", 1.0}};
    report.add(serial);
    t = sw::time_cpu(0, 1, [&] { got = ch12::dot_all_cores_double(d.hx.data(), d.hy.data(), n); });
    const int64_t threads = sw::host_threads();
    sw::Result all{"cpu-all-cores-double",
                   n,
                   bytes,
                   t,
                   sw::check_sum(got, ref.value, ref.abs_sum, threads, n).ok,
                   "cpu"};
    all.extra = {{"threads", static_cast<double>(threads)}};
    report.add(all);
  }
}

}  // namespace

std::vector<ch12::Answer> ch12::run_every_step(const float* x, const float* y, int64_t n,
                                               bool exact) {
  Dot d(n);
  std::copy(x, x + n, d.hx.begin());
  std::copy(y, y + n, d.hy.begin());
  d.upload();
  d.ref = dot_reference(x, y, n);
  const uint64_t digest = d.input_digest();
  std::vector<Answer> answers;
  for (const Step& s : kSteps) {
    const ch12::DotData data{d, s.from, s.depth(d), exact, /*check_input=*/true, digest};
    const sw::bench::Verdict v = sw::bench::check_once(data, [&] { s.launch(d); });
    answers.push_back({s.name, v.ok, v.detail});
  }
  return answers;
}

int main(int argc, char** argv) {
  int64_t n = kDefaultN;
  sw::Cli cli("12_dot_product",
              "Dot product of two float vectors: the kernel, and the whole call from host memory.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "floats per vector (default: 2^28, then 2^20)");
  std::vector<std::string> steps;
  for (const Step& s : kSteps)
    if (std::string(s.role) != "vendor") steps.push_back(s.name);
  std::string variant = "all";
  cli.add_variant(&variant, steps,
                  "the step(s) to run (cuBLAS's row always; the CPU rows with all)");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "12", "dot");
  if (opt.verify_only) return ch12::verify(report, static_cast<uint64_t>(opt.seed));

  // Device: x, y of the context and of one allocate-per-call call at the same time.
  const int64_t max_blocks = sw::resident_grid(dot::dot_partials, kBlock);
  sw::require_fits(gpu, "--n", n, 4.0 * sizeof(float), 2.0 * max_blocks * kChunks * sizeof(float));
  report.note(
      "kernel-only rows read x and y in device memory; end-to-end rows start from host memory "
      "and end with the result on the host");
  benchmark(report, opt, n, variant, variant == "all");
  if (!cli.was_given("--n")) benchmark(report, opt, kSmallN, variant, false);
  return report.exit_code();
}
