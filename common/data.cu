// GPU fills: each element is a pure function of (seed, index); see data.h.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>

#include "check.h"
#include "cuda_utils.cuh"
#include "data.h"

namespace sw {
namespace {

constexpr int kFillThreads = 256;
constexpr int kFillBlocksPerSm = 8;

int fill_blocks() { return sm_count() * kFillBlocksPerSm; }

template <class T, class Gen>
__global__ void fill_kernel(T* out, int64_t n, Gen gen) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = gen(i);
}

template <class T, class Gen>
void launch_fill(T* out, int64_t n, Gen gen) {
  if (n <= 0) return;
  fill_kernel<<<fill_blocks(), kFillThreads>>>(out, n, gen);
  CHECK_LAUNCH();
}

struct FloatGen {
  uint64_t seed;
  __device__ float operator()(int64_t i) const { return float_value(seed, i); }
};
struct DoubleGen {
  uint64_t seed;
  __device__ double operator()(int64_t i) const { return double_value(seed, i); }
};
struct IntGen {
  uint64_t seed;
  __device__ int32_t operator()(int64_t i) const { return int_value(seed, i); }
};
struct ByteGen {
  uint64_t seed;
  ByteSpec spec;
  __device__ uint8_t operator()(int64_t i) const { return byte_value(seed, i, spec); }
};
struct ConstantGen {
  float value;
  __device__ float operator()(int64_t) const { return value; }
};

}  // namespace

void fill_floats(float* d, int64_t n, uint64_t seed) { launch_fill(d, n, FloatGen{seed}); }
void fill_doubles(double* d, int64_t n, uint64_t seed) { launch_fill(d, n, DoubleGen{seed}); }
void fill_ints(int32_t* d, int64_t n, uint64_t seed) { launch_fill(d, n, IntGen{seed}); }
void fill_bytes(uint8_t* d, int64_t n, uint64_t seed, ByteSpec spec) {
  launch_fill(d, n, ByteGen{seed, spec});
}
void fill_constant(float* d, int64_t n, float value) { launch_fill(d, n, ConstantGen{value}); }

namespace {

constexpr int kPoisonSharedThreads = 1024;

// Every word of the block's shared memory set to `word`. Shared memory is not cleared
// between kernels: the next kernel on that SM finds what this one left, so a step that
// reads its shared memory before writing it reads the poison, not a lucky zero.
__global__ void poison_shared_kernel(uint32_t word, int words) {
  extern __shared__ uint32_t smem[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) smem[i] = word;
}

// Two blocks per SM, each of the most dynamic shared memory a block may have.
void poison_shared(uint32_t word) {
  const int bytes = device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>();
  CUDA_CHECK(cudaFuncSetAttribute(poison_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  bytes));
  poison_shared_kernel<<<2 * sm_count(), kPoisonSharedThreads, bytes>>>(
      word, bytes / static_cast<int>(sizeof(uint32_t)));
  CHECK_LAUNCH();
}

}  // namespace

void poison(void* d, size_t bytes) {
  static const char* const mode = [] {
    const char* m = std::getenv("STEPWISE_POISON");
    return m != nullptr ? m : "";
  }();
  const bool zero = std::strcmp(mode, "zero") == 0;
  CUDA_CHECK(cudaMemset(d, zero ? 0x00 : 0xFF, bytes));
  if (std::strcmp(mode, "outputs") != 0) poison_shared(zero ? 0u : 0xFFFFFFFFu);
}

namespace {

// Grid-stride over 8-byte words; the trailing bytes (bytes % 8) go into one more
// word, zero-padded. An unaligned input is read byte by byte. One atomicAdd per thread.
__global__ void digest_kernel(const unsigned char* p, size_t bytes, unsigned long long* out) {
  const size_t words = bytes / 8;
  const bool aligned = reinterpret_cast<uintptr_t>(p) % 8 == 0;
  unsigned long long sum = 0;
  for (size_t w = blockIdx.x * size_t{blockDim.x} + threadIdx.x; w <= words;
       w += size_t{gridDim.x} * blockDim.x) {
    uint64_t word = 0;
    if (w < words && aligned) {
      word = reinterpret_cast<const uint64_t*>(p)[w];
    } else {  // an input at an odd offset, or the trailing bytes
      for (size_t b = w * 8; b < bytes && b < w * 8 + 8; ++b)
        word |= uint64_t{p[b]} << (8 * (b - w * 8));
    }
    sum += mix64(mix64(w) ^ word);
  }
  atomicAdd(out, sum);
}

}  // namespace

uint64_t device_digest(const void* d, size_t bytes) {
  constexpr int kThreads = 256;
  // One 8-byte sum per device, kept for the process: the checks call this after
  // every run, and an allocation each time is slow under compute-sanitizer.
  static std::map<int, unsigned long long*> sums;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  unsigned long long*& out = sums[device];
  if (out == nullptr) CUDA_CHECK(cudaMalloc(&out, sizeof *out));
  CUDA_CHECK(cudaMemset(out, 0, sizeof *out));
  const int blocks = static_cast<int>(
      std::min<size_t>(ceil_div(static_cast<int64_t>(bytes / 8 + 1), kThreads), 4096));
  digest_kernel<<<blocks, kThreads>>>(static_cast<const unsigned char*>(d), bytes, out);
  CHECK_LAUNCH();
  unsigned long long h = 0;
  CUDA_CHECK(cudaMemcpy(&h, out, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace sw
