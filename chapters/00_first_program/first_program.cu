// A whole CUDA program: sum 2^24 floats on the GPU, time the kernel, check the sum.
//   nvcc -O2 -o first_program first_program.cu && ./first_program
#include <cstdio>
#include <cstdlib>
#include <vector>

// Every CUDA call returns an error code: stop at the first one, saying where.
#define CHECK(call)                                                          \
  if (const cudaError_t err = (call); err != cudaSuccess) {                  \
    std::printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err)); \
    std::exit(1);                                                            \
  }

constexpr int kThreads = 256;  // threads per block; block b sums x[b * 256 ...]

__global__ void block_sums(const float* x, long long n, float* sums) {
  __shared__ float partial[kThreads];  // one copy per block, on the SM
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  partial[threadIdx.x] = i < n ? x[i] : 0.0f;       // the last block may stick out past n
  __syncthreads();                                  // every value is in before any is added
  for (int half = 1; half < kThreads; half *= 2) {  // a tree: 8 levels for 256 values
    if (threadIdx.x % (2 * half) == 0) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = partial[0];
}

int main() {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {  // 77: "skipped" to meson's tests
    const char* require = std::getenv("REQUIRE_GPU");           // =1: a missing GPU is a failure
    return std::printf("skipped: no CUDA device\n"), require && require[0] == '1' ? 1 : 77;
  }
  const long long n = 1 << 24, blocks = (n + kThreads - 1) / kThreads;
  std::vector<float> x(n), sums(blocks);
  for (long long i = 0; i < n; ++i) x[i] = float(i % 7) - 3;  // small integers: every sum is exact
  float *d_x, *d_sums, ms = 0;
  CHECK(cudaMalloc(&d_x, n * sizeof(float)));
  CHECK(cudaMalloc(&d_sums, blocks * sizeof(float)));
  CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  block_sums<<<blocks, kThreads>>>(d_x, n, d_sums);  // returns at once: the GPU runs it later
  CHECK(cudaGetLastError());                         // did the launch itself fail?
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));  // wait for the kernel: its errors show up here
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaMemcpy(sums.data(), d_sums, blocks * sizeof(float), cudaMemcpyDeviceToHost));
  double gpu = 0, cpu = 0;
  for (float s : sums) gpu += s;  // the block sums, added on the host
  for (float v : x) cpu += v;     // the reference
  std::printf("sum %.0f (CPU %.0f), kernel %.3f ms, %.0f GB/s\n", gpu, cpu, ms, n * 4 / (ms * 1e6));
  cudaFree(d_x), cudaFree(d_sums);
  if (gpu != cpu) return std::printf("FAILED: the sums differ\n"), 1;
  return std::printf("PASS\n"), 0;
}
