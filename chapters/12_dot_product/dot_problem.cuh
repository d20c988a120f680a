// Chapter 12's problem: x and y in pageable and in pinned host memory and on the
// device, their reference, the streams of e2e-overlap, the events that split an
// end-to-end call into copy, kernel and other time (Split), and the cuBLAS handle
// (Dot); and one version on them as the measurement protocol sees it (DotData).
// Included once, by 12_dot_product.cu.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "common/bench/protocol.h"
#include "common/check.h"
#include "common/cublas_check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/verify.h"
#include "dot_checks.h"
#include "dot_kernel.cuh"

namespace ch12 {

using dot::kBlock;

constexpr int kStreams = 4;  // streams of e2e-overlap
constexpr int kChunks = 16;  // at most this many chunks per call

enum class From { Device, Pageable, Pinned };  // where x and y are when a call starts

// --- one problem: the vectors in host and device memory ---------------------------------

// Events at the phase boundaries of one end-to-end call, on the legacy default
// stream (and one per chunk for e2e-overlap). collect() stores that call's total
// time and its copy, kernel and other (allocation, launches, the copy back) parts.
struct Split {
  cudaEvent_t start, copy_begin, copied, computed, finished, chunk[kChunks];
  int chunks = 0;  // chunks of the last call; 0: one copy, then the kernel
  std::vector<double> copy_ms, kernel_ms, other_ms, total_ms;  // one entry per collected call

  Split() {
    for (cudaEvent_t* e : {&start, &copy_begin, &copied, &computed, &finished})
      CUDA_CHECK(cudaEventCreate(e));
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
    for (int c = 0; c < chunks; ++c)
      copy_end = std::max(copy_end, since_start(chunk[c]));  // the last chunk's
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
  // x and y from `from` (y from from + 1), uploaded, and their reference.
  void generate(uint64_t from) {
    seed = from;
    sw::host_fill_floats(hx.data(), n, from);
    sw::host_fill_floats(hy.data(), n, from + 1);
    upload();
    ref = dot_reference(hx.data(), hy.data(), n);
  }
  // Of x and y on the device: a version may read them only.
  uint64_t input_digest() const {
    return sw::device_digest(x.get(), x.bytes()) + 3 * sw::device_digest(y.get(), y.bytes());
  }

  int64_t n;
  int64_t max_blocks = sw::resident_grid(dot::dot_partials, kBlock);
  std::vector<float> hx, hy;       // pageable
  sw::PinnedBuffer<float> px, py;  // page-locked
  sw::DeviceBuffer<float> x, y, partials, result;
  cudaStream_t stream[kStreams];
  cudaEvent_t joined[kStreams];
  Split split;
  cublasHandle_t blas;
  float answer = 0;           // an end-to-end call's result, on the host
  bool poison_fresh = false;  // e2e-alloc-per-call poisons its new result (poisoned calls)
  DotRef ref;                 // of x and y as they are now
  uint64_t seed = 0;          // of x and y as generate() wrote them
};

// One version on d as sw::bench::measure and check_once see it
// (common/bench/protocol.h):
//  - the result to poison: on the device, on the host, and, through d.poison_fresh,
//    the new one that e2e-alloc-per-call allocates in the call that follows (the
//    checked first call, and with --graded-timing every call);
//  - the result against d.ref within the bound of `depth` float roundings (`exact`:
//    equal to it), and x and y on the device against `digest` (check_input);
//  - new x and y from a seed (Dot::generate).
// The kernel rows (From::Device) report their error against sum |x_i y_i|
// (rel_error); the end-to-end rows, the same kernels, do not.
struct DotData {
  Dot& d;
  From from;  // From::Device: the result stays in d.result; else it is d.answer (host)
  int64_t depth;
  bool exact = false;
  bool check_input = false;
  uint64_t digest = 0;

  double bound() const { return sw::float_sum_bound(depth, d.ref.abs_sum, d.n); }  // absolute
  void poison() const {
    sw::poison(d.result.get(), sizeof(float));
    d.answer = std::numeric_limits<float>::quiet_NaN();
    d.poison_fresh = true;
  }
  sw::bench::Verdict check() const {
    d.poison_fresh = false;  // calls that follow unpoisoned (the timed ones) poison nothing
    const float got = from == From::Device ? sw::read(d.result.get()) : d.answer;
    const sw::SumCheck c = sw::check_sum(got, d.ref.value, d.ref.abs_sum, depth, d.n);
    const bool kept = !check_input || d.input_digest() == digest;
    sw::bench::Verdict v{(exact ? got == d.ref.value : c.ok) && kept, "", NAN, 0};
    if (from == From::Device) v.rel_error = c.abs_error / d.ref.abs_sum;
    if (!kept) {
      v.detail = "input changed: the version wrote into x or y";
    } else if (!v.ok) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "got %.9g, want %.9g, error %.3g, bound %.3g", got,
                    d.ref.value, c.abs_error, exact ? 0.0 : c.bound);
      v.detail = buf;
    }
    return v;
  }
  bool reseed(uint64_t s) const {
    d.generate(s);
    return true;
  }
  uint64_t seed() const { return d.seed; }
};

}  // namespace ch12
