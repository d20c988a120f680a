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
// Files:         here every version's launcher (kernel only and end to end), the error
//                depths, the step table and main; dot_kernel.cuh (the two passes' kernels,
//                shared with the C ABI library); dot_problem.h (x and y in host and device
//                memory, the events that split a call, DotData and CopyData: what the
//                measurement protocol checks, DotProblem: the problem sw::bench::run runs);
//                dot_problem.cu (the rows); dot_checks.cu (--verify-only, the CPU
//                reference and baselines). The C ABI and its Python test: abi/.
// Protocol:      every GPU row, the copy ceiling too, is measured by sw::bench::measure
//                (common/bench/protocol.h), which calls the launcher itself: main ->
//                sw::bench::run -> DotProblem::bench -> bench_size -> measure -> the
//                launcher (launch_two_pass_float4, launch_e2e, ...) -> <<<>>>.
// Run:           build/chapters/12_dot_product [--n 2^28] [--variant two-pass-float4]
//                [--verify-only] [--json]
//                (without --n the benchmark runs at 2^28 and at 2^20, --verify-only at 18
//                sizes)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/bench/program.h"
#include "common/bench/step.h"
#include "common/check.h"
#include "common/cublas_check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "dot_kernel.cuh"
#include "dot_problem.h"

int64_t ch12::first_pass_max_blocks() { return sw::resident_grid(dot::dot_partials, dot::kBlock); }

namespace {

using ch12::Dot;
using ch12::From;
using ch12::kChunks;
using ch12::kStreams;
using ch12::Split;
using dot::kBlock;
using dot::kVec;
constexpr int64_t kMinChunk = int64_t{1} << 16;  // floats; smaller chunks cost more in API calls
constexpr int64_t kChunkAlign = 1024;            // floats: chunk starts stay 16-byte aligned
// cuBLAS does not document its order of additions; we allow chains of n/1024
// roundings (any reduction over at least 1024 threads has shorter ones).
constexpr int64_t kVendorThreads = 1024;

enum class Alloc { kOnce, kPerCall };  // device buffers: the context's, or new ones every call

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

// --- the versions: end to end (host x, y in, a host float out) ------------------------------

// The seed's dot(): copy x and y in from host memory (kFrom: pageable or pinned), both passes,
// the result copied back. Alloc::kPerCall is the seed's first version: the call allocates its
// own four device buffers first and frees them last, instead of using the context's.
template <From kFrom, Alloc kAlloc>
void launch_e2e(Dot& d) {
  static_assert(kFrom != From::Device, "end to end: x and y start in host memory");
  constexpr bool kOwn = kAlloc == Alloc::kPerCall;
  const float* hx = kFrom == From::Pinned ? d.px.get() : d.hx.data();
  const float* hy = kFrom == From::Pinned ? d.py.get() : d.hy.data();
  Split& s = d.split;
  CUDA_CHECK(cudaEventRecord(s.start));
  {
    // kOwn: the call's own device buffers, cudaMalloc x 4 here and cudaFree x 4 at the brace.
    sw::DeviceBuffer<float> own_x, own_y, own_partials, own_result;
    if (kOwn) {
      own_x.allocate(d.n), own_y.allocate(d.n), own_partials.allocate(d.max_blocks);
      own_result.allocate(1);
      if (d.poison_fresh) sw::poison(own_result.get(), sizeof(float));
    }
    float* x = kOwn ? own_x.get() : d.x.get();
    float* y = kOwn ? own_y.get() : d.y.get();
    float* partials = kOwn ? own_partials.get() : d.partials.get();
    float* result = kOwn ? own_result.get() : d.result.get();
    CUDA_CHECK(cudaEventRecord(s.copy_begin));
    CUDA_CHECK(cudaMemcpy(x, hx, d.n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(y, hy, d.n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaEventRecord(s.copied));
    const int64_t blocks = dot::blocks_for(d.n, d.max_blocks);
    dot::dot_partials<<<blocks, kBlock>>>(x, y, d.n, partials);
    CHECK_LAUNCH();
    dot::dot_final<<<1, kBlock>>>(partials, blocks, result);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(s.computed));
    CUDA_CHECK(cudaMemcpy(&d.answer, result, sizeof(float), cudaMemcpyDeviceToHost));
    s.chunks = 0;
  }
  CUDA_CHECK(cudaEventRecord(s.finished));
}

// Floats per chunk: n / kChunks, at least kMinChunk, a multiple of kChunkAlign.
int64_t chunk_length(int64_t n) {
  return sw::ceil_div(std::max(sw::ceil_div(n, kChunks), kMinChunk), kChunkAlign) * kChunkAlign;
}

// Chunk k is copied and reduced on stream k % kStreams: while the copy engine moves
// chunk k+1, the SMs reduce chunk k. The host memory must be pinned, or the copies
// are not asynchronous. Each chunk writes its own range of block sums and one final
// pass adds them all, so the result does not depend on timing.
void launch_e2e_overlap(Dot& d) {
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
    CUDA_CHECK(cudaMemcpyAsync(d.x.get() + off, d.px.get() + off, len * sizeof(float),
                               cudaMemcpyHostToDevice, st));
    CUDA_CHECK(cudaMemcpyAsync(d.y.get() + off, d.py.get() + off, len * sizeof(float),
                               cudaMemcpyHostToDevice, st));
    CUDA_CHECK(cudaEventRecord(s.chunk[k], st));
    const int64_t blocks = dot::blocks_for(len, d.max_blocks);
    dot::dot_partials<<<blocks, kBlock, 0, st>>>(d.x.get() + off, d.y.get() + off, len,
                                                 d.partials.get() + partials);
    CHECK_LAUNCH();
    partials += blocks;
  }
  for (int k = 0; k < kStreams; ++k) {  // join: the default stream waits for every stream
    CUDA_CHECK(cudaEventRecord(d.joined[k], d.stream[k]));
    CUDA_CHECK(cudaStreamWaitEvent(0, d.joined[k]));
  }
  dot::dot_final<<<1, kBlock>>>(d.partials.get(), partials, d.result.get());
  CHECK_LAUNCH();
  CUDA_CHECK(cudaEventRecord(s.computed));
  CUDA_CHECK(cudaMemcpy(&d.answer, d.result.get(), sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventRecord(s.finished));
  s.chunks = chunks;
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

int64_t blocks_two_pass(const Dot& d) { return dot::blocks_for(d.n, d.max_blocks); }

// --- the step table ---------------------------------------------------------------------------

const ch12::Step kCublasSdot{"cublas-sdot", launch_cublas_sdot, {depth_vendor}, "vendor"};
const std::vector<ch12::Step> kSteps = {
    {"two-pass-float4", launch_two_pass_float4, {depth_two_pass, From::Device, 1, blocks_two_pass}},
    {"e2e-pageable", launch_e2e<From::Pageable, Alloc::kOnce>, {depth_two_pass, From::Pageable}},
    {"e2e-pinned", launch_e2e<From::Pinned, Alloc::kOnce>, {depth_two_pass, From::Pinned}},
    {"e2e-overlap", launch_e2e_overlap, {depth_overlap, From::Pinned, kStreams}},
    {"e2e-alloc-per-call",
     launch_e2e<From::Pageable, Alloc::kPerCall>,
     {depth_two_pass, From::Pageable},
     "anti-example"},
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<ch12::Step> program{
      "12_dot_product",
      "Dot product of two float vectors: the kernel, and the whole call from host memory.", "12",
      kSteps};
  return sw::bench::run(argc, argv, program, ch12::DotProblem{kCublasSdot});
}
