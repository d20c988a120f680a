// The GPU a chapter runs on.
//
//   int main(int argc, char** argv) {
//     ... parse the command line first: bad input exits 2 even without a GPU ...
//     sw::Gpu gpu = sw::start_gpu(opt);           // exits 77 with no usable GPU
//     sw::require_fits(gpu, "--n", n, sizeof(float));  // exits 2 if too large
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cli.h"

namespace sw {

struct DeviceInfo {
  std::string name;      // with -Demulate: "NVIDIA H100 80GB HBM3 emulating a Tesla T4"
  std::string emulated;  // with -Demulate: the emulated GPU, "Tesla T4"; else empty
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double total_bytes = 0, free_bytes = 0;
  double l2_bytes = 0;
  double theoretical_gbps = 0;                  // 2 (DDR) x memory clock x bus width
  int driver_version = 0, runtime_version = 0;  // e.g. 13000 for 13.0
  int device_count = 0;                         // CUDA devices visible to this process
  // Per-SM and per-block limits (cudaDeviceGetAttribute); 0 where the driver
  // does not report one.
  int warp_size = 0;
  int max_threads_per_sm = 0, max_threads_per_block = 0, max_blocks_per_sm = 0;
  int regs_per_sm = 0, regs_per_block = 0;  // 32-bit registers
  int smem_per_sm_bytes = 0, smem_per_block_bytes = 0;
  int smem_per_block_optin_bytes = 0;  // with cudaFuncAttributeMaxDynamicSharedMemorySize
  int mem_bus_bits = 0;
  int mem_clock_mhz = 0, sm_clock_mhz = 0;  // peak clocks; 0 where the attribute is gone
};

struct Gpu {
  DeviceInfo info;
  double copy_gbps = 0;  // measured device-to-device copy, bytes read + written
};

// Checks that a usable GPU is present: a driver new enough, a device, and a
// kernel image for it. If not, prints one line that says which, then exits 77,
// or 1 when the environment has REQUIRE_GPU=1.
void require_gpu();

// Reads the device's properties (name, SMs, memory, L2, theoretical bandwidth,
// per-SM limits).
DeviceInfo device_info();

// The "device" JSON record: every DeviceInfo field (clocks of 0 as null) and the
// measured copy bandwidth. device_query --json prints it; the tour keeps it.
std::string device_json(const Gpu& gpu);

// The copy ceiling's size: 1 GiB each way, far beyond any L2.
constexpr size_t kCopyBytes = size_t{1} << 30;

// Median bandwidth of cudaMemcpy device to device of kCopyBytes from src to dst, counting
// read + write bytes, timed as the tables' rows are (docs/evidence/16_copy_data.cu times it
// over other contents).
double copy_gbps(const CommonOptions& opt, void* dst, const void* src);

// The ceiling every "% of copy" divides by: copy_gbps over kCopyBytes of the byte 0x01.
double measure_copy_gbps(const CommonOptions& opt);

// require_gpu(), device_info(), then, unless --verify-only, measures the copy
// bandwidth and prints the banner (a "device" JSON record with --json).
Gpu start_gpu(const CommonOptions& opt);

// Exits 2 with a one-line message when fixed_bytes + value * bytes_per_unit does
// not fit in the device's free memory (less a safety margin).
void require_fits(const Gpu& gpu, const std::string& option, int64_t value, double bytes_per_unit,
                  double fixed_bytes = 0);

// Device memory owned by one object; freed on scope exit.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(int64_t count) { allocate(count); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) {
    o.ptr_ = nullptr;
    o.count_ = 0;
  }

  void allocate(int64_t count);  // frees the old buffer first
  void release();
  T* get() const { return ptr_; }
  int64_t count() const { return count_; }
  size_t bytes() const { return static_cast<size_t>(count_) * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  int64_t count_ = 0;
};

void* device_alloc(size_t bytes);  // cudaMalloc, checked
void device_free(void* ptr);

template <class T>
void DeviceBuffer<T>::allocate(int64_t count) {
  release();
  ptr_ = static_cast<T*>(device_alloc(static_cast<size_t>(count) * sizeof(T)));
  count_ = count;
}
template <class T>
void DeviceBuffer<T>::release() {
  device_free(ptr_);
  ptr_ = nullptr;
  count_ = 0;
}

}  // namespace sw
