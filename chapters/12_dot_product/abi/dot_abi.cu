// The C ABI of dot_abi.h: a context that allocates the device buffers once (the
// seed's second version) behind handles that cannot crash the process. It launches
// chapter 12's kernels (dot_kernel.cuh) itself, because a library returns its errors
// where the chapter exits on them.
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <new>

#include "chapters/12_dot_product/dot_kernel.cuh"
#include "common/cuda_utils.cuh"
#include "dot_abi.h"

namespace {

int code_of(cudaError_t err) {
  switch (err) {
    case cudaSuccess:
      return SW_DOT_OK;
    case cudaErrorMemoryAllocation:
      return SW_DOT_OUT_OF_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorUnsupportedPtxVersion:
      return SW_DOT_NO_GPU;
    default:
      return SW_DOT_CUDA_ERROR;
  }
}

struct Context {
  int64_t n = 0;
  int64_t max_blocks = 0;  // first-pass blocks resident at once: the most a launch uses
  float *x = nullptr, *y = nullptr, *partials = nullptr, *result = nullptr;
  cudaStream_t stream = nullptr;
  std::mutex busy;  // one call at a time on this context

  ~Context() {  // errors here have no one to go to; the buffers are gone either way
    cudaFree(x);
    cudaFree(y);
    cudaFree(partials);
    cudaFree(result);
    if (stream) cudaStreamDestroy(stream);
  }
};

// First-pass blocks resident at once (sw::resident_grid, with error codes: a library
// returns them instead of exiting). The limits come through common/, as everywhere.
cudaError_t resident_blocks(int64_t* blocks) {
  int device = 0, sms = 0, per_sm = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess)
    err = sw::get_device_attribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess)
    err = sw::max_active_blocks_per_sm(&per_sm, reinterpret_cast<const void*>(dot::dot_partials),
                                       dot::kBlock, 0);
  *blocks = int64_t{sms} * (per_sm > 0 ? per_sm : 1);
  return err;
}

// The chapter's two-pass-float4: block sums, then one block adds them.
cudaError_t launch_dot(const Context& c) {
  const int64_t blocks = dot::blocks_for(c.n, c.max_blocks);
  dot::dot_partials<<<blocks, dot::kBlock, 0, c.stream>>>(c.x, c.y, c.n, c.partials);
  dot::dot_final<<<1, dot::kBlock, 0, c.stream>>>(c.partials, blocks, c.result);
  return cudaGetLastError();
}

// Live contexts by handle. Handles count up from 1 and are never reused, so a
// released handle stays invalid.
std::mutex registry_mutex;
std::map<uint64_t, std::shared_ptr<Context>> registry;
uint64_t next_handle = 1;

std::shared_ptr<Context> find(uint64_t handle) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  const auto it = registry.find(handle);
  return it == registry.end() ? nullptr : it->second;
}

}  // namespace

extern "C" int sw_dot_init(int64_t n, uint64_t* handle) {
  if (!handle || n < 1) return SW_DOT_BAD_ARGUMENT;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear it
    return SW_DOT_NO_GPU;
  }
  // A device without a kernel image for this build counts as no GPU.
  cudaFuncAttributes attr;
  cudaError_t err = cudaFuncGetAttributes(&attr, dot::dot_partials);
  std::shared_ptr<Context> ctx(new (std::nothrow) Context);
  if (!ctx) return SW_DOT_OUT_OF_MEMORY;
  ctx->n = n;
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  if (err == cudaSuccess) err = resident_blocks(&ctx->max_blocks);
  if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking);
  if (err == cudaSuccess) err = cudaMalloc(&ctx->x, bytes);
  if (err == cudaSuccess) err = cudaMalloc(&ctx->y, bytes);
  if (err == cudaSuccess) err = cudaMalloc(&ctx->partials, ctx->max_blocks * sizeof(float));
  if (err == cudaSuccess) err = cudaMalloc(&ctx->result, sizeof(float));
  if (err != cudaSuccess) {
    cudaGetLastError();   // an allocation failure is not sticky; clear it
    return code_of(err);  // ctx frees what was allocated
  }
  std::lock_guard<std::mutex> lock(registry_mutex);
  *handle = next_handle++;
  registry[*handle] = ctx;
  return SW_DOT_OK;
}

extern "C" int sw_dot(uint64_t handle, const float* x, const float* y, int64_t n, float* result) {
  const std::shared_ptr<Context> ctx = find(handle);
  if (!ctx) return SW_DOT_BAD_HANDLE;
  if (!x || !y || !result) return SW_DOT_BAD_ARGUMENT;
  if (n != ctx->n) return SW_DOT_SIZE_MISMATCH;
  std::lock_guard<std::mutex> lock(ctx->busy);
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  float host_result = 0.0f;
  cudaError_t err = cudaMemcpyAsync(ctx->x, x, bytes, cudaMemcpyHostToDevice, ctx->stream);
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(ctx->y, y, bytes, cudaMemcpyHostToDevice, ctx->stream);
  if (err == cudaSuccess) err = launch_dot(*ctx);
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(&host_result, ctx->result, sizeof(float), cudaMemcpyDeviceToHost,
                          ctx->stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(ctx->stream);
  if (err != cudaSuccess) return code_of(err);
  *result = host_result;
  return SW_DOT_OK;
}

extern "C" int sw_dot_release(uint64_t handle) {
  std::shared_ptr<Context> ctx;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    const auto it = registry.find(handle);
    if (it == registry.end()) return SW_DOT_BAD_HANDLE;
    ctx = std::move(it->second);
    registry.erase(it);
  }
  // The buffers are freed when the last user lets go: here, or at the end of a
  // sw_dot that is still running on another thread.
  return SW_DOT_OK;
}

extern "C" const char* sw_dot_error_string(int code) {
  switch (code) {
    case SW_DOT_OK:
      return "ok";
    case SW_DOT_BAD_HANDLE:
      return "not a live handle from sw_dot_init";
    case SW_DOT_SIZE_MISMATCH:
      return "n differs from the n given to sw_dot_init";
    case SW_DOT_BAD_ARGUMENT:
      return "a null pointer or n < 1";
    case SW_DOT_NO_GPU:
      return "no usable CUDA device or driver";
    case SW_DOT_OUT_OF_MEMORY:
      return "out of memory";
    case SW_DOT_CUDA_ERROR:
      return "a CUDA error";
    default:
      return "unknown error code";
  }
}
