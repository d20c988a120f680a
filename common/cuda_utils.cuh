// One place for the CUDA idioms that every chapter uses.
//
//   sw::kWarp, sw::kFullMask          a warp's width and the mask of all its lanes
//   sw::ceil_div(a, b)                blocks needed to cover a elements, b per block
//   sw::device_attribute<attr>()      a limit of the current GPU (asked once, then cached)
//   sw::sm_count()                    the current GPU's SMs
//   sw::cc_major()                    its compute capability's major number (9 on H100/H200)
//   sw::has_feature(f, &why)          clusters or programmatic dependent launch: there, or why not
//   sw::resident_grid(kernel, block)  blocks that fit at once: one full wave
//   sw::read(d) / sw::read(d, n)      copy one value / n values back to the host
//   sw::PinnedBuffer<T>               page-locked host memory, freed on scope exit
//   sw::same_bits(a, b)               bitwise equality (NaN == NaN, -0 != +0)
//
// CUDA only: include it from .cu and .cuh files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/check.h"

namespace sw {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

__host__ __device__ constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// --- device limits as the programs see them ---------------------------------------------
// Every query of a device limit goes through these (defined in common/device.cu). A build
// with -Demulate=t4 or sm86 caps each at that GPU's (compute capability, SMs, threads,
// blocks and shared memory per SM and per block, L2, memory; no clusters), so the
// chapters size grids and pick steps as they would on it.

// cudaDeviceGetAttribute, capped: the same arguments and error codes.
cudaError_t get_device_attribute(int* value, cudaDeviceAttr attr, int device);
// cudaOccupancyMaxActiveBlocksPerMultiprocessor, capped by the threads, blocks and
// shared memory per SM of an emulated GPU.
cudaError_t max_active_blocks_per_sm(int* blocks, const void* kernel, int block,
                                     size_t dynamic_smem);

// What a step may need that not every GPU has (both need compute capability 9.0).
enum class Feature { kClusters, kProgrammaticLaunch };
// Whether the current GPU has `f`; where it does not, *why (if given) says so in one line.
bool has_feature(Feature f, std::string* why = nullptr);

// An attribute of the current device, asked once per device and then cached.
template <cudaDeviceAttr kAttr>
int device_attribute() {
  static int device = -1, value = 0;
  int now = 0;
  CUDA_CHECK(cudaGetDevice(&now));
  if (now != device) {
    CUDA_CHECK(get_device_attribute(&value, kAttr, now));
    device = now;
  }
  return value;
}

// The number of SMs of the current device. The one place that asks.
inline int sm_count() { return device_attribute<cudaDevAttrMultiProcessorCount>(); }

// The current device's compute capability, major number (9 for 9.0).
inline int cc_major() { return device_attribute<cudaDevAttrComputeCapabilityMajor>(); }

// Blocks of `kernel` resident per SM at this block size and dynamic shared memory
// (at least 1), and the grid of one full wave: that many blocks on every SM.
template <class Kernel>
int resident_blocks_per_sm(Kernel kernel, int block, size_t dynamic_smem = 0) {
  int per_sm = 0;
  CUDA_CHECK(max_active_blocks_per_sm(&per_sm, reinterpret_cast<const void*>(kernel), block,
                                      dynamic_smem));
  return std::max(per_sm, 1);
}
template <class Kernel>
int64_t resident_grid(Kernel kernel, int block, size_t dynamic_smem = 0) {
  return int64_t{resident_blocks_per_sm(kernel, block, dynamic_smem)} * sm_count();
}

// Reading results back to the host: one word for it, `read`.
template <class T>
T read(const T* d) {
  T v{};
  CUDA_CHECK(cudaMemcpy(&v, d, sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}
template <class T>
std::vector<T> read(const T* d, int64_t count) {
  std::vector<T> v(static_cast<size_t>(count));
  if (count > 0)
    CUDA_CHECK(
        cudaMemcpy(v.data(), d, static_cast<size_t>(count) * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

// Page-locked host memory: copies to and from it run at full PCIe/NVLink speed
// and can be asynchronous.
template <class T>
class PinnedBuffer {
 public:
  explicit PinnedBuffer(int64_t count) : count_(count) {
    CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ptr_),
                              static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(T)));
  }
  ~PinnedBuffer() { cudaFreeHost(ptr_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  T* get() const { return ptr_; }
  int64_t count() const { return count_; }
  T& operator[](int64_t i) const { return ptr_[i]; }

 private:
  T* ptr_ = nullptr;
  int64_t count_ = 0;
};

// Bitwise equality: what "deterministic" and "exact" mean in this repository.
template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace sw
