// Chapter 12's problem: x and y in pageable and in pinned host memory and on the
// device, their reference, the streams of e2e-overlap, the events that split an
// end-to-end call into copy, kernel and other time (Split), and the cuBLAS handle
// (Dot); what the measurement protocol checks (DotData: one version's result,
// CopyData: the copy ceiling's copies); the step table's type (Step) and the problem
// that sw::bench::run runs (DotProblem: its --n, its checks and its rows).
// Defined in dot_problem.cu (the data and the rows) and dot_checks.cu (the checks,
// the CPU reference and baselines); the versions are in 12_dot_product.cu.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "common/bench/program.h"
#include "common/bench/protocol.h"
#include "common/cli.h"
#include "common/cuda_utils.cuh"
#include "common/device.h"

namespace ch12 {

constexpr int kStreams = 4;  // streams of e2e-overlap
constexpr int kChunks = 16;  // at most this many chunks per call

enum class From { Device, Pageable, Pinned };  // where x and y are when a call starts

// --- the CPU side (dot_checks.cu) -------------------------------------------------------

struct DotRef {
  double value = 0;    // sum x_i y_i in double (each product is exact in double)
  double abs_sum = 0;  // sum |x_i y_i|, for the bound
};
DotRef dot_reference(const float* x, const float* y, int64_t n);  // on all cores

// The CPU baselines: one double accumulator on one core (a lesson), and the same
// loop on every core over contiguous slices, the slice sums added in order ("vs CPU").
double dot_serial_double(const float* x, const float* y, int64_t n);
double dot_all_cores_double(const float* x, const float* y, int64_t n);

// In 12_dot_product.cu: the first pass's blocks resident at once (one full wave).
int64_t first_pass_max_blocks();

// --- one problem: the vectors in host and device memory ---------------------------------

// Events at the phase boundaries of one end-to-end call, on the legacy default
// stream (and one per chunk for e2e-overlap). collect() stores that call's total
// time and its copy, kernel and other (allocation, launches, the copy back) parts.
struct Split {
  cudaEvent_t start, copy_begin, copied, computed, finished, chunk[kChunks];
  int chunks = 0;        // chunks of the last call; 0: one copy, then the kernel
  bool pending = false;  // a call recorded events that collect() has not read
  std::vector<double> copy_ms, kernel_ms, other_ms, total_ms;  // one entry per collected call

  Split();
  ~Split();
  Split(const Split&) = delete;
  Split& operator=(const Split&) = delete;
  double since_start(cudaEvent_t e) const;
  void collect();
  void collect_previous() {  // before a call: the one before it, if any
    if (pending) collect();
    pending = true;
  }
  void clear() {
    copy_ms.clear(), kernel_ms.clear(), other_ms.clear(), total_ms.clear(), pending = false;
  }
};

// x and y in pageable and in pinned host memory, device buffers allocated once (the
// seed's context), the streams of e2e-overlap, the events that split a call, and a
// cuBLAS handle in device pointer mode (cublasSdot leaves its result on the GPU).
struct Dot {
  explicit Dot(int64_t n);
  ~Dot();
  Dot(const Dot&) = delete;
  Dot& operator=(const Dot&) = delete;
  void upload();  // hx and hy (filled by the caller) to the pinned buffers and the device
  void generate(uint64_t from);  // x and y from `from` (y from from + 1), uploaded, their reference
  uint64_t input_digest() const;  // of x and y on the device: a version may read them only

  int64_t n;
  int64_t max_blocks = first_pass_max_blocks();
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
  uint64_t uploaded = 0;      // input_digest() of x and y as upload() wrote them
};

// What DotData and CopyData share: the Dot they check, and new x and y from a seed
// (Dot::generate) for --graded-timing.
struct NewInputs {
  Dot& d;
  bool reseed(uint64_t s) const {
    d.generate(s);
    return true;
  }
  uint64_t seed() const { return d.seed; }
};

// One version on d as sw::bench::measure and check_once see it
// (common/bench/protocol.h):
//  - the result to poison: on the device, on the host, and, through d.poison_fresh,
//    the new one that e2e-alloc-per-call allocates in the call that follows (the
//    checked first call, and with --graded-timing every call);
//  - the result against d.ref within the bound of `depth` float roundings (`exact`:
//    equal to it), and x and y on the device against `digest` (check_input);
//  - new x and y from a seed (Dot::generate);
//  - `split` (the end-to-end rows' measurement): before every call, outside the
//    timed events, the events of the call before it are collected (Split).
// The kernel rows (From::Device) report their error against sum |x_i y_i|
// (rel_error); the end-to-end rows, the same kernels, do not.
struct DotData : NewInputs {
  From from;  // From::Device: the result stays in d.result; else it is d.answer (host)
  int64_t depth;
  bool exact = false;
  bool check_input = false;
  uint64_t digest = 0;
  bool split = false;

  double bound() const;  // absolute
  void poison() const;
  sw::bench::Verdict check() const;
  void restore() const {
    if (split) d.split.collect_previous();
  }
  std::vector<sw::bench::Buffer> outputs() const {  // the result that check() reads
    if (from == From::Device) return {{d.result.get(), sizeof(float)}};
    return {{&d.answer, sizeof(float)}};
  }
};

// The copy ceiling's call (copy_inputs: x and y from pinned memory to the device) as
// the protocol sees it: x and y on the device poisoned, then checked against the
// digest of what upload() wrote; new x and y from a seed.
struct CopyData : NewInputs {
  void poison() const;
  sw::bench::Verdict check() const;
};
void copy_inputs(Dot& d);

// --- the step table and the problem -----------------------------------------------------

// What a row needs beside its launcher: its error bound (the longest chain of float
// roundings), where x and y start, its streams, and (two-pass-float4) its grid.
struct Bound {
  int64_t (*depth)(const Dot& d);
  From from = From::Device;
  int streams = 1;
  int64_t (*blocks)(const Dot& d) = nullptr;  // the first pass's blocks, for the row's extra
};
// From::Device: the answer in d.result (device); else in d.answer (host).
using Step = sw::bench::Step<void (*)(Dot& d), Bound>;

struct DotProblem {
  using Step = ch12::Step;
  static constexpr const char* kName = "dot";
  static constexpr bool kExchangesOutputs = true;  // every check is check_steps's check_once
  Step vendor;                   // cublas-sdot: measured and checked whatever --variant says
  int64_t n = int64_t{1} << 28;  // 1 GiB per vector, far beyond L2
  void add_options(sw::Cli& cli, const sw::bench::Program<Step>&);
  // Every chosen step and the vendor at 18 sizes (or --n), random and exact-integer data.
  void verify(const sw::bench::Session<Step>& s);
  // At --n (without it: 2^28, then 2^20): the vendor, the chosen steps, the copy
  // ceiling before the first end-to-end row, and with every step the CPU rows.
  void bench(const sw::bench::Session<Step>& s);
};

}  // namespace ch12
