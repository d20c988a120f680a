// Chapter 14's machine (see machine.h): the GPUs' streams, events, peer access and
// communicators, and the data fill.
#include <algorithm>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/nccl_check.h"
#include "machine.h"

namespace ch14 {
namespace {

constexpr int kFillBlock = 256;
constexpr int kFillBlocksPerSm = 8;

__global__ void fill_values(float* x, int64_t first, int64_t n, uint64_t seed, Data d) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = value(d, seed, first + i);
}

}  // namespace

void launch_fill(int gpu, float* x, int64_t first, int64_t n, uint64_t seed, Data d) {
  if (n == 0) return;
  CUDA_CHECK(cudaSetDevice(gpu));
  const int64_t blocks =
      std::min<int64_t>(sw::ceil_div(n, kFillBlock), kFillBlocksPerSm * sw::sm_count());
  fill_values<<<blocks, kFillBlock>>>(x, first, n, seed, d);
  CHECK_LAUNCH();
}

const std::vector<ncclComm_t>& Machine::comm(int count) {
  std::vector<ncclComm_t>& c = comms[count];
  if (c.empty()) {
    c.resize(count);
    std::vector<int> devices(count);
    for (int g = 0; g < count; ++g) devices[g] = g;
    NCCL_CHECK(ncclCommInitAll(c.data(), count, devices.data()));
  }
  return c;
}

Machine::~Machine() {
  for (auto& [count, c] : comms)
    for (ncclComm_t one : c) ncclCommDestroy(one);
  for (int g = 0; g < k; ++g) {
    cudaSetDevice(g);
    for (cudaStream_t s : stream[g]) cudaStreamDestroy(s);
    for (cudaEvent_t e : done[g]) cudaEventDestroy(e);
  }
  cudaSetDevice(0);
}

void start_machine(Machine& m, int k, int slices) {
  m.k = k;
  m.slices = slices;
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
  }
  CUDA_CHECK(cudaSetDevice(0));
}

std::string describe(const Machine& m, int visible) {
  int version = 0;
  NCCL_CHECK(ncclGetVersion(&version));
  std::string peers;
  for (int g = 0; g < m.k; ++g)
    for (int h = g + 1; h < m.k; ++h)
      peers += " " + std::to_string(g) + "-" + std::to_string(h) + (m.peer[g][h] ? ":yes" : ":no");
  return std::to_string(m.k) + " of " + std::to_string(visible) + " visible GPU(s); NCCL " +
         std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100) + "; NCCL_NVLS_ENABLE=0; peer access" +
         (peers.empty() ? " n/a" : peers);
}

std::vector<int> gpu_counts(int k) {
  std::vector<int> out;
  for (int c = 1; c < k; c *= 2) out.push_back(c);
  out.push_back(k);
  return out;
}

}  // namespace ch14
