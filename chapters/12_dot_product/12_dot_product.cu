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
// Checks:        dot_checks.cpp (--verify-only; the CPU reference and baselines too).
//                The C ABI and its Python test: abi/.
// Run:           build/chapters/12_dot_product [--n 2^28] [--verify-only] [--json]
//                (without --n the benchmark runs at 2^28 and at 2^20)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

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
#include "dot_kernel.cuh"

namespace {

using dot::kBlock;
using dot::kVec;
using dot::launch_final;
using dot::launch_partials;
using dot::launch_two_pass;
constexpr int64_t kDefaultN = int64_t{1} << 28;  // 1 GiB per vector, far beyond L2
constexpr int64_t kSmallN = int64_t{1} << 20;    // 4 MiB per vector: fits in L2
constexpr int kStreams = 4;                      // streams of e2e-overlap
constexpr int kChunks = 16;                      // at most this many chunks per call
constexpr int64_t kMinChunk = int64_t{1} << 16;  // floats; smaller chunks cost more in API calls
constexpr int64_t kChunkAlign = 1024;            // floats: chunk starts stay 16-byte aligned
constexpr double kBigCall = 64e6;                // bytes; slower calls are timed fewer times
constexpr int kBigCallReps = 5;
constexpr int kBigCallWarmup = 1;
// cuBLAS does not document its order of additions; we allow chains of n/1024
// roundings (any reduction over at least 1024 threads has shorter ones).
constexpr int64_t kVendorThreads = 1024;

// --- one problem: the vectors in host and device memory ---------------------------------

// Events at the phase boundaries of one end-to-end call, on the legacy default
// stream (and one per chunk for e2e-overlap). collect() stores that call's total
// time and its copy, kernel and other (allocation, launches, the copy back) parts.
struct Split {
  cudaEvent_t start, copy_begin, copied, computed, finished, chunk[kChunks];
  int chunks = 0;  // chunks of the last call; 0: one copy, then the kernel
  std::vector<double> copy_ms, kernel_ms, other_ms, total_ms;  // one entry per collected call

  Split() {
    for (cudaEvent_t* e : {&start, &copy_begin, &copied, &computed, &finished}) CUDA_CHECK(cudaEventCreate(e));
    for (cudaEvent_t& e : chunk) CUDA_CHECK(cudaEventCreate(&e));
  }
  ~Split() {
    for (cudaEvent_t e : {start, copy_begin, copied, computed, finished}) cudaEventDestroy(e);
    for (cudaEvent_t e : chunk) cudaEventDestroy(e);
  }
  Split(const Split&) = delete;
  Split& operator=(const Split&) = delete;

  double since_start(cudaEvent_t e) const {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, e));
    return ms;
  }
  void collect() {
    CUDA_CHECK(cudaEventSynchronize(finished));
    double copy_end = chunks == 0 ? since_start(copied) : 0;
    for (int c = 0; c < chunks; ++c) copy_end = std::max(copy_end, since_start(chunk[c]));  // the last chunk's
    const double total = since_start(finished);
    copy_ms.push_back(copy_end - since_start(copy_begin));
    kernel_ms.push_back(since_start(computed) - copy_end);  // overlapped: the part not hidden
    other_ms.push_back(total - copy_ms.back() - kernel_ms.back());
    total_ms.push_back(total);
  }
  void clear() { copy_ms.clear(), kernel_ms.clear(), other_ms.clear(), total_ms.clear(); }
};

// x and y in pageable and in pinned host memory, device buffers allocated once (the
// seed's context), the streams of e2e-overlap, the events that split a call, and a
// cuBLAS handle in device pointer mode (cublasSdot leaves its result on the GPU).
struct Dot {
  explicit Dot(int64_t n)
      : n(n), hx(n), hy(n), px(n), py(n), x(n), y(n), partials(max_blocks * kChunks), result(1) {
    for (int k = 0; k < kStreams; ++k) {
      CUDA_CHECK(cudaStreamCreateWithFlags(&stream[k], cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreateWithFlags(&joined[k], cudaEventDisableTiming));
    }
    CUBLAS_CHECK(cublasCreate(&blas));
    CUBLAS_CHECK(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE));
  }
  ~Dot() {
    for (int k = 0; k < kStreams; ++k) cudaStreamDestroy(stream[k]), cudaEventDestroy(joined[k]);
    cublasDestroy(blas);
  }
  Dot(const Dot&) = delete;
  Dot& operator=(const Dot&) = delete;
  // Copies hx and hy (filled by the caller) to the pinned buffers and the device.
  void upload() {
    std::copy(hx.begin(), hx.end(), px.get());
    std::copy(hy.begin(), hy.end(), py.get());
    CUDA_CHECK(cudaMemcpy(x.get(), px.get(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(y.get(), py.get(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  // Of x and y on the device: a version may read them only.
  uint64_t input_digest() const {
    return sw::device_digest(x.get(), x.bytes()) + 3 * sw::device_digest(y.get(), y.bytes());
  }

  int64_t n;
  int64_t max_blocks = sw::resident_grid(dot::dot_partials, kBlock);
  std::vector<float> hx, hy;        // pageable
  sw::PinnedBuffer<float> px, py;   // page-locked
  sw::DeviceBuffer<float> x, y, partials, result;
  cudaStream_t stream[kStreams];
  cudaEvent_t joined[kStreams];
  Split split;
  cublasHandle_t blas;
  float answer = 0;           // an end-to-end call's result, on the host
  bool poison_fresh = false;  // e2e-alloc-per-call poisons its new result (checked runs)
};

// --- the versions: kernel only (device in, device out) --------------------------------------

void cublas_sdot(Dot& d) { CUBLAS_CHECK(cublasSdot_64(d.blas, d.n, d.x.get(), 1, d.y.get(), 1, d.result.get())); }

void two_pass_float4(Dot& d) {
  launch_two_pass(d.x.get(), d.y.get(), d.n, d.partials.get(), d.max_blocks, d.result.get(), 0);
}

// --- the versions: end to end (host x, y in, a host float out) ------------------------------

// The seed's dot(): copy both vectors in, run both passes, copy the result back.
void copy_compute_copy_back(Dot& d, const float* hx, const float* hy, float* x, float* y, float* partials,
                            float* result) {
  Split& s = d.split;
  CUDA_CHECK(cudaEventRecord(s.copy_begin));
  CUDA_CHECK(cudaMemcpy(x, hx, d.n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(y, hy, d.n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaEventRecord(s.copied));
  launch_two_pass(x, y, d.n, partials, d.max_blocks, result, 0);
  CUDA_CHECK(cudaEventRecord(s.computed));
  CUDA_CHECK(cudaMemcpy(&d.answer, result, sizeof(float), cudaMemcpyDeviceToHost));
  s.chunks = 0;
}

// Pageable or pinned: only the host pointers differ.
void copy_then_compute(Dot& d, const float* hx, const float* hy) {
  CUDA_CHECK(cudaEventRecord(d.split.start));
  copy_compute_copy_back(d, hx, hy, d.x.get(), d.y.get(), d.partials.get(), d.result.get());
  CUDA_CHECK(cudaEventRecord(d.split.finished));
}
void e2e_pageable(Dot& d) { copy_then_compute(d, d.hx.data(), d.hy.data()); }
void e2e_pinned(Dot& d) { copy_then_compute(d, d.px.get(), d.py.get()); }

// Floats per chunk: n / kChunks, at least kMinChunk, a multiple of kChunkAlign.
int64_t chunk_length(int64_t n) {
  return sw::ceil_div(std::max(sw::ceil_div(n, kChunks), kMinChunk), kChunkAlign) * kChunkAlign;
}

// Chunk k is copied and reduced on stream k % kStreams: while the copy engine moves
// chunk k+1, the SMs reduce chunk k. The host memory must be pinned, or the copies
// are not asynchronous. Each chunk writes its own range of block sums and one final
// pass adds them all, so the result does not depend on timing.
void e2e_overlap(Dot& d) {
  Split& s = d.split;
  const int64_t chunk = chunk_length(d.n);
  const int chunks = static_cast<int>(sw::ceil_div(d.n, chunk));
  CUDA_CHECK(cudaEventRecord(s.start));
  CUDA_CHECK(cudaEventRecord(s.copy_begin));
  for (cudaStream_t st : d.stream) CUDA_CHECK(cudaStreamWaitEvent(st, s.copy_begin));  // fork
  int64_t partials = 0;
  for (int k = 0; k < chunks; ++k) {
    const cudaStream_t st = d.stream[k % kStreams];
    const int64_t off = k * chunk, len = std::min(chunk, d.n - off);
    CUDA_CHECK(cudaMemcpyAsync(d.x.get() + off, d.px.get() + off, len * sizeof(float), cudaMemcpyHostToDevice, st));
    CUDA_CHECK(cudaMemcpyAsync(d.y.get() + off, d.py.get() + off, len * sizeof(float), cudaMemcpyHostToDevice, st));
    CUDA_CHECK(cudaEventRecord(s.chunk[k], st));
    launch_partials(d.x.get() + off, d.y.get() + off, len, d.partials.get() + partials, d.max_blocks, st);
    partials += dot::blocks_for(len, d.max_blocks);
  }
  for (int k = 0; k < kStreams; ++k) {  // join: the default stream waits for every stream
    CUDA_CHECK(cudaEventRecord(d.joined[k], d.stream[k]));
    CUDA_CHECK(cudaStreamWaitEvent(0, d.joined[k]));
  }
  launch_final(d.partials.get(), partials, d.result.get(), 0);
  CUDA_CHECK(cudaEventRecord(s.computed));
  CUDA_CHECK(cudaMemcpy(&d.answer, d.result.get(), sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventRecord(s.finished));
  s.chunks = chunks;
}

// The seed's first version: new device buffers on every call, from pageable memory.
void e2e_alloc_per_call(Dot& d) {
  CUDA_CHECK(cudaEventRecord(d.split.start));
  {
    sw::DeviceBuffer<float> x(d.n), y(d.n), partials(d.max_blocks), result(1);  // cudaMalloc x 4
    if (d.poison_fresh) sw::poison(result.get(), sizeof(float));
    copy_compute_copy_back(d, d.hx.data(), d.hy.data(), x.get(), y.get(), partials.get(), result.get());
  }  // cudaFree x 4
  CUDA_CHECK(cudaEventRecord(d.split.finished));
}

// --- error bounds: the longest chain of float roundings a product goes through -------------

// First pass over len floats: the fmaf steps of one chain (+1 for the tail), 2 to add
// the four lanes, 10 for the two shuffle trees of ch06::block_sum.
int64_t first_pass_depth(int64_t len, int64_t blocks) { return sw::ceil_div(len / kVec, blocks * kBlock) + 13; }
// Second pass: chapter 06's kernel, one block over `count` block sums (as chapter 06 counts it).
int64_t final_pass_depth(int64_t count) { return ch06::launch_depth(count, kBlock); }

int64_t depth_two_pass(const Dot& d) {
  const int64_t blocks = dot::blocks_for(d.n, d.max_blocks);
  return first_pass_depth(d.n, blocks) + final_pass_depth(blocks);
}
int64_t depth_overlap(const Dot& d) {  // the longest chunk, then all chunks' block sums
  const int64_t chunk = std::min(chunk_length(d.n), d.n);
  int64_t partials = 0;
  for (int64_t off = 0; off < d.n; off += chunk) partials += dot::blocks_for(std::min(chunk, d.n - off), d.max_blocks);
  return first_pass_depth(chunk, dot::blocks_for(chunk, d.max_blocks)) + final_pass_depth(partials);
}
int64_t depth_vendor(const Dot& d) { return sw::ceil_div(d.n, kVendorThreads) + 64; }

// --- the version table ------------------------------------------------------------------------

enum class From { Device, Pageable, Pinned };  // where x and y are when the call starts

struct Version {
  const char* name;
  void (*run)(Dot& d);  // From::Device: the answer in d.result (device); else in d.answer (host)
  int64_t (*depth)(const Dot& d);
  const char* role;
  From from;
  int streams;
};
const Version kVersions[] = {
    {"cublas-sdot", cublas_sdot, depth_vendor, "vendor", From::Device, 1},
    {"two-pass-float4", two_pass_float4, depth_two_pass, "step", From::Device, 1},
    {"e2e-pageable", e2e_pageable, depth_two_pass, "step", From::Pageable, 1},
    {"e2e-pinned", e2e_pinned, depth_two_pass, "step", From::Pinned, 1},
    {"e2e-overlap", e2e_overlap, depth_overlap, "step", From::Pinned, kStreams},
    {"e2e-alloc-per-call", e2e_alloc_per_call, depth_two_pass, "anti-example", From::Pageable, 1},
};

float answer(const Version& v, const Dot& d) { return v.from == From::Device ? sw::read(d.result.get()) : d.answer; }

// One run on a poisoned result (device and host), the run that is checked before any timing.
float run_once(const Version& v, Dot& d) {
  sw::poison(d.result.get(), sizeof(float));
  d.answer = std::numeric_limits<float>::quiet_NaN();
  d.poison_fresh = true;
  v.run(d);
  d.poison_fresh = false;
  return answer(v, d);
}

// --- benchmark --------------------------------------------------------------------------------

// Every version: poisoned result, one checked run, the timed runs, the last one checked again.
void benchmark(sw::Report& report, const sw::CommonOptions& opt, int64_t n, bool time_cpu) {
  Dot d(n);
  sw::host_fill_floats(d.hx.data(), n, static_cast<uint64_t>(opt.seed));
  sw::host_fill_floats(d.hy.data(), n, static_cast<uint64_t>(opt.seed) + 1);
  d.upload();
  const ch12::DotRef ref = ch12::dot_reference(d.hx.data(), d.hy.data(), n);
  const double bytes = 8.0 * n;  // x and y, read once (end to end: copied once)
  sw::CommonOptions e2e = opt;   // end-to-end calls over kBigCall bytes take tenths of a second
  if (bytes > kBigCall) e2e.reps = std::min(opt.reps, kBigCallReps), e2e.warmup = std::min(opt.warmup, kBigCallWarmup);

  bool ceiling_done = false;
  for (const Version& v : kVersions) {
    const int64_t depth = v.depth(d);
    const sw::SumCheck first = sw::check_sum(run_once(v, d), ref.value, ref.abs_sum, depth, n);
    sw::Result r{v.name, n, bytes, {}, false, v.role};
    if (v.from == From::Device) {
      r.timing = sw::time_gpu(opt, [&] { v.run(d); });
    } else {
      if (!ceiling_done) {  // the ceiling of every end-to-end row: the copies alone
        const sw::Timing t = sw::time_gpu(e2e, [&] {
          CUDA_CHECK(cudaMemcpy(d.x.get(), d.px.get(), n * sizeof(float), cudaMemcpyHostToDevice));
          CUDA_CHECK(cudaMemcpy(d.y.get(), d.py.get(), n * sizeof(float), cudaMemcpyHostToDevice));
        });
        sw::Result c{"h2d-copy-pinned", n, bytes, t, true, "ceiling"};
        c.note = "copies only";
        report.add(c);
        ceiling_done = true;
      }
      for (int i = 0; i < e2e.warmup; ++i) v.run(d);  // like sw::time_gpu, events inside the call
      d.split.clear();
      for (int i = 0; i < e2e.reps; ++i) v.run(d), d.split.collect();
      const double copy_ms = sw::summarize(d.split.copy_ms).ms_median;
      r.bytes = bytes + sizeof(float);  // x and y to the device, the result back
      r.timing = sw::summarize(d.split.total_ms);
      r.note = "end-to-end";  // a different measure from the kernel rows: no "vs cuBLAS" ratio
      r.extra = {{"pinned", v.from == From::Pinned ? 1.0 : 0.0}, {"streams", static_cast<double>(v.streams)},
                 {"copy_ms", copy_ms}, {"copy_gbps", sw::gbps(bytes, copy_ms)},
                 {"kernel_ms", sw::summarize(d.split.kernel_ms).ms_median},
                 {"other_ms", sw::summarize(d.split.other_ms).ms_median}};
    }
    const sw::SumCheck c = sw::check_sum(answer(v, d), ref.value, ref.abs_sum, depth, n);
    r.ok = first.ok && c.ok;
    if (v.from == From::Device)
      r.extra = {{"rel_error", c.abs_error / ref.abs_sum}, {"rel_bound", c.bound / ref.abs_sum}};
    if (v.run == two_pass_float4) r.extra["blocks"] = static_cast<double>(dot::blocks_for(n, d.max_blocks));
    report.add(r);
  }
  if (time_cpu) {  // the CPU baselines, once each
    double got = 0;
    sw::Timing t = sw::time_cpu(0, 1, [&] { got = ch12::dot_serial_double(d.hx.data(), d.hy.data(), n); });
    sw::Result serial{"cpu-serial-double", n, bytes, t, sw::check_sum(got, ref.value, ref.abs_sum, 1, n).ok, "lesson"};
    serial.extra = {{"threads", 1.0}};
    report.add(serial);
    t = sw::time_cpu(0, 1, [&] { got = ch12::dot_all_cores_double(d.hx.data(), d.hy.data(), n); });
    const int64_t threads = sw::host_threads();
    sw::Result all{"cpu-all-cores-double", n, bytes, t,
                   sw::check_sum(got, ref.value, ref.abs_sum, threads, n).ok, "cpu"};
    all.extra = {{"threads", static_cast<double>(threads)}};
    report.add(all);
  }
}

}  // namespace

std::vector<ch12::Answer> ch12::run_every_version(const float* x, const float* y, int64_t n) {
  Dot d(n);
  std::copy(x, x + n, d.hx.begin());
  std::copy(y, y + n, d.hy.begin());
  d.upload();
  const uint64_t digest = d.input_digest();
  std::vector<Answer> answers;
  for (const Version& v : kVersions)
    answers.push_back({v.name, run_once(v, d), v.depth(d), d.input_digest() == digest});
  return answers;
}

int main(int argc, char** argv) {
  int64_t n = kDefaultN;
  sw::Cli cli("12_dot_product", "Dot product of two float vectors: the kernel, and the whole call from host memory.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "floats per vector (default: 2^28, then 2^20)");
  std::vector<std::string> steps;
  for (const Version& v : kVersions)
    if (std::string(v.role) != "vendor") steps.push_back(v.name);
  cli.set_steps(steps);
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "12", "dot");
  if (opt.verify_only) return ch12::verify(report, static_cast<uint64_t>(opt.seed));

  // Device: x, y of the context and of one allocate-per-call call at the same time.
  const int64_t max_blocks = sw::resident_grid(dot::dot_partials, kBlock);
  sw::require_fits(gpu, "--n", n, 4.0 * sizeof(float), 2.0 * max_blocks * kChunks * sizeof(float));
  report.note("kernel-only rows read x and y in device memory; end-to-end rows start from host memory "
              "and end with the result on the host");
  benchmark(report, opt, n, true);
  if (!cli.was_given("--n")) benchmark(report, opt, kSmallN, false);
  return report.exit_code();
}
