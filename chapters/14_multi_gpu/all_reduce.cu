// Chapter 14, Part 2: the all-reduce (see all_reduce.h). naive-gather gathers on GPU 0;
// the ring sums around 0 -> 1 -> ... -> 0 with peer loads or copies; nccl-allreduce is
// the vendor row. Their benchmark is in all_reduce_bench.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "all_reduce.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/multi_gpu_timer.h"
#include "common/nccl_check.h"

namespace ch14 {
namespace {

constexpr int64_t kAlign = 64;  // floats: chunks and slices start 256-byte aligned

// Part p of `parts` of [begin, end). Boundaries fall every kAlign floats from begin, so every part
// starts 256-byte aligned when begin is; short ranges leave the first parts empty.
struct Range {
  int64_t begin, end;
  int64_t size() const { return end - begin; }
};
Range split(Range r, int64_t parts, int64_t p) {
  const int64_t units = sw::ceil_div(r.size(), kAlign);
  return {r.begin + std::min(r.size(), units * p / parts * kAlign),
          r.begin + std::min(r.size(), units * (p + 1) / parts * kAlign)};
}

int wrap(int c, int count) { return ((c % count) + count) % count; }

// A copy from the previous GPU's memory: between two devices in one process; within this GPU's
// context across processes (prev_gpu == gpu: an IPC mapping, read by this GPU's copy engine).
void copy_from_prev(const RingView& r, float* dst, const float* src, size_t bytes,
                    cudaStream_t stream) {
  if (r.prev_gpu == r.gpu)
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  else
    CUDA_CHECK(cudaMemcpyPeerAsync(dst, r.gpu, src, r.prev_gpu, bytes, stream));
}

// naive-gather's sum on GPU 0: out = ((v[0] + v[1]) + v[2]) + ..., in a fixed order.
struct Inputs {
  const float* v[kMaxGpus];
};
__global__ void __launch_bounds__(kAddBlock)
    sum_gathered(Inputs in, int count, float* __restrict__ out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kAddBlock;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kAddBlock + threadIdx.x; i < n; i += stride) {
    float s = in.v[0][i];
    for (int g = 1; g < count; ++g) s += in.v[g][i];
    out[i] = s;
  }
}

// naive-gather: every vector copied to GPU 0, summed there, the sum copied back to every GPU.
// Everything on GPU 0's stream: GPU 0's link carries (K-1) vectors in and (K-1) out.
void launch_naive_gather(Machine& m, const Vectors& v) {
  const size_t bytes = static_cast<size_t>(v.n) * sizeof(float);
  cudaStream_t stream = m.stream[0][0];
  CUDA_CHECK(cudaSetDevice(0));
  Inputs in{};
  in.v[0] = v.send[0].get();
  for (int g = 1; g < v.count; ++g) {
    float* copy = v.gathered.get() + (g - 1) * v.n;
    CUDA_CHECK(cudaMemcpyPeerAsync(copy, 0, v.send[g].get(), g, bytes, stream));
    in.v[g] = copy;
  }
  sum_gathered<<<add_blocks(v.add_grid[0], v.n), kAddBlock, 0, stream>>>(in, v.count,
                                                                         v.recv[0].get(), v.n);
  CHECK_LAUNCH();
  for (int g = 1; g < v.count; ++g)
    CUDA_CHECK(cudaMemcpyPeerAsync(v.recv[g].get(), g, v.recv[0].get(), 0, bytes, stream));
}

// GPU g's view of the ring in one process: its buffers, and its predecessor's through peer
// pointers.
RingView ring_view(const Vectors& v, int g) {
  RingView r;
  r.count = v.count;
  r.pos = r.gpu = g;
  r.prev_gpu = ring_prev(g, v.count);
  r.send = v.send[g].get();
  r.recv = v.recv[g].get();
  r.staging = v.staging[g].get();
  r.prev_send = v.send[r.prev_gpu].get();
  r.prev_recv = v.recv[r.prev_gpu].get();
  r.add_grid = v.add_grid[g];
  return r;
}

// ring: around 0 -> 1 -> ... -> K-1 -> 0, every GPU pulling from the GPU before it: per GPU, step
// and slice, the copies of ring_copies, then the add it leaves (ring_add). Slice j runs on stream j
// of every GPU, and each step of slice j waits (an event) only for the previous GPU's last step of
// slice j, so slices overlap.
void launch_ring(Machine& m, const Vectors& v) {
  const int k = v.count;
  if (k == 1) {  // no neighbour: the sum is the input
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMemcpyAsync(v.recv[0].get(), v.send[0].get(), v.n * sizeof(float),
                               cudaMemcpyDeviceToDevice, m.stream[0][0]));
    return;
  }
  // Enter only when the next GPU has finished reading this GPU's output in the previous call.
  for (int g = 0; g < k; ++g)
    for (int j = 0; j < v.slices; ++j)
      CUDA_CHECK(cudaStreamWaitEvent(m.stream[g][j], m.done[(g + 1) % k][j], 0));
  for (int s = 0; s < ring_steps(k); ++s) {
    if (s > 0)  // every wait on the previous step is queued before any GPU records this one
      for (int g = 0; g < k; ++g)
        for (int j = 0; j < v.slices; ++j)
          CUDA_CHECK(cudaStreamWaitEvent(m.stream[g][j], m.done[ring_prev(g, k)][j], 0));
    for (int g = 0; g < k; ++g) {
      CUDA_CHECK(cudaSetDevice(g));
      const RingView r = ring_view(v, g);
      for (int j = 0; j < v.slices; ++j) {
        const RingAdd a = ring_copies(r, v.n, v.slices, v.peer_reads, s, j, m.stream[g][j]);
        if (a.n > 0) {
          ring_add<<<add_blocks(r.add_grid, a.n), kAddBlock, 0, m.stream[g][j]>>>(a.mine, a.theirs,
                                                                                  a.out, a.n);
          CHECK_LAUNCH();
        }
        CUDA_CHECK(cudaEventRecord(m.done[g][j], m.stream[g][j]));
      }
    }
  }
  CUDA_CHECK(cudaSetDevice(0));
}

// nccl-allreduce: one call per GPU, grouped so one thread can issue them all.
void launch_nccl_allreduce(Machine& m, const Vectors& v) {
  const std::vector<ncclComm_t>& comm = m.comm(v.count);
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < v.count; ++g)
    NCCL_CHECK(ncclAllReduce(v.send[g].get(), v.recv[g].get(), v.n, ncclFloat, ncclSum, comm[g],
                             m.stream[g][0]));
  NCCL_CHECK(ncclGroupEnd());
}

}  // namespace

// The ring's steps, for every GPU at its place r.pos:
//   reduce-scatter, steps s = 0 .. K-2: GPU g adds the previous GPU's partial sum of chunk
//     c = g-1-s into its own (at s = 0 both come from the inputs); after K-1 steps GPU g holds
//     the full sum of chunk g+1.
//   all-gather, steps t = 0 .. K-2: GPU g copies the finished chunk g-t from the previous GPU.
// Slice j of the chunk, on `stream` (the caller orders the steps).
RingAdd ring_copies(const RingView& r, int64_t n, int slices, bool peer_reads, int s, int j,
                    cudaStream_t stream) {
  const int k = r.count;
  const bool reduce = s < k - 1;
  const Range chunk =
      split({0, n}, k, reduce ? wrap(r.pos - 1 - s, k) : wrap(r.pos - (s - (k - 1)), k));
  const Range slice = split(chunk, slices, j);
  if (slice.size() == 0) return {};
  const size_t bytes = static_cast<size_t>(slice.size()) * sizeof(float);
  CUDA_CHECK(cudaSetDevice(r.gpu));
  if (!reduce) {
    copy_from_prev(r, r.recv + slice.begin, r.prev_recv + slice.begin, bytes, stream);
    return {};
  }
  const float* theirs = (s == 0 ? r.prev_send : r.prev_recv) + slice.begin;
  if (!peer_reads) {  // a copy engine brings the slice over first
    float* local = r.staging + (slice.begin - chunk.begin);
    copy_from_prev(r, local, theirs, bytes, stream);
    theirs = local;
  }
  return {r.send + slice.begin, theirs, r.recv + slice.begin, slice.size()};
}

// One reduce-scatter step of the ring on one slice: out = mine + theirs, theirs being the
// previous GPU's partial sum, read straight from its memory (a peer pointer: NVLink loads) or
// from a local copy of it. All three 16-byte aligned; the last n % 4 floats one by one.
__global__ void __launch_bounds__(kAddBlock)
    ring_add(const float* __restrict__ mine, const float* __restrict__ theirs,
             float* __restrict__ out, int64_t n) {
  const int64_t n4 = n / 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kAddBlock;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kAddBlock + threadIdx.x;
  const float4* a4 = reinterpret_cast<const float4*>(mine);
  const float4* b4 = reinterpret_cast<const float4*>(theirs);
  float4* o4 = reinterpret_cast<float4*>(out);
  for (int64_t i = first; i < n4; i += stride) {
    const float4 a = a4[i], b = b4[i];
    o4[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  }
  if (first < n - 4 * n4) out[4 * n4 + first] = mine[4 * n4 + first] + theirs[4 * n4 + first];
}

int64_t ring_add_grid() { return sw::resident_grid(ring_add, kAddBlock); }

const std::vector<Step<const Vectors>> kAllReduceSteps = {
    {"naive-gather", launch_naive_gather, {}, "step", kSameBits},
    {"ring", launch_ring, {}, "step", kSameBits},
    {"nccl-allreduce", launch_nccl_allreduce, {}, "vendor"},
};
bool is_ring(const Step<const Vectors>& step) { return step.launch == launch_ring; }

void fill_vectors(const Vectors& v, Data d, uint64_t seed) {
  for (int g = 0; g < v.count; ++g)
    launch_fill(g, v.send[g].get(), 0, v.n, vector_seed(seed, g), d);
  sw::sync_gpus(v.count);
}

void poison_outputs(const Vectors& v) {
  for (int g = 0; g < v.count; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    sw::poison(v.recv[g].get(), static_cast<size_t>(v.n) * sizeof(float));
  }
  sw::sync_gpus(v.count);
}

// Buffers for an all-reduce of up to `capacity` floats on GPUs 0 .. k-1.
Vectors make_vectors(const Machine& m, int k, int64_t capacity) {
  Vectors v;
  v.count = k;
  v.n = capacity;
  v.peer_ok = true;  // every pair: a ring on fewer GPUs has other neighbours
  for (int g = 0; g < k; ++g)
    for (int h = 0; h < k; ++h) v.peer_ok = v.peer_ok && (g == h || m.peer[g][h]);
  v.peer_reads = v.peer_ok;
  for (int g = 0; g < k; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    v.add_grid.push_back(ring_add_grid());
    v.send.emplace_back(capacity);
    v.recv.emplace_back(capacity);
    v.staging.emplace_back(capacity);  // the ring without peer loads copies a slice here, then adds
  }
  CUDA_CHECK(cudaSetDevice(0));
  v.gathered.allocate(std::max<int64_t>(k - 1, 1) * capacity);
  return v;
}

}  // namespace ch14
