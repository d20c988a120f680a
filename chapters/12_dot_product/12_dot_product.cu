// Chapter 12: a dot product, end to end.
//
// What changed:  chapters 02-06 timed a sum whose data was already on the GPU. A
//                caller of a library (the seed calls a DLL from Go) has its vectors in
//                host memory, so every call copies 8 bytes per element over PCIe and
//                then runs a kernel that reads the same 8 bytes from DRAM about 50
//                times faster. This chapter times the whole call and splits it into
//                copy time and kernel time.
// The kernel:    two-pass-float4 (dot_kernel.cuh, shared with the C ABI library):
//                float4 loads of x and y, four float accumulators per thread, block
//                partial sums with warp shuffles, then one block adds the partials in
//                a fixed order (deterministic). Compared with cublasSdot in device
//                pointer mode (the result stays on the GPU, as ours does).
// End to end:    e2e-pageable        cudaMemcpy from ordinary (pageable) host memory,
//                                    buffers kept in a context (the seed's second version)
//                e2e-pinned          the same from page-locked memory (cudaMallocHost)
//                e2e-overlap         pinned, in chunks on several streams, so the kernel
//                                    of one chunk runs while the next chunk is copied
//                e2e-alloc-per-call  cudaMalloc and cudaFree on every call (the seed's
//                                    first version)
// Bottleneck:    the kernel is bound by DRAM bandwidth; every end-to-end case is bound
//                by the host-to-device copy (PCIe, and for pageable memory the driver's
//                extra host copy into a staging buffer).
// Precision:     float accumulation against a double reference; the bound is
//                gamma_depth * sum |x_i y_i| with depth from dot::summation_depth.
// Run:           build/chapters/12_dot_product [--n 2^28] [--verify-only] [--json]
//                (without --n the benchmark runs at 2^28 and at 2^20)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/cli.h"
#include "common/cublas_check.h"
#include "common/data.h"
#include "common/device.h"
#include "common/gpu_timer.h"
#include "common/parallel.h"
#include "common/report.h"
#include "common/timing.h"
#include "common/verify.h"
#include "dot_kernel.cuh"

namespace {

constexpr int64_t kDefaultN = int64_t{1} << 28;  // 1 GiB per vector, far beyond L2
constexpr int64_t kSmallN = int64_t{1} << 20;    // 4 MiB per vector: fits in L2
constexpr int kStreams = 4;                      // streams of the overlapped case
constexpr int kChunks = 16;                      // at most this many chunks per call
constexpr int64_t kMinChunk = int64_t{1} << 16;  // floats; smaller chunks cost more in API calls
constexpr int64_t kChunkAlign = 1024;            // floats: chunk starts stay 16-byte aligned
constexpr double kBigCall = 64e6;                // bytes; slower calls are timed fewer times
constexpr int kBigCallReps = 5;
constexpr int kBigCallWarmup = 1;
constexpr int kRefChunks = 64;                   // parallel chunks of the CPU reference
// cuBLAS does not document its order of additions; we allow chains of n/1024
// roundings (any reduction over at least 1024 threads has shorter ones).
constexpr int64_t kVendorThreads = 1024;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// --- host memory ---------------------------------------------------------------------

// Page-locked host memory: the GPU's copy engines read it directly.
class PinnedFloats {
 public:
  explicit PinnedFloats(int64_t n) {
    CUDA_CHECK(cudaMallocHost(&p_, static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float)));
  }
  ~PinnedFloats() { cudaFreeHost(p_); }
  PinnedFloats(const PinnedFloats&) = delete;
  PinnedFloats& operator=(const PinnedFloats&) = delete;
  float* get() const { return p_; }

 private:
  float* p_ = nullptr;
};

// --- a context: device buffers allocated once ------------------------------------------

struct Context {
  Context(int64_t n, int max_blocks)
      : x(n), y(n), partials(int64_t{max_blocks} * kChunks), result(1), max_blocks(max_blocks) {}
  sw::DeviceBuffer<float> x, y, partials, result;
  int max_blocks;
};

// Events at the phase boundaries of one end-to-end call, all on the legacy default
// stream except the per-chunk ones. After each call, collect() stores that call's
// total time (start to finished) and its copy, kernel and other (allocation,
// launches, the result's copy back) times.
class Split {
 public:
  Split() : chunk_(kChunks) {
    for (cudaEvent_t* e : {&start, &copy_begin, &copied, &computed, &finished}) CUDA_CHECK(cudaEventCreate(e));
    for (cudaEvent_t& e : chunk_) CUDA_CHECK(cudaEventCreate(&e));
  }
  ~Split() {
    for (cudaEvent_t e : {start, copy_begin, copied, computed, finished}) cudaEventDestroy(e);
    for (cudaEvent_t e : chunk_) cudaEventDestroy(e);
  }
  Split(const Split&) = delete;
  Split& operator=(const Split&) = delete;

  cudaEvent_t start, copy_begin, copied, computed, finished;
  cudaEvent_t chunk(int c) const { return chunk_[c]; }  // chunk c's copies are done
  void set_chunks(int used) { chunks_used_ = used; }

  void collect() {
    CUDA_CHECK(cudaEventSynchronize(finished));
    double copy_end = 0;
    if (chunks_used_ == 0) {
      copy_end = since_start(copied);
    } else {  // overlapped: the copies end when the last chunk's copy ends
      for (int c = 0; c < chunks_used_; ++c) copy_end = std::max(copy_end, since_start(chunk_[c]));
    }
    const double copy = copy_end - since_start(copy_begin);
    const double kernel = since_start(computed) - copy_end;  // overlapped: the part not hidden
    const double total = since_start(finished);
    copy_ms_.push_back(copy);
    kernel_ms_.push_back(kernel);
    other_ms_.push_back(total - copy - kernel);
    total_ms_.push_back(total);
  }
  // The whole call over the last `reps` calls (the timed ones).
  sw::Timing timing(int reps) const {
    const size_t k = std::min(total_ms_.size(), static_cast<size_t>(reps));
    return sw::summarize(std::vector<double>(total_ms_.end() - k, total_ms_.end()));
  }
  // Medians over the last `reps` calls (the timed ones).
  std::map<std::string, double> extra(int reps, double bytes) const {
    const double copy = last(copy_ms_, reps), kernel = last(kernel_ms_, reps);
    return {{"copy_ms", copy}, {"kernel_ms", kernel}, {"other_ms", last(other_ms_, reps)},
            {"copy_gbps", sw::gbps(bytes, copy)}};
  }

 private:
  double since_start(cudaEvent_t e) const {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, e));
    return ms;
  }
  static double last(const std::vector<double>& v, int reps) {
    const size_t k = std::min(v.size(), static_cast<size_t>(reps));
    return sw::summarize(std::vector<double>(v.end() - k, v.end())).ms_median;
  }
  std::vector<cudaEvent_t> chunk_;
  int chunks_used_ = 0;
  std::vector<double> copy_ms_, kernel_ms_, other_ms_, total_ms_;
};

// --- the end-to-end calls: host x, y in, a host float out ---------------------------------

// Copy both vectors, run both passes, copy the result back: the seed's dot().
// Pageable or pinned: only the host pointers differ.
float dot_copy_then_compute(Context& c, const float* hx, const float* hy, int64_t n, Split& s) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  CUDA_CHECK(cudaEventRecord(s.start));
  CUDA_CHECK(cudaEventRecord(s.copy_begin));
  CUDA_CHECK(cudaMemcpy(c.x.get(), hx, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(c.y.get(), hy, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaEventRecord(s.copied));
  CUDA_CHECK(dot::launch_dot(c.x.get(), c.y.get(), n, c.partials.get(), c.max_blocks, c.result.get(), 0));
  CUDA_CHECK(cudaEventRecord(s.computed));
  float r = 0;
  CUDA_CHECK(cudaMemcpy(&r, c.result.get(), sizeof r, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventRecord(s.finished));
  s.set_chunks(0);
  return r;
}

// The seed's first version: new device buffers on every call. `poison` (tests
// only) marks the fresh result so that an unwritten one cannot pass.
float dot_alloc_per_call(const float* hx, const float* hy, int64_t n, int max_blocks, Split& s,
                         bool poison) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  float r = 0;
  CUDA_CHECK(cudaEventRecord(s.start));
  {
    Context c(n, max_blocks);  // cudaMalloc x 4
    if (poison) sw::poison(c.result.get(), sizeof(float));
    CUDA_CHECK(cudaEventRecord(s.copy_begin));
    CUDA_CHECK(cudaMemcpy(c.x.get(), hx, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(c.y.get(), hy, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaEventRecord(s.copied));
    CUDA_CHECK(dot::launch_dot(c.x.get(), c.y.get(), n, c.partials.get(), max_blocks, c.result.get(), 0));
    CUDA_CHECK(cudaEventRecord(s.computed));
    CUDA_CHECK(cudaMemcpy(&r, c.result.get(), sizeof r, cudaMemcpyDeviceToHost));
  }  // cudaFree x 4
  CUDA_CHECK(cudaEventRecord(s.finished));
  s.set_chunks(0);
  return r;
}

// Streams that wait for the default stream at the start of a call and are waited
// for at its end (fork and join through events); otherwise independent.
class Streams {
 public:
  Streams() {
    for (int k = 0; k < kStreams; ++k) {
      CUDA_CHECK(cudaStreamCreateWithFlags(&s_[k], cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreateWithFlags(&done_[k], cudaEventDisableTiming));
    }
  }
  ~Streams() {
    for (int k = 0; k < kStreams; ++k) {
      cudaStreamDestroy(s_[k]);
      cudaEventDestroy(done_[k]);
    }
  }
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;
  cudaStream_t operator[](int k) const { return s_[k]; }
  void fork(cudaEvent_t after) {
    for (cudaStream_t s : s_) CUDA_CHECK(cudaStreamWaitEvent(s, after));
  }
  void join() {  // the default stream waits for every stream
    for (int k = 0; k < kStreams; ++k) {
      CUDA_CHECK(cudaEventRecord(done_[k], s_[k]));
      CUDA_CHECK(cudaStreamWaitEvent(0, done_[k]));
    }
  }

 private:
  cudaStream_t s_[kStreams];
  cudaEvent_t done_[kStreams];
};

// Floats per chunk: n / kChunks, at least kMinChunk, a multiple of kChunkAlign.
int64_t chunk_length(int64_t n) {
  const int64_t c = std::max(ceil_div(n, kChunks), kMinChunk);
  return ceil_div(c, kChunkAlign) * kChunkAlign;
}

// Chunk k is copied and reduced on stream k % kStreams; while the copy engine moves
// chunk k+1, the SMs reduce chunk k. hx and hy must be pinned, or the copies are
// not asynchronous. Each chunk writes its own range of partial sums, and one final
// pass adds them all, so the result does not depend on timing.
float dot_overlapped(Context& c, Streams& st, const float* hx, const float* hy, int64_t n, Split& s) {
  const int64_t chunk = chunk_length(n);
  const int chunks = static_cast<int>(ceil_div(n, chunk));
  CUDA_CHECK(cudaEventRecord(s.start));
  CUDA_CHECK(cudaEventRecord(s.copy_begin));
  st.fork(s.copy_begin);
  int64_t partials = 0;
  for (int k = 0; k < chunks; ++k) {
    const cudaStream_t stream = st[k % kStreams];
    const int64_t off = k * chunk, len = std::min(chunk, n - off);
    const size_t bytes = static_cast<size_t>(len) * sizeof(float);
    CUDA_CHECK(cudaMemcpyAsync(c.x.get() + off, hx + off, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(c.y.get() + off, hy + off, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaEventRecord(s.chunk(k), stream));
    CUDA_CHECK(dot::launch_partials(c.x.get() + off, c.y.get() + off, len, c.partials.get() + partials,
                                    c.max_blocks, stream));
    partials += dot::blocks_for(len, c.max_blocks);
  }
  st.join();
  CUDA_CHECK(dot::launch_final(c.partials.get(), partials, c.result.get(), 0));
  CUDA_CHECK(cudaEventRecord(s.computed));
  float r = 0;
  CUDA_CHECK(cudaMemcpy(&r, c.result.get(), sizeof r, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventRecord(s.finished));
  s.set_chunks(chunks);
  return r;
}

// --- reference and error bounds ----------------------------------------------------------

struct DotRef {
  double value = 0;    // sum x_i y_i in double (each product is exact in double)
  double abs_sum = 0;  // sum |x_i y_i|, for the bound
};

DotRef dot_reference(const float* x, const float* y, int64_t n) {
  std::vector<double> part(kRefChunks, 0.0), part_abs(kRefChunks, 0.0);
  sw::parallel_for(kRefChunks, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      double s = 0, a = 0;
      for (int64_t i = n * c / kRefChunks; i < n * (c + 1) / kRefChunks; ++i) {
        const double p = static_cast<double>(x[i]) * y[i];
        s += p;
        a += std::fabs(p);
      }
      part[c] = s, part_abs[c] = a;
    }
  });
  DotRef r;
  for (int c = 0; c < kRefChunks; ++c) r.value += part[c], r.abs_sum += part_abs[c];
  return r;
}

// The CPU baseline: one core, one double accumulator.
double dot_serial_double(const float* x, const float* y, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * y[i];
  return s;
}

int64_t depth_single(int64_t n, int max_blocks, bool aligned) {
  const int blocks = dot::blocks_for(n, max_blocks);
  return dot::summation_depth(n, blocks, aligned, blocks);
}
int64_t depth_overlapped(int64_t n, int max_blocks) {
  const int64_t chunk = chunk_length(n);
  int64_t partials = 0;
  for (int64_t off = 0; off < n; off += chunk) partials += dot::blocks_for(std::min(chunk, n - off), max_blocks);
  return dot::summation_depth(std::min(chunk, n), dot::blocks_for(std::min(chunk, n), max_blocks), true, partials);
}
int64_t depth_vendor(int64_t n) { return ceil_div(n, kVendorThreads) + 64; }

// --- cuBLAS --------------------------------------------------------------------------------

class Cublas {
 public:
  Cublas() {
    CUBLAS_CHECK(cublasCreate(&h_));
    CUBLAS_CHECK(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_DEVICE));  // result stays on the GPU
  }
  ~Cublas() { cublasDestroy(h_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  void dot(const float* x, const float* y, int64_t n, float* d_result) {
    CUBLAS_CHECK(cublasSdot_64(h_, n, x, 1, y, 1, d_result));
  }

 private:
  cublasHandle_t h_ = nullptr;
};

float fetch(const float* d) {
  float h = 0;
  CUDA_CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

// --- verification ----------------------------------------------------------------------------

// Data whose dot product float computes exactly in any order: products in [-16, 16],
// so every partial sum is an integer below 2^24 while 16 n < 2^24.
constexpr int64_t kExactMaxN = (int64_t{1} << 24) / 16 - 1;
void fill_small_integers(float* x, int64_t n, uint64_t seed) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<int>(sw::random_bits(seed, i) % 9) - 4);
}

int verify(sw::Report& report, uint64_t seed) {
  const int64_t sizes[] = {1, 2, 3, 4, 5, 31, 32, 33, 255, 256, 257, 1000, 1023, 1024, 1025,
                           65537, 1000003, (int64_t{1} << 22) + 1};
  int max_blocks = 0;
  CUDA_CHECK(dot::resident_blocks(&max_blocks));
  Cublas cublas;
  Streams streams;
  Split split;
  for (int64_t n : sizes) {
    Context ctx(n + 1, max_blocks);  // one spare element for the misaligned case
    PinnedFloats px(n + 1), py(n + 1);
    for (const char* data : {"random", "integers"}) {
      const bool exact = std::strcmp(data, "integers") == 0;
      if (exact && n + 1 > kExactMaxN) continue;
      if (exact) {
        fill_small_integers(px.get(), n + 1, seed);
        fill_small_integers(py.get(), n + 1, seed + 1);
      } else {
        sw::host_fill_floats(px.get(), n + 1, seed);
        sw::host_fill_floats(py.get(), n + 1, seed + 1);
      }
      std::vector<float> hx(px.get(), px.get() + n + 1), hy(py.get(), py.get() + n + 1);  // pageable copies
      const std::string at = std::string(" ") + data + " n=" + std::to_string(n);
      auto check = [&](const std::string& variant, double got, const DotRef& ref, int64_t depth) {
        const sw::SumCheck c = sw::check_sum(got, ref.value, ref.abs_sum, depth, n);
        const bool ok = exact ? got == ref.value : c.ok;  // exact data: exact answer
        char detail[160];
        std::snprintf(detail, sizeof detail, "got %.9g, want %.9g, error %.3g, bound %.3g", got, ref.value,
                      c.abs_error, exact ? 0.0 : c.bound);
        report.check(ok, variant + at, ok ? "" : detail);
      };
      const DotRef ref = dot_reference(hx.data(), hy.data(), n);
      const DotRef ref_shifted = dot_reference(hx.data() + 1, hy.data() + 1, n);

      // Kernel only, from device memory.
      CUDA_CHECK(cudaMemcpy(ctx.x.get(), hx.data(), (n + 1) * sizeof(float), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(ctx.y.get(), hy.data(), (n + 1) * sizeof(float), cudaMemcpyHostToDevice));
      sw::poison(ctx.result.get(), sizeof(float));
      CUDA_CHECK(dot::launch_dot(ctx.x.get(), ctx.y.get(), n, ctx.partials.get(), max_blocks, ctx.result.get(), 0));
      check("two-pass-float4", fetch(ctx.result.get()), ref, depth_single(n, max_blocks, true));
      sw::poison(ctx.result.get(), sizeof(float));
      CUDA_CHECK(dot::launch_dot(ctx.x.get() + 1, ctx.y.get() + 1, n, ctx.partials.get(), max_blocks,
                                 ctx.result.get(), 0));
      check("two-pass-float4 misaligned", fetch(ctx.result.get()), ref_shifted, depth_single(n, max_blocks, false));
      sw::poison(ctx.result.get(), sizeof(float));
      cublas.dot(ctx.x.get(), ctx.y.get(), n, ctx.result.get());
      check("cublas-sdot", fetch(ctx.result.get()), ref, depth_vendor(n));

      // End to end, from host memory.
      sw::poison(ctx.result.get(), sizeof(float));
      check("e2e-pageable", dot_copy_then_compute(ctx, hx.data(), hy.data(), n, split), ref,
            depth_single(n, max_blocks, true));
      sw::poison(ctx.result.get(), sizeof(float));
      check("e2e-pinned", dot_copy_then_compute(ctx, px.get(), py.get(), n, split), ref,
            depth_single(n, max_blocks, true));
      sw::poison(ctx.result.get(), sizeof(float));
      check("e2e-overlap", dot_overlapped(ctx, streams, px.get(), py.get(), n, split), ref,
            depth_overlapped(n, max_blocks));
      check("e2e-alloc-per-call", dot_alloc_per_call(hx.data(), hy.data(), n, max_blocks, split, true), ref,
            depth_single(n, max_blocks, true));
    }
  }
  return report.exit_code();
}

// --- benchmark --------------------------------------------------------------------------------

void benchmark(sw::Report& report, const sw::CommonOptions& opt, int64_t n, bool time_cpu) {
  int max_blocks = 0;
  CUDA_CHECK(dot::resident_blocks(&max_blocks));
  const uint64_t seed = static_cast<uint64_t>(opt.seed);
  std::unique_ptr<float[]> hx(new float[n]), hy(new float[n]);  // pageable
  PinnedFloats px(n), py(n);
  sw::host_fill_floats(hx.get(), n, seed);
  sw::host_fill_floats(hy.get(), n, seed + 1);
  std::memcpy(px.get(), hx.get(), n * sizeof(float));
  std::memcpy(py.get(), hy.get(), n * sizeof(float));
  const DotRef ref = dot_reference(hx.get(), hy.get(), n);
  const double bytes = 8.0 * n;  // x and y, read once
  auto checked = [&](double got, int64_t depth) { return sw::check_sum(got, ref.value, ref.abs_sum, depth, n); };
  auto precision = [&](const sw::SumCheck& c) {
    return std::map<std::string, double>{{"rel_error", c.abs_error / ref.abs_sum}, {"rel_bound", c.bound / ref.abs_sum}};
  };

  // Kernel only: the data is already on the device.
  Context ctx(n, max_blocks);
  CUDA_CHECK(cudaMemcpy(ctx.x.get(), hx.get(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(ctx.y.get(), hy.get(), n * sizeof(float), cudaMemcpyHostToDevice));
  {
    Cublas cublas;
    sw::poison(ctx.result.get(), sizeof(float));
    const sw::Timing t = sw::time_gpu(opt, [&] { cublas.dot(ctx.x.get(), ctx.y.get(), n, ctx.result.get()); });
    const sw::SumCheck c = checked(fetch(ctx.result.get()), depth_vendor(n));
    sw::Result r{"cublas-sdot", n, bytes, t, c.ok, "vendor"};
    r.extra = precision(c);
    report.add(r);
  }
  {
    sw::poison(ctx.result.get(), sizeof(float));
    const sw::Timing t = sw::time_gpu(opt, [&] {
      CUDA_CHECK(dot::launch_dot(ctx.x.get(), ctx.y.get(), n, ctx.partials.get(), max_blocks, ctx.result.get(), 0));
    });
    const sw::SumCheck c = checked(fetch(ctx.result.get()), depth_single(n, max_blocks, true));
    sw::Result r{"two-pass-float4", n, bytes, t, c.ok};
    r.extra = precision(c);
    r.extra["blocks"] = dot::blocks_for(n, max_blocks);
    report.add(r);
  }

  // End to end: host memory in, a float on the host out. Large calls take tenths of
  // a second, so they are timed fewer times.
  sw::CommonOptions e2e = opt;
  if (bytes > kBigCall) {
    e2e.reps = std::min(opt.reps, kBigCallReps);
    e2e.warmup = std::min(opt.warmup, kBigCallWarmup);
  }
  const double moved = bytes + sizeof(float);  // x and y to the device, the result back
  {  // the ceiling: the copies alone, from pinned memory
    const sw::Timing t = sw::time_gpu(e2e, [&] {
      CUDA_CHECK(cudaMemcpy(ctx.x.get(), px.get(), n * sizeof(float), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(ctx.y.get(), py.get(), n * sizeof(float), cudaMemcpyHostToDevice));
    });
    sw::Result r{"h2d-copy-pinned", n, bytes, t, true, "ceiling"};
    r.note = "copies only";
    report.add(r);
  }
  auto e2e_case = [&](const char* variant, const char* role, int64_t depth, auto&& call) {
    // Like sw::time_gpu (events, warm-up, median), but the events come from inside
    // the call, so that reading the split between calls is not timed.
    Split split;
    float got = 0;
    sw::poison(ctx.result.get(), sizeof(float));
    for (int i = 0; i < e2e.warmup + e2e.reps; ++i) {
      got = call(split);
      split.collect();
    }
    sw::Result r{variant, n, moved, split.timing(e2e.reps), checked(got, depth).ok, role};
    r.extra = split.extra(e2e.reps, bytes);
    r.note = "end-to-end";  // a different measure from the kernel rows: no "vs cuBLAS" ratio
    report.add(r);
  };
  Streams streams;
  const int64_t depth = depth_single(n, max_blocks, true);
  e2e_case("e2e-pageable", "step", depth,
           [&](Split& s) { return dot_copy_then_compute(ctx, hx.get(), hy.get(), n, s); });
  e2e_case("e2e-pinned", "step", depth,
           [&](Split& s) { return dot_copy_then_compute(ctx, px.get(), py.get(), n, s); });
  e2e_case("e2e-overlap", "step", depth_overlapped(n, max_blocks),
           [&](Split& s) { return dot_overlapped(ctx, streams, px.get(), py.get(), n, s); });
  e2e_case("e2e-alloc-per-call", "anti-example", depth,
           [&](Split& s) { return dot_alloc_per_call(hx.get(), hy.get(), n, max_blocks, s, false); });

  if (time_cpu) {  // the CPU baseline, once
    double got = 0;
    const sw::Timing t = sw::time_cpu(0, 1, [&] { got = dot_serial_double(hx.get(), hy.get(), n); });
    report.add({"cpu-serial-double", n, bytes, t, sw::check_sum(got, ref.value, ref.abs_sum, 1, n).ok, "cpu"});
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = kDefaultN;
  sw::Cli cli("12_dot_product", "Dot product of two float vectors: the kernel, and the whole call from host memory.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "floats per vector (default: 2^28, then 2^20)");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "12", "dot");
  if (opt.verify_only) return verify(report, static_cast<uint64_t>(opt.seed));

  // Device: x, y of the context and of one allocate-per-call call at the same time.
  int max_blocks = 0;
  CUDA_CHECK(dot::resident_blocks(&max_blocks));
  sw::require_fits(gpu, "--n", n, 4.0 * sizeof(float), 2.0 * max_blocks * kChunks * sizeof(float));
  const bool sizes_given = cli.was_given("--n");
  benchmark(report, opt, n, true);
  if (!sizes_given) benchmark(report, opt, kSmallN, false);
  return report.exit_code();
}
