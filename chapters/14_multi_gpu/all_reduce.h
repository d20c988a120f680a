// Chapter 14, Part 2: the all-reduce. Every GPU holds a float vector and must end
// with the element-wise sum of all K vectors: naive-gather, ring, nccl-allreduce.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/cli.h"
#include "common/cuda_utils.cuh"
#include "common/device.h"
#include "common/report.h"
#include "machine.h"

namespace ch14 {

const std::vector<int> kSliceSweep = {1, 2, 4,
                                      8};  // ring: slices per chunk measured, one stream each
constexpr int64_t kMiB = int64_t{1} << 20;
const std::vector<int64_t> kAllReduceBytes = {4 * kMiB, 64 * kMiB, 256 * kMiB, 1024 * kMiB};
constexpr int64_t kBatchMaxBytes = 64 * kMiB;  // all-reduces this small: timed back to back...
constexpr int kBatchCalls = 10;                // ...this many calls per timed run

// Every GPU's input and output vector (n floats of the capacity), GPU 0's gathered
// copies of the others' vectors (naive-gather), and staging per GPU where the ring
// copies before it adds.
struct Vectors {
  int count = 0;
  int64_t n = 0;
  int slices = 1;        // ring: slices per chunk
  bool peer_ok = false;  // every GPU can read every other GPU's memory
  bool peer_reads =
      false;  // ring: read the neighbour's memory directly (else copy it to staging first)
  std::vector<int64_t> add_grid;  // one full wave of the all-reduce kernels, per GPU
  std::vector<sw::DeviceBuffer<float>> send, recv, staging;
  sw::DeviceBuffer<float> gathered;
};

// The GPU before g in the ring 0 -> 1 -> ... -> count-1 -> 0.
inline int ring_prev(int g, int count) { return (g + count - 1) % count; }

// One GPU's place in the ring and the buffers it uses: its own, and the previous GPU's as this
// GPU addresses them (peer pointers in one process; CUDA IPC mappings across processes).
struct RingView {
  int count = 0, pos = 0;  // GPUs in the ring, and this GPU's place
  // Device numbers, as this process numbers them. Across processes prev_gpu is gpu: the
  // previous GPU's memory is mapped into this one's context.
  int gpu = 0, prev_gpu = 0;
  const float* send = nullptr;
  float* recv = nullptr;
  float* staging = nullptr;  // a chunk's room: the ring without peer loads copies here, then adds
  const float *prev_send = nullptr, *prev_recv = nullptr;
  int64_t add_grid = 1;  // one full wave of ring_add on this GPU (ring_add_grid())
};
inline int ring_steps(int count) { return 2 * (count - 1); }  // reduce-scatter, then all-gather

// Step s (0 .. ring_steps - 1) of GPU r.pos on slice j of `slices`, on `stream`. The caller
// orders it after the previous GPU's step s - 1 of the same slice (and at step 0, after the
// next GPU's last step of the previous call). ring_copies queues the step's copies (an
// all-gather step's, or a reduce step's staging copy without peer reads) on `stream` and
// returns the add left to launch: ring_add of a.n floats (none when a.n is 0).
struct RingAdd {
  const float* mine = nullptr;
  const float* theirs = nullptr;
  float* out = nullptr;
  int64_t n = 0;
};
RingAdd ring_copies(const RingView& r, int64_t n, int slices, bool peer_reads, int s, int j,
                    cudaStream_t stream);
constexpr int kAddBlock = 256;  // threads per block of the all-reduce kernels
// out = mine + theirs, n floats, all three 16-byte aligned.
__global__ void ring_add(const float* __restrict__ mine, const float* __restrict__ theirs,
                         float* __restrict__ out, int64_t n);
// The grid for n floats: one block per kAddBlock float4s, one full wave (`wave` blocks) at most.
inline int64_t add_blocks(int64_t wave, int64_t n) {
  return std::clamp<int64_t>(sw::ceil_div(sw::ceil_div(n, 4), kAddBlock), 1, wave);
}
int64_t ring_add_grid();  // on the current GPU

// Buffers for an all-reduce of up to `capacity` floats on GPUs 0 .. k-1.
Vectors make_vectors(const Machine& m, int k, int64_t capacity);

// naive-gather, ring (the steps) and nccl-allreduce (the vendor row).
extern const std::vector<Step<const Vectors>> kAllReduceSteps;
bool is_ring(const Step<const Vectors>& step);

// Every GPU's input vector: its own stream of d's values (vector_seed).
void fill_vectors(const Vectors& v, Data d, uint64_t seed);
// NaN in every GPU's output vector, so that an element left unwritten fails.
void poison_outputs(const Vectors& v);

// Part 2's benchmark: the peer copies (problem "p2p"), then every all-reduce at every
// size on 1, 2, 4, ..., K GPUs; the ring at `slices` (0: the best of its sweep),
// reading its neighbour's memory directly unless `force_copy`.
void bench_all_reduce(Machine& m, sw::Report& report, const sw::CommonOptions& opt, bool force_copy,
                      int slices);

}  // namespace ch14
