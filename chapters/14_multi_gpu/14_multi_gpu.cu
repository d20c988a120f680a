// Chapter 14: beyond one GPU. A sum sharded across GPUs, and an all-reduce, step by step to NCCL.
//
// What changed:  one process and one host thread drive K GPUs (every visible GPU, or --gpus K).
//   Part 1, problem "sharded-sum": one large float array split into K contiguous shards, one per
//                GPU. Each GPU sums its shard with chapter 06's two-pass kernel (reduce_overload),
//                then the K sums are combined:
//     shard-host-combine    each sum copied to the host and added there, in double
//     shard-nccl-allreduce  one ncclAllReduce of one float per GPU: every GPU holds the total
//                Strong scaling: a fixed total (--n, 8 GiB) on 1, 2, 4, ..., K GPUs; weak
//                scaling: a fixed shard per GPU (--shard, 2 GiB). Problem "sharded-sum-latency"
//                times the fixed costs alone: empty launches, the host combine, NCCL on a scalar.
//   Part 2, problem "all-reduce": every GPU holds a float vector (4 MiB to 1 GiB, a gradient's
//                size) and must end with the element-wise sum of all K vectors.
//     naive-gather   peer copies of every vector to GPU 0, a sum kernel there, peer copies back
//     ring           a reduce-scatter then an all-gather around the ring 0 -> 1 -> ... -> 0,
//                    K - 1 steps each on chunks of n / K: each GPU reads the previous GPU's
//                    chunk straight over NVLink (a peer pointer) and adds it into its own; a
//                    chunk can be cut in slices, on streams of their own, so steps overlap. The
//                    row runs at the best of a sweep (rows ring-sweep and ring-copy-sweep, role
//                    "sweep"): 1, 2, 4, 8 slices, with peer loads and with copy-engine copies
//     nccl-allreduce ncclAllReduce (the vendor row)
//                Problem "p2p": a 1 GiB cudaMemcpyPeerAsync between every pair of GPUs, one
//                direction and both at once: the ceiling.
// Why faster:    K GPUs bring K memories: a shard sum is bound by DRAM bandwidth, so K GPUs sum
//                K times the bytes in the same time, less the fixed costs of launching on K
//                GPUs and combining K numbers. An all-reduce is bound by the links between
//                GPUs: gathering on GPU 0 pushes all the data through GPU 0's link twice; a
//                ring keeps every link busy in both directions at once, moving 2(K-1)/K of the
//                vector per GPU whatever K is.
// Bottleneck:    Part 1: DRAM bandwidth of each GPU (chapter 06), then the launch and combine
//                latencies. Part 2: NVLink (or PCIe) bandwidth per GPU; the goal is NCCL's
//                bus bandwidth (busbw = algbw x 2(K-1)/K, as nccl-tests defines it), which
//                in turn approaches the measured peer copy.
// Timing:        the host clock around the work and a cudaDeviceSynchronize of every GPU in
//                use (CUDA events time one device); all-reduces of 64 MiB or less are timed
//                10 calls back to back, per call. All-reduce rows put busbw in the GB/s column.
// NVLink multicast (NVLS) stays off: main() sets NCCL_NVLS_ENABLE=0 before NCCL starts.
// Steps:         shard-host-combine, naive-gather, ring
// Run:           build/chapters/14_multi_gpu [--gpus K] [--n 2^31] [--shard 2^29] [--slices S]
//                [--ring-reads peer|copy] [--verify-only] [--json]
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "chapters/06_reduce_thread_overload/reduce_overload.cuh"  // chapter 06's kernel: reused, not copied
#include "common/check.h"
#include "common/cli.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/parallel.h"
#include "common/report.h"
#include "common/timing.h"
#include "common/verify.h"

#define NCCL_CHECK(expr)                                                                                     \
  do {                                                                                                       \
    const ncclResult_t sw_nccl_ = (expr);                                                                    \
    if (sw_nccl_ != ncclSuccess) {                                                                           \
      std::fprintf(stderr, "NCCL error: %s failed at %s:%d: %s\n", #expr, __FILE__, __LINE__,                \
                   ncclGetErrorString(sw_nccl_));                                                            \
      std::exit(sw::kExitFailed);                                                                            \
    }                                                                                                        \
  } while (0)

namespace {

using ch06::Finish;
using ch06::reduce_overload;

constexpr int kBlock = 256;                              // reduce_overload's threads per block
constexpr int kMaxGpus = 16;                             // --gpus range
constexpr int kMaxSlices = 16;                           // --slices range
const std::vector<int> kSliceSweep = {1, 2, 4, 8};       // ring: slices per chunk measured, one stream each
constexpr int64_t kDefaultN = int64_t{1} << 31;          // Part 1 strong scaling: 8 GiB of floats in all
constexpr int64_t kDefaultShard = int64_t{1} << 29;      // Part 1 weak scaling: 2 GiB per GPU
constexpr int64_t kLatencyN = int64_t{1} << 20;          // Part 1 at a size where fixed costs dominate
constexpr int64_t kMiB = int64_t{1} << 20;
const std::vector<int64_t> kAllReduceBytes = {4 * kMiB, 64 * kMiB, 256 * kMiB, 1024 * kMiB};
constexpr int64_t kP2pBytes = 1024 * kMiB;               // the peer copies of the ceiling
constexpr int64_t kMinSliceBytes = 16 * kMiB;            // the ring's sweep: no slice smaller than this
constexpr int64_t kBatchMaxBytes = 64 * kMiB;            // all-reduces this small: timed back to back...
constexpr int kBatchCalls = 10;                          // ...this many calls per timed run
constexpr int64_t kAlign = 64;                           // floats: chunks and slices start 256-byte aligned
constexpr int kAddBlock = 256;                           // threads per block of the all-reduce kernels
constexpr int64_t kCheckChunk = int64_t{1} << 22;        // floats read back per GPU at a time by the checks
constexpr int kRepeatRuns = 5;                           // --verify-only: runs compared bit for bit
constexpr double kWorkingBytes = 64.0 * kMiB;            // device memory kept free for NCCL and the context

// --- the data: element i of a stream, the same on the host and the GPU ---------------------

enum class Data {
  kRandom,  // chapter 01's mixed signs and magnitudes (sw::float_value): any sum is exact in double
  kExact,   // multiples of 1/16 in [-64, 64): any sum of up to 2^14 of them is exact in float too
};
const char* data_name(Data d) { return d == Data::kExact ? "exact" : "random"; }

__host__ __device__ inline float value(Data d, uint64_t seed, int64_t i) {
  if (d == Data::kExact) return static_cast<float>(static_cast<int>(sw::random_bits(seed, i) >> 53) - 1024) / 16;
  return sw::float_value(seed, static_cast<uint64_t>(i));
}

// The all-reduce's input on GPU g: its own stream of values.
uint64_t vector_seed(uint64_t seed, int g) { return seed + 1 + static_cast<uint64_t>(g); }

// x[i] = value(d, seed, first + i): a shard of one long array, or a GPU's whole vector.
__global__ void fill_values(float* x, int64_t first, int64_t n, uint64_t seed, Data d) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = value(d, seed, first + i);
}
void launch_fill(int gpu, float* x, int64_t first, int64_t n, uint64_t seed, Data d) {
  if (n == 0) return;
  CUDA_CHECK(cudaSetDevice(gpu));
  const int64_t blocks = std::min<int64_t>(sw::ceil_div(n, kAddBlock), 8 * sw::sm_count());
  fill_values<<<blocks, kAddBlock>>>(x, first, n, seed, d);
  CHECK_LAUNCH();
}

// --- the GPUs ----------------------------------------------------------------------------------

// GPUs 0 .. k-1 of this run: streams (one per ring slice; slice 0's stream serves everything
// else), the ring's events, which pairs can read each other's memory, and NCCL communicators,
// one set per number of GPUs (created when first needed).
struct Machine {
  int k = 0;
  int slices = 0;                                 // streams per GPU: the most slices any ring uses
  std::vector<std::vector<cudaStream_t>> stream;  // [gpu][slice]
  std::vector<std::vector<cudaEvent_t>> done;     // [gpu][slice]: the ring's latest finished step
  std::vector<std::vector<bool>> peer;            // peer[g][h]: GPU g reads GPU h's memory directly
  std::vector<int> sums_per_sm;                   // resident reduce_overload blocks per SM, per GPU
  std::vector<int64_t> add_grid;                  // one full wave of the all-reduce kernels, per GPU
  std::map<int, std::vector<ncclComm_t>> comms;   // by number of GPUs: one communicator per GPU

  const std::vector<ncclComm_t>& comm(int count) {
    std::vector<ncclComm_t>& c = comms[count];
    if (c.empty()) {
      c.resize(count);
      std::vector<int> devices(count);
      for (int g = 0; g < count; ++g) devices[g] = g;
      NCCL_CHECK(ncclCommInitAll(c.data(), count, devices.data()));
    }
    return c;
  }
  ~Machine() {
    for (auto& [count, c] : comms)
      for (ncclComm_t one : c) ncclCommDestroy(one);
    for (int g = 0; g < k; ++g) {
      cudaSetDevice(g);
      for (cudaStream_t s : stream[g]) cudaStreamDestroy(s);
      for (cudaEvent_t e : done[g]) cudaEventDestroy(e);
    }
    cudaSetDevice(0);
  }
};

void sync_gpus(int count) {
  for (int g = 0; g < count; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaSetDevice(0));
}

// The host clock around `batch` calls and a synchronize of every GPU in use; per call.
template <class Call>
sw::Timing time_gpus(const sw::CommonOptions& opt, int count, int batch, Call&& call) {
  sw::Timing t = sw::time_cpu(opt.warmup, opt.reps, [&] {
    for (int b = 0; b < batch; ++b) call();
    sync_gpus(count);
  });
  t.ms_median /= batch;
  t.ms_min /= batch;
  return t;
}

// --- Part 1: a sum sharded across GPUs ------------------------------------------------------------

// The floor of every launch: a kernel that does nothing.
__global__ void empty_kernel() {}
void launch_empty(int gpu, cudaStream_t stream) {
  CUDA_CHECK(cudaSetDevice(gpu));
  empty_kernel<<<1, 1, 0, stream>>>();
  CHECK_LAUNCH();
}

// One float array in `count` contiguous shards: GPU g holds elements [first[g], first[g] + size[g]).
// Buffers are allocated once, GPU g's for the largest shard it ever gets (capacity[g] floats).
struct Shards {
  Shards(const std::vector<int64_t>& capacity, const std::vector<int>& sums_per_sm);
  int count = 0;
  std::vector<int64_t> first, size;
  std::vector<sw::DeviceBuffer<float>> x, partials, sum, total;  // per GPU: shard, block sums, its sum, the total
  sw::PinnedBuffer<float> host_sums{kMaxGpus};                   // the GPUs' sums, copied back
  double host_total = NAN;                                       // shard-host-combine's result

  void split(int gpus, int64_t n) {  // strong scaling: n in all
    count = gpus;
    first.assign(count, 0);
    size.assign(count, 0);
    for (int g = 0; g < count; ++g) {
      first[g] = n * g / count;
      size[g] = n * (g + 1) / count - first[g];
    }
  }
  void repeat(int gpus, int64_t shard) {  // weak scaling: `shard` on each GPU
    count = gpus;
    first.assign(count, 0);
    size.assign(count, shard);
    for (int g = 0; g < count; ++g) first[g] = g * shard;
  }
  int64_t n() const { return first[count - 1] + size[count - 1]; }
  void fill(uint64_t seed) const {
    for (int g = 0; g < count; ++g) launch_fill(g, x[g].get(), first[g], size[g], seed, Data::kRandom);
    sync_gpus(count);
  }
  void poison() {
    for (int g = 0; g < count; ++g) {
      CUDA_CHECK(cudaSetDevice(g));
      sw::poison(partials[g].get(), partials[g].bytes());
      sw::poison(sum[g].get(), sum[g].bytes());
      sw::poison(total[g].get(), total[g].bytes());
      host_sums[g] = NAN;
    }
    host_total = NAN;
    sync_gpus(count);
  }
};

// Blocks of reduce_overload for n floats on GPU g: chapter 06's grid (one full wave at most).
int64_t shard_grid(const Machine& m, int g, int64_t n) {
  CUDA_CHECK(cudaSetDevice(g));
  return ch06::grid_for(n, kBlock, m.sums_per_sm[g], sw::sm_count());
}

// GPU g's sum of its shard into s.sum[g]: chapter 06's two-pass, the block sums then one block.
void launch_shard_sum(const Machine& m, const Shards& s, int g) {
  const int64_t blocks = shard_grid(m, g, s.size[g]);
  cudaStream_t stream = m.stream[g][0];
  reduce_overload<kBlock, Finish::kPartials><<<blocks, kBlock, 0, stream>>>(s.x[g].get(), s.size[g],
                                                                           s.partials[g].get());
  CHECK_LAUNCH();
  reduce_overload<kBlock, Finish::kPartials><<<1, kBlock, 0, stream>>>(s.partials[g].get(), blocks, s.sum[g].get());
  CHECK_LAUNCH();
}

// shard-host-combine: every GPU sums its shard and copies its sum to the host, which adds them.
void launch_host_combine(Machine& m, Shards& s) {
  for (int g = 0; g < s.count; ++g) {
    launch_shard_sum(m, s, g);
    CUDA_CHECK(cudaMemcpyAsync(&s.host_sums[g], s.sum[g].get(), sizeof(float), cudaMemcpyDeviceToHost,
                               m.stream[g][0]));
  }
  double total = 0;
  for (int g = 0; g < s.count; ++g) {
    CUDA_CHECK(cudaStreamSynchronize(m.stream[g][0]));
    total += s.host_sums[g];
  }
  s.host_total = total;
}

// shard-nccl-allreduce: the same sums, then one all-reduce of one float per GPU.
void launch_nccl_combine(Machine& m, Shards& s) {
  for (int g = 0; g < s.count; ++g) launch_shard_sum(m, s, g);
  const std::vector<ncclComm_t>& comm = m.comm(s.count);
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < s.count; ++g)
    NCCL_CHECK(ncclAllReduce(s.sum[g].get(), s.total[g].get(), 1, ncclFloat, ncclSum, comm[g], m.stream[g][0]));
  NCCL_CHECK(ncclGroupEnd());
}

struct Combine {
  const char* name;
  void (*launch)(Machine&, Shards&);
  const char* role;
  bool host;  // the result is s.host_total (else every GPU's s.total)
};
const Combine kCombines[] = {
    {"shard-host-combine", launch_host_combine, "step", true},
    {"shard-nccl-allreduce", launch_nccl_combine, "vendor", false},
};

// The results of the last run: one on the host, or one per GPU.
std::vector<double> shard_results(const Combine& c, const Shards& s) {
  if (c.host) return {s.host_total};
  std::vector<double> out;
  for (int g = 0; g < s.count; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    out.push_back(sw::read(s.total[g].get()));
  }
  CUDA_CHECK(cudaSetDevice(0));
  return out;
}

// The exact sum and sum of |x| of elements [first, first + n): chunks in double on all cores,
// then the chunk sums in order.
struct Ref {
  double sum = 0, abs_sum = 0;
};
Ref reference(uint64_t seed, int64_t first, int64_t n) {
  constexpr int64_t kChunk = int64_t{1} << 16;
  const int64_t chunks = sw::ceil_div(n, kChunk);
  std::vector<Ref> part(chunks);
  sw::parallel_for(chunks, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c)
      for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
        const double v = value(Data::kRandom, seed, first + i);
        part[c].sum += v;
        part[c].abs_sum += std::fabs(v);
      }
  }, /*grain=*/1);
  Ref r;
  for (const Ref& p : part) r.sum += p.sum, r.abs_sum += p.abs_sum;
  return r;
}

// Additions an element passes through in one launch of reduce_overload over `count` floats with
// `threads` threads, as chapter 06 counts them: 2 in its float4, one per float4 of its thread, 1
// for the tail, 10 for the shuffle trees. The shard sum has two launches; the combine adds `count`.
int64_t launch_depth(int64_t count, int64_t threads) { return sw::ceil_div(sw::ceil_div(count, 4), threads) + 13; }
int64_t sum_depth(const Machine& m, const Shards& s) {
  int64_t worst = 0;
  for (int g = 0; g < s.count; ++g) {
    const int64_t blocks = shard_grid(m, g, s.size[g]);
    worst = std::max(worst, launch_depth(s.size[g], blocks * kBlock) + launch_depth(blocks, kBlock));
  }
  return worst + s.count;
}

// Every result of one run against the reference; "" or what went wrong.
std::string check_shard_results(const std::vector<double>& got, const Ref& ref, int64_t depth, int64_t n) {
  for (size_t i = 0; i < got.size(); ++i) {
    const sw::SumCheck c = sw::check_sum(got[i], ref.sum, ref.abs_sum, depth, n);
    if (!c.ok) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "result %zu: got %.9g, want %.9g: error %.3g > bound %.3g", i, got[i], ref.sum,
                    c.abs_error, c.bound);
      return buf;
    }
  }
  return "";
}

// --- Part 2: the all-reduce ---------------------------------------------------------------------

// Every GPU's input and output vector (n floats of the capacity), GPU 0's gathered copies of the
// others' vectors (naive-gather), and staging per GPU where the ring copies before it adds.
struct Vectors {
  int count = 0;
  int64_t n = 0;
  int slices = 1;            // ring: slices per chunk
  bool peer_ok = false;      // every GPU can read every other GPU's memory
  bool peer_reads = false;   // ring: read the neighbour's memory directly (else copy it to staging first)
  std::vector<sw::DeviceBuffer<float>> send, recv, staging;
  sw::DeviceBuffer<float> gathered;
};

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

int ring_prev(int g, int count) { return (g + count - 1) % count; }
int wrap(int c, int count) { return ((c % count) + count) % count; }

// The grid for n floats: one block per kAddBlock float4s, one full wave at most.
int64_t add_blocks(const Machine& m, int g, int64_t n) {
  return std::clamp<int64_t>(sw::ceil_div(sw::ceil_div(n, 4), kAddBlock), 1, m.add_grid[g]);
}

// naive-gather's sum on GPU 0: out = ((v[0] + v[1]) + v[2]) + ..., in a fixed order.
struct Inputs {
  const float* v[kMaxGpus];
};
__global__ void __launch_bounds__(kAddBlock) sum_gathered(Inputs in, int count, float* __restrict__ out, int64_t n) {
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
  sum_gathered<<<add_blocks(m, 0, v.n), kAddBlock, 0, stream>>>(in, v.count, v.recv[0].get(), v.n);
  CHECK_LAUNCH();
  for (int g = 1; g < v.count; ++g)
    CUDA_CHECK(cudaMemcpyPeerAsync(v.recv[g].get(), g, v.recv[0].get(), 0, bytes, stream));
}

// One reduce-scatter step of the ring on one slice: out = mine + theirs, theirs being the
// previous GPU's partial sum, read straight from its memory (a peer pointer: NVLink loads) or
// from a local copy of it. All three 16-byte aligned; the last n % 4 floats one by one.
__global__ void __launch_bounds__(kAddBlock) ring_add(const float* __restrict__ mine, const float* __restrict__ theirs,
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

// ring: around 0 -> 1 -> ... -> K-1 -> 0, every GPU pulling from the GPU before it.
//   reduce-scatter, steps s = 0 .. K-2: GPU g adds the previous GPU's partial sum of chunk
//     c = g-1-s into its own (at s = 0 both come from the inputs); after K-1 steps GPU g holds
//     the full sum of chunk g+1.
//   all-gather, steps t = 0 .. K-2: GPU g copies the finished chunk g-t from the previous GPU.
// Each chunk is cut in v.slices slices; slice j runs on stream j of every GPU, and each step of
// slice j waits (an event) only for the previous GPU's last step of slice j, so slices overlap.
void launch_ring(Machine& m, const Vectors& v) {
  const int k = v.count;
  if (k == 1) {  // no neighbour: the sum is the input
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMemcpyAsync(v.recv[0].get(), v.send[0].get(), v.n * sizeof(float), cudaMemcpyDeviceToDevice,
                               m.stream[0][0]));
    return;
  }
  // Enter only when the next GPU has finished reading this GPU's output in the previous call.
  for (int g = 0; g < k; ++g)
    for (int j = 0; j < v.slices; ++j) CUDA_CHECK(cudaStreamWaitEvent(m.stream[g][j], m.done[(g + 1) % k][j], 0));
  for (int s = 0; s < 2 * (k - 1); ++s) {
    const bool reduce = s < k - 1;
    if (s > 0)  // every wait on the previous step is queued before any GPU records this one
      for (int g = 0; g < k; ++g)
        for (int j = 0; j < v.slices; ++j)
          CUDA_CHECK(cudaStreamWaitEvent(m.stream[g][j], m.done[ring_prev(g, k)][j], 0));
    for (int g = 0; g < k; ++g) {
      CUDA_CHECK(cudaSetDevice(g));
      const int prev = ring_prev(g, k);
      const Range chunk = split({0, v.n}, k, reduce ? wrap(g - 1 - s, k) : wrap(g - (s - (k - 1)), k));
      for (int j = 0; j < v.slices; ++j) {
        cudaStream_t stream = m.stream[g][j];
        const Range r = split(chunk, v.slices, j);
        const size_t bytes = static_cast<size_t>(r.size()) * sizeof(float);
        if (r.size() > 0 && reduce) {
          const float* theirs = (s == 0 ? v.send : v.recv)[prev].get() + r.begin;
          if (!v.peer_reads) {  // a copy engine brings the slice over first
            float* local = v.staging[g].get() + (r.begin - chunk.begin);
            CUDA_CHECK(cudaMemcpyPeerAsync(local, g, theirs, prev, bytes, stream));
            theirs = local;
          }
          ring_add<<<add_blocks(m, g, r.size()), kAddBlock, 0, stream>>>(v.send[g].get() + r.begin, theirs,
                                                                         v.recv[g].get() + r.begin, r.size());
          CHECK_LAUNCH();
        } else if (r.size() > 0) {
          CUDA_CHECK(cudaMemcpyPeerAsync(v.recv[g].get() + r.begin, g, v.recv[prev].get() + r.begin, prev, bytes,
                                         stream));
        }
        CUDA_CHECK(cudaEventRecord(m.done[g][j], stream));
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
    NCCL_CHECK(ncclAllReduce(v.send[g].get(), v.recv[g].get(), v.n, ncclFloat, ncclSum, comm[g], m.stream[g][0]));
  NCCL_CHECK(ncclGroupEnd());
}

// The version table of Part 2.
struct AllReduce {
  const char* name;
  void (*launch)(Machine&, const Vectors&);
  const char* role;
  bool same_bits;  // a fixed order of additions: every run gives the same bits (checked)
};
const AllReduce kAllReduces[] = {
    {"naive-gather", launch_naive_gather, "step", true},
    {"ring", launch_ring, "step", true},
    {"nccl-allreduce", launch_nccl_allreduce, "vendor", false},
};

void fill_vectors(const Vectors& v, Data d, uint64_t seed) {
  for (int g = 0; g < v.count; ++g) launch_fill(g, v.send[g].get(), 0, v.n, vector_seed(seed, g), d);
  sync_gpus(v.count);
}

void poison_outputs(const Vectors& v) {
  for (int g = 0; g < v.count; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    sw::poison(v.recv[g].get(), static_cast<size_t>(v.n) * sizeof(float));
  }
  sync_gpus(v.count);
}

// Every GPU's output against the CPU reference, element by element: the exact sum of the K inputs
// (in double). Exact data must match it exactly; random data within gamma_{K-1} * sum_g |x_g[i]|,
// the bound of any order of K - 1 float additions. `hash` is a 64-bit hash of every output's bits,
// for the bitwise comparison of two runs.
struct VectorCheck {
  int64_t wrong = 0;
  uint64_t hash = 0;
  std::string first;  // the first wrong element, described
};
VectorCheck check_outputs(const Vectors& v, Data d, uint64_t seed) {
  const int k = v.count;
  const double gamma = sw::float_gamma(k - 1);
  const int64_t chunk = std::min(v.n, kCheckChunk);
  sw::PinnedBuffer<float> got(k * chunk);  // GPU g's piece at g * chunk
  std::atomic<int64_t> wrong{0}, first_wrong{INT64_MAX};
  std::atomic<uint64_t> hash{0};
  for (int64_t begin = 0; begin < v.n; begin += kCheckChunk) {
    const int64_t count = std::min(kCheckChunk, v.n - begin);
    for (int g = 0; g < k; ++g) {
      CUDA_CHECK(cudaSetDevice(g));
      CUDA_CHECK(cudaMemcpy(got.get() + g * chunk, v.recv[g].get() + begin, count * sizeof(float),
                            cudaMemcpyDeviceToHost));
    }
    sw::parallel_for(count, [&](int64_t lo, int64_t hi) {
      int64_t bad = 0, first_bad = INT64_MAX;
      uint64_t h = 0;
      for (int64_t i = lo; i < hi; ++i) {
        double sum = 0, abs_sum = 0;
        for (int g = 0; g < k; ++g) {
          const double x = value(d, vector_seed(seed, g), begin + i);
          sum += x;
          abs_sum += std::fabs(x);
        }
        const double bound = d == Data::kExact ? 0.0 : gamma * abs_sum;
        for (int g = 0; g < k; ++g) {
          const float y = got[g * chunk + i];
          if (!(std::fabs(y - sum) <= bound)) {  // NaN (a poisoned element) never passes
            ++bad;
            first_bad = std::min(first_bad, (begin + i) * kMaxGpus + g);
          }
          uint32_t bits;
          std::memcpy(&bits, &y, sizeof bits);
          h += sw::mix64((static_cast<uint64_t>(begin + i) * kMaxGpus + g) << 32 ^ bits);
        }
      }
      wrong += bad;
      hash += h;
      for (int64_t f = first_wrong.load(); first_bad < f && !first_wrong.compare_exchange_weak(f, first_bad);) {
      }
    });
  }
  CUDA_CHECK(cudaSetDevice(0));
  VectorCheck c{wrong.load(), hash.load(), ""};
  if (c.wrong > 0) {
    const int64_t i = first_wrong / kMaxGpus;
    const int g = static_cast<int>(first_wrong % kMaxGpus);
    double sum = 0;
    for (int h = 0; h < k; ++h) sum += value(d, vector_seed(seed, h), i);
    CUDA_CHECK(cudaSetDevice(g));
    const float y = sw::read(v.recv[g].get() + i);
    CUDA_CHECK(cudaSetDevice(0));
    char buf[200];
    std::snprintf(buf, sizeof buf, "%lld wrong elements; first: GPU %d [%lld] = %.9g, want %.9g",
                  static_cast<long long>(c.wrong), g, static_cast<long long>(i), y, sum);
    c.first = buf;
  }
  return c;
}

// One poisoned run of an all-reduce, checked.
VectorCheck run_checked(Machine& m, const Vectors& v, const AllReduce& a, Data d, uint64_t seed) {
  poison_outputs(v);
  a.launch(m, v);
  sync_gpus(v.count);
  return check_outputs(v, d, seed);
}


// --- setup ------------------------------------------------------------------------------------

// Streams (up to `slices` per GPU), events and peer access on GPUs 0 .. k-1.
void start_machine(Machine& m, int k, int slices) {
  m.k = k;
  m.slices = std::max(slices, kSliceSweep.back());
  m.stream.assign(k, {});
  m.done.assign(k, {});
  m.peer.assign(k, std::vector<bool>(k, false));
  for (int g = 0; g < k; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    for (int j = 0; j < m.slices; ++j) {
      cudaStream_t s;
      cudaEvent_t e;
      CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      m.stream[g].push_back(s);
      m.done[g].push_back(e);
    }
    for (int h = 0; h < k; ++h) {
      int can = 0;
      if (h != g) CUDA_CHECK(cudaDeviceCanAccessPeer(&can, g, h));
      if (!can) continue;
      const cudaError_t err = cudaDeviceEnablePeerAccess(h, 0);
      if (err == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();  // clear it: already on is what we want
      else
        CUDA_CHECK(err);
      m.peer[g][h] = true;
    }
    m.sums_per_sm.push_back(sw::resident_blocks_per_sm(reduce_overload<kBlock, Finish::kPartials>, kBlock));
    m.add_grid.push_back(sw::resident_grid(ring_add, kAddBlock));
  }
  CUDA_CHECK(cudaSetDevice(0));
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
    v.send.emplace_back(capacity);
    v.recv.emplace_back(capacity);
    v.staging.emplace_back(capacity);  // the ring without peer loads copies a slice here, then adds
  }
  CUDA_CHECK(cudaSetDevice(0));
  v.gathered.allocate(std::max<int64_t>(k - 1, 1) * capacity);
  return v;
}

Shards::Shards(const std::vector<int64_t>& capacity, const std::vector<int>& sums_per_sm) {
  for (size_t g = 0; g < capacity.size(); ++g) {
    CUDA_CHECK(cudaSetDevice(static_cast<int>(g)));
    x.emplace_back(std::max<int64_t>(capacity[g], 1));
    partials.emplace_back(int64_t{sums_per_sm[g]} * sw::sm_count());  // one full wave of block sums
    sum.emplace_back(1);
    total.emplace_back(1);
  }
  CUDA_CHECK(cudaSetDevice(0));
}

// 1, 2, 4, ... up to k, and k itself.
std::vector<int> gpu_counts(int k) {
  std::vector<int> out;
  for (int c = 1; c < k; c *= 2) out.push_back(c);
  out.push_back(k);
  return out;
}

std::string gpus_text(int count) { return "gpus=" + std::to_string(count); }

// --- --verify-only ------------------------------------------------------------------------------

// Part 1 on 1 .. K GPUs at awkward sizes (shards of 0 floats included), both combines.
void verify_sharded_sum(Machine& m, sw::Report& report, uint64_t seed) {
  const std::vector<int64_t> sizes = {1, 7, 1000, 1000003, (int64_t{1} << 24) + 1};
  Shards s(std::vector<int64_t>(m.k, sizes.back()), m.sums_per_sm);
  for (int count = 1; count <= m.k; ++count)
    for (int64_t n : sizes) {
      s.split(count, n);
      s.fill(seed);
      const Ref ref = reference(seed, 0, n);
      for (const Combine& c : kCombines) {
        s.poison();
        c.launch(m, s);
        sync_gpus(count);
        const std::string wrong = check_shard_results(shard_results(c, s), ref, sum_depth(m, s), n);
        report.check(wrong.empty(), std::string(c.name) + " n=" + std::to_string(n) + " " + gpus_text(count), wrong);
      }
    }
}

// Part 2 on 1 .. K GPUs: sizes not divisible by K nor by a slice, exact and random data, the ring
// with 1, 3 and 8 slices per chunk, with peer loads (where every pair has peer access) and with
// copies; then naive-gather and ring bit for bit over repeated runs.
void verify_all_reduce(Machine& m, sw::Report& report, uint64_t seed) {
  const std::vector<int64_t> sizes = {1, 7, 1000, 1000003, (int64_t{1} << 22) + 5};
  Vectors v = make_vectors(m, m.k, sizes.back());
  std::vector<bool> read_modes = {false};
  if (v.peer_ok) read_modes.push_back(true);
  for (int count = 1; count <= m.k; ++count) {
    v.count = count;
    for (int64_t n : sizes)
      for (Data d : {Data::kExact, Data::kRandom}) {
        v.n = n;
        fill_vectors(v, d, seed);
        for (const AllReduce& a : kAllReduces) {
          const bool ring = a.launch == launch_ring;
          for (bool peer : ring ? read_modes : std::vector<bool>{v.peer_ok})
            for (int slices : ring ? std::vector<int>{1, 3, m.slices} : std::vector<int>{1}) {
              v.peer_reads = peer;
              v.slices = slices;
              const VectorCheck c = run_checked(m, v, a, d, seed);
              std::string what = std::string(a.name) + " n=" + std::to_string(n) + " " + gpus_text(count) + " " +
                                 data_name(d);
              if (ring) what += std::string(peer ? " peer-loads" : " copies") + " slices=" + std::to_string(slices);
              report.check(c.wrong == 0, what, c.first);
            }
        }
      }
    v.n = 1000003;
    v.slices = m.slices;
    v.peer_reads = v.peer_ok;
    fill_vectors(v, Data::kRandom, seed);
    for (const AllReduce& a : kAllReduces) {
      if (!a.same_bits) continue;
      const VectorCheck first = run_checked(m, v, a, Data::kRandom, seed);
      int differing = 0;
      for (int r = 1; r < kRepeatRuns; ++r) differing += run_checked(m, v, a, Data::kRandom, seed).hash != first.hash;
      report.check(first.wrong == 0 && differing == 0,
                   std::string(a.name) + " bitwise identical over " + std::to_string(kRepeatRuns) +
                       " runs n=1000003 " + gpus_text(count),
                   first.wrong ? first.first : differing ? std::to_string(differing) + " runs gave other bits" : "");
    }
  }
}

// --- the default run ----------------------------------------------------------------------------

// A poisoned run, checked; the timed runs; the last one checked again (bit for bit against the
// first for the host combine, whose order is fixed).
sw::Result measure_sum(Machine& m, Shards& s, const Combine& c, const Ref& ref, const sw::CommonOptions& opt) {
  const int64_t n = s.n(), depth = sum_depth(m, s);
  s.poison();
  c.launch(m, s);
  sync_gpus(s.count);
  const std::vector<double> first = shard_results(c, s);
  const sw::Timing t = time_gpus(opt, s.count, 1, [&] { c.launch(m, s); });
  const std::vector<double> last = shard_results(c, s);
  const bool ok = check_shard_results(first, ref, depth, n).empty() && check_shard_results(last, ref, depth, n).empty() &&
                  (!c.host || sw::same_bits(first[0], last[0]));
  sw::Result r{c.name, n, static_cast<double>(n) * sizeof(float), t, ok, c.role};
  r.extra["gpus"] = s.count;
  r.extra["shard"] = static_cast<double>(s.size[0]);
  r.extra["rel_error"] = sw::check_sum(last[0], ref.sum, ref.abs_sum, depth, n).rel_error;
  return r;
}

// "strong: shard-host-combine 1 GPU 1.95 ms; 2 GPUs 0.99 ms (1.97x); ..."
void scaling_note(sw::Report& report, const std::string& what, const std::vector<sw::Result>& rows) {
  std::string line = what + ":";
  for (const sw::Result& r : rows) {
    char part[96];
    const double speedup = rows.front().timing.ms_median / r.timing.ms_median;
    const double scaled = what.rfind("weak", 0) == 0 ? speedup * r.extra.at("gpus") : speedup;  // weak: work grows with K
    std::snprintf(part, sizeof part, "%s %d GPU(s) %.3f ms (%.2fx)", &r == &rows.front() ? "" : ";",
                  static_cast<int>(r.extra.at("gpus")), r.timing.ms_median, scaled);
    line += part;
  }
  report.note(line);
}

// Part 1: strong scaling (n in all), weak scaling (shard per GPU), then the fixed costs.
void bench_sharded_sum(Machine& m, sw::Report& report, const sw::CommonOptions& opt, int64_t n, int64_t shard) {
  const std::vector<int> counts = gpu_counts(m.k);
  std::vector<int64_t> capacity(m.k, shard);
  for (int count : counts)
    for (int g = 0; g < count; ++g) capacity[g] = std::max(capacity[g], n * (g + 1) / count - n * g / count);
  Shards s(capacity, m.sums_per_sm);
  const uint64_t seed = static_cast<uint64_t>(opt.seed);

  const Ref strong_ref = reference(seed, 0, n);
  std::map<std::string, std::vector<sw::Result>> strong, weak;
  for (int count : counts) {
    s.split(count, n);
    s.fill(seed);
    for (const Combine& c : kCombines) {
      sw::Result r = measure_sum(m, s, c, strong_ref, opt);
      r.note = "strong " + gpus_text(count);
      report.add(r);
      strong[c.name].push_back(r);
    }
  }
  std::vector<Ref> shard_refs;  // shard g of the weak-scaling array, for the prefix of each count
  for (int g = 0; g < m.k; ++g) shard_refs.push_back(reference(seed, g * shard, shard));
  for (int count : counts) {
    s.repeat(count, shard);
    s.fill(seed);
    Ref ref;
    for (int g = 0; g < count; ++g) ref.sum += shard_refs[g].sum, ref.abs_sum += shard_refs[g].abs_sum;
    for (const Combine& c : kCombines) {
      sw::Result r = measure_sum(m, s, c, ref, opt);
      r.note = "weak " + gpus_text(count);
      report.add(r);
      weak[c.name].push_back(r);
    }
  }
  for (const Combine& c : kCombines) {
    scaling_note(report, std::string("strong scaling, speedup over 1 GPU: ") + c.name, strong[c.name]);
    scaling_note(report, std::string("weak scaling, work per time over 1 GPU: ") + c.name, weak[c.name]);
  }

  // The fixed costs, each alone: a launch on every GPU, the host combine of one float per GPU,
  // NCCL's all-reduce of one float per GPU, and the whole sharded sum at a size where they dominate.
  for (int count : counts) {
    s.split(count, kLatencyN);
    s.fill(seed);
    const Ref ref = reference(seed, 0, kLatencyN);
    std::vector<sw::Result> rows;
    rows.push_back({"empty-launch", count, 0, time_gpus(opt, count, 1, [&] {
                      for (int g = 0; g < count; ++g) launch_empty(g, m.stream[g][0]);
                    }), true, "lesson"});
    launch_nccl_combine(m, s);  // every GPU's sum in place for the two combines alone
    sync_gpus(count);
    rows.push_back({"host-combine-scalar", count, 0, time_gpus(opt, count, 1, [&] {
                      for (int g = 0; g < count; ++g)
                        CUDA_CHECK(cudaMemcpyAsync(&s.host_sums[g], s.sum[g].get(), sizeof(float),
                                                   cudaMemcpyDeviceToHost, m.stream[g][0]));
                      double total = 0;
                      for (int g = 0; g < count; ++g) {
                        CUDA_CHECK(cudaStreamSynchronize(m.stream[g][0]));
                        total += s.host_sums[g];
                      }
                      s.host_total = total;
                    }), true, "lesson"});
    const int64_t depth = sum_depth(m, s);
    rows.back().ok = check_shard_results(shard_results(kCombines[0], s), ref, depth, kLatencyN).empty();
    const std::vector<ncclComm_t>& comm = m.comm(count);
    rows.push_back({"nccl-allreduce-scalar", count, 0, time_gpus(opt, count, 1, [&] {
                      NCCL_CHECK(ncclGroupStart());
                      for (int g = 0; g < count; ++g)
                        NCCL_CHECK(ncclAllReduce(s.sum[g].get(), s.total[g].get(), 1, ncclFloat, ncclSum, comm[g],
                                                 m.stream[g][0]));
                      NCCL_CHECK(ncclGroupEnd());
                    }), true, "lesson"});
    rows.back().ok = check_shard_results(shard_results(kCombines[1], s), ref, depth, kLatencyN).empty();
    for (const Combine& c : kCombines) {
      sw::Result r = measure_sum(m, s, c, ref, opt);
      r.role = "lesson";
      rows.push_back(r);
    }
    std::string line = "fixed costs, " + gpus_text(count) + ":";
    for (sw::Result& r : rows) {
      r.problem = "sharded-sum-latency";
      r.note = gpus_text(count);
      r.extra["gpus"] = count;
      report.add(r);
      char part[96];
      std::snprintf(part, sizeof part, "%s %s %.1f us", &r == &rows.front() ? "" : ",", r.variant.c_str(),
                    1e3 * r.timing.ms_median);
      line += part;
    }
    report.note(line + " (n=2^20 for the sums)");
  }
}

// Problem "p2p": a 1 GiB peer copy between every ordered pair, one way; then both ways at once.
// Returns the one-way GB/s of every pair, [src][dst].
std::vector<std::vector<double>> bench_p2p(Machine& m, const Vectors& v, sw::Report& report,
                                           const sw::CommonOptions& opt) {
  const int64_t n = kP2pBytes / sizeof(float);
  const size_t bytes = kP2pBytes;
  std::vector<std::vector<double>> one_way(m.k, std::vector<double>(m.k, 0.0));
  for (int src = 0; src < m.k; ++src)
    for (int dst = 0; dst < m.k; ++dst) {
      if (src == dst) continue;
      sw::Result r{"peer-copy", n, static_cast<double>(bytes), {}, true, "ceiling"};
      r.problem = "p2p";
      r.note = "one-way";
      r.extra = {{"src", src}, {"dst", dst}, {"direction", 1}};
      r.timing = time_gpus(opt, m.k, 1, [&] {
        CUDA_CHECK(cudaSetDevice(src));
        CUDA_CHECK(cudaMemcpyPeerAsync(v.recv[dst].get(), dst, v.send[src].get(), src, bytes, m.stream[src][0]));
      });
      report.add(r);
      one_way[src][dst] = sw::gbps(r.bytes, r.timing.ms_median);
    }
  for (int a = 0; a < m.k; ++a)
    for (int b = a + 1; b < m.k; ++b) {
      sw::Result r{"peer-copy", n, 2.0 * bytes, {}, true, "ceiling"};
      r.problem = "p2p";
      r.note = "both-ways";
      r.extra = {{"src", a}, {"dst", b}, {"direction", 2}};
      r.timing = time_gpus(opt, m.k, 1, [&] {
        CUDA_CHECK(cudaSetDevice(a));
        CUDA_CHECK(cudaMemcpyPeerAsync(v.recv[b].get(), b, v.send[a].get(), a, bytes, m.stream[a][0]));
        CUDA_CHECK(cudaSetDevice(b));
        CUDA_CHECK(cudaMemcpyPeerAsync(v.recv[a].get(), a, v.send[b].get(), b, bytes, m.stream[b][0]));
      });
      report.add(r);
    }
  CUDA_CHECK(cudaSetDevice(0));
  return one_way;
}

// The ring's ceiling on GPUs 0 .. count-1: its slowest link, g-1 -> g.
double ring_ceiling(const std::vector<std::vector<double>>& one_way, int count) {
  double slowest = INFINITY;
  for (int g = 0; g < count; ++g) slowest = std::min(slowest, one_way[ring_prev(g, count)][g]);
  return slowest;
}

// One all-reduce measured: a poisoned run, checked; `batch` calls back to back per timed run; the
// last result checked again (bit for bit against the first for a fixed order) unless `once`.
sw::Result measure_all_reduce(Machine& m, const Vectors& v, const AllReduce& a, const sw::CommonOptions& opt,
                              uint64_t seed, int batch, bool once, sw::Report& report) {
  const VectorCheck first = run_checked(m, v, a, Data::kRandom, seed);
  const sw::Timing t = time_gpus(opt, v.count, batch, [&] { a.launch(m, v); });
  const VectorCheck last = once ? first : check_outputs(v, Data::kRandom, seed);
  const bool ok = first.wrong == 0 && last.wrong == 0 && (!a.same_bits || first.hash == last.hash);
  if (!ok) report.note(std::string(a.name) + " " + gpus_text(v.count) + ": " + (first.wrong ? first.first : last.first));
  // The GB/s column is the bus bandwidth: bytes = size x 2(K-1)/K (0 on one GPU: no bus).
  const double size = static_cast<double>(v.n) * sizeof(float), bus_factor = 2.0 * (v.count - 1) / v.count;
  sw::Result r{a.name, v.n, size * bus_factor, t, ok, a.role};
  r.problem = "all-reduce";
  r.note = gpus_text(v.count);
  r.extra = {{"gpus", v.count}, {"bytes", size}, {"calls", batch}, {"algbw_gbps", sw::gbps(size, t.ms_median)},
             {"busbw_gbps", sw::gbps(size * bus_factor, t.ms_median)}};
  if (a.launch == launch_ring) {
    r.extra["slices"] = v.slices;
    r.extra["peer_reads"] = v.peer_reads;
  }
  return r;
}

// The ring's sweep at this size: 1, 2, 4, 8 slices (none under kMinSliceBytes), with peer loads
// (rows ring-sweep, where every pair has peer access) and with copies (ring-copy-sweep). Returns
// the best slice count of the read mode the ring row uses.
int sweep_ring(Machine& m, Vectors& v, const sw::CommonOptions& opt, uint64_t seed, int batch, bool peer_row,
               sw::Report& report) {
  const AllReduce* ring = nullptr;
  for (const AllReduce& a : kAllReduces)
    if (a.launch == launch_ring) ring = &a;
  int best = 1;
  double best_gbps = -1;
  for (bool peer : {true, false}) {
    if (peer && !v.peer_ok) continue;
    v.peer_reads = peer;
    for (int slices : kSliceSweep) {
      const int64_t slice_bytes = v.n * static_cast<int64_t>(sizeof(float)) / (v.count * int64_t{slices});
      if (slices > 1 && slice_bytes < kMinSliceBytes) continue;
      v.slices = slices;
      sw::Result r = measure_all_reduce(m, v, *ring, opt, seed, batch, /*once=*/true, report);
      r.variant = peer ? "ring-sweep" : "ring-copy-sweep";
      r.role = "sweep";
      report.add(r);
      const double gbps = sw::gbps(r.bytes, r.timing.ms_median);
      if (peer == peer_row && gbps > best_gbps) {
        best_gbps = gbps;
        best = slices;
      }
    }
  }
  return best;
}

// Part 2: the peer copies, then every all-reduce at every size on 1, 2, 4, ..., K GPUs; the ring
// at --slices, or at the best point of its sweep.
void bench_all_reduce(Machine& m, sw::Report& report, const sw::CommonOptions& opt, bool force_copy, int slices) {
  const uint64_t seed = static_cast<uint64_t>(opt.seed);
  Vectors v = make_vectors(m, m.k, kAllReduceBytes.back() / static_cast<int64_t>(sizeof(float)));
  const bool peer_row = v.peer_ok && !force_copy;  // the ring row's read mode
  const std::vector<std::vector<double>> one_way = m.k > 1 ? bench_p2p(m, v, report, opt)
                                                            : std::vector<std::vector<double>>{};
  for (int count : gpu_counts(m.k)) {
    v.count = count;
    std::map<std::string, double> busbw;  // at the largest size
    for (int64_t size : kAllReduceBytes) {
      v.n = size / static_cast<int64_t>(sizeof(float));
      fill_vectors(v, Data::kRandom, seed);
      const int batch = size <= kBatchMaxBytes ? kBatchCalls : 1;
      const int ring_slices = slices ? slices : count > 1 ? sweep_ring(m, v, opt, seed, batch, peer_row, report) : 1;
      for (const AllReduce& a : kAllReduces) {
        v.peer_reads = peer_row;
        v.slices = ring_slices;
        const sw::Result r = measure_all_reduce(m, v, a, opt, seed, batch, /*once=*/false, report);
        report.add(r);
        busbw[a.name] = r.extra.at("busbw_gbps");
      }
    }
    if (count == 1) {
      report.note("gpus=1: an all-reduce of one vector is a copy; no bus, so busbw is 0 (n/a)");
      continue;
    }
    const double ceiling = ring_ceiling(one_way, count);
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s at 1 GiB: busbw naive-gather %.0f, ring %.0f, nccl-allreduce %.0f GB/s; ring/nccl %.2f; "
                  "nccl / the ring's slowest one-way peer copy (%.0f GB/s) %.2f",
                  gpus_text(count).c_str(), busbw["naive-gather"], busbw["ring"], busbw["nccl-allreduce"],
                  busbw["ring"] / busbw["nccl-allreduce"], ceiling, busbw["nccl-allreduce"] / ceiling);
    report.note(line);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // NVLink multicast (NVLS) off before NCCL starts: a program that uses it can put GPUs that
  // others share out of service. Forced, whatever the environment says.
  setenv("NCCL_NVLS_ENABLE", "0", 1);

  int64_t n = kDefaultN, shard = kDefaultShard;
  int gpus = 0, slices = 0;  // slices 0: the ring's sweep decides
  std::string ring_reads = "peer";
  sw::Cli cli("14_multi_gpu", "A sum sharded across GPUs and an all-reduce: by hand, then with NCCL.");
  cli.add_int("--n", &n, 1, sw::kMaxElements, "Part 1 strong scaling: floats in all, split across the GPUs");
  cli.add_int("--shard", &shard, 1, sw::kMaxElements, "Part 1 weak scaling: floats per GPU");
  cli.add_int("--gpus", &gpus, 1, kMaxGpus, "GPUs to use (default: every visible GPU)");
  cli.add_int("--slices", &slices, 1, kMaxSlices,
              "ring: slices per chunk, each on a stream of its own (default: the best of its sweep)");
  cli.add_choice("--ring-reads", &ring_reads, {"peer", "copy"},
                 "ring: read the neighbour's memory directly (peer) or copy it over first (copy)");
  std::vector<std::string> steps;
  for (const Combine& c : kCombines)
    if (std::string(c.role) == "step") steps.push_back(c.name);
  for (const AllReduce& a : kAllReduces)
    if (std::string(a.role) == "step") steps.push_back(a.name);
  cli.set_steps(steps);
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);

  int visible = 0;
  CUDA_CHECK(cudaGetDeviceCount(&visible));
  if (cli.was_given("--gpus") && gpus > visible) {
    std::fprintf(stderr, "skipped: --gpus %d needs %d GPUs but %d %s visible\n", gpus, gpus, visible,
                 visible == 1 ? "is" : "are");
    return sw::kExitSkip;
  }
  const int k = cli.was_given("--gpus") ? gpus : std::min(visible, kMaxGpus);
  if (!opt.verify_only) {  // Part 1 at one GPU holds all n floats; every GPU holds a weak-scaling shard
    sw::require_fits(gpu, "--n", n, sizeof(float), kWorkingBytes);
    for (int g = 0; g < k; ++g) {
      sw::Gpu one = gpu;
      size_t free_b = 0, total_b = 0;
      CUDA_CHECK(cudaSetDevice(g));
      CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
      one.info.free_bytes = static_cast<double>(free_b);
      sw::require_fits(one, "--shard", shard, sizeof(float), kWorkingBytes);
    }
    CUDA_CHECK(cudaSetDevice(0));
  }

  Machine m;
  start_machine(m, k, slices);
  sw::Report report(opt, gpu.copy_gbps, "14", "sharded-sum");
  int nccl_version = 0;
  NCCL_CHECK(ncclGetVersion(&nccl_version));
  std::string peers;
  for (int g = 0; g < k; ++g)
    for (int h = g + 1; h < k; ++h) peers += " " + std::to_string(g) + "-" + std::to_string(h) + (m.peer[g][h] ? ":yes" : ":no");
  report.note(std::to_string(k) + " of " + std::to_string(visible) + " visible GPU(s); NCCL " +
              std::to_string(nccl_version / 10000) + "." + std::to_string(nccl_version / 100 % 100) + "." +
              std::to_string(nccl_version % 100) + "; NCCL_NVLS_ENABLE=0; peer access" + (peers.empty() ? " n/a" : peers));
  const bool force_copy = ring_reads == "copy";

  if (opt.verify_only) {
    verify_sharded_sum(m, report, static_cast<uint64_t>(opt.seed));
    verify_all_reduce(m, report, static_cast<uint64_t>(opt.seed));
    return report.exit_code();
  }
  bench_sharded_sum(m, report, opt, n, shard);
  report.note("all-reduce rows: the GB/s column is the bus bandwidth, busbw = algbw x 2(K-1)/K (nccl-tests)");
  bench_all_reduce(m, report, opt, force_copy, slices);
  return report.exit_code();
}
