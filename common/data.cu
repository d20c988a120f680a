// GPU fills: each element is a pure function of (seed, index); see data.h.
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

void poison(void* d, size_t bytes) { CUDA_CHECK(cudaMemset(d, 0xFF, bytes)); }

}  // namespace sw
