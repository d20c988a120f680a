// GPU presence, device properties, the banner and the measured copy ceiling.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "check.h"
#include "device.h"
#include "gpu_timer.h"
#include "report.h"

namespace sw {
namespace {

__global__ void probe_kernel(int* out) { *out = 1; }

[[noreturn]] void no_gpu(const std::string& why) {
  const char* require = std::getenv("REQUIRE_GPU");
  if (require && std::strcmp(require, "1") == 0) {
    std::fprintf(stderr, "error: REQUIRE_GPU=1 but %s\n", why.c_str());
    std::exit(kExitFailed);
  }
  std::fprintf(stderr, "skipped: %s (set REQUIRE_GPU=1 to make this an error)\n", why.c_str());
  std::exit(kExitSkip);
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

constexpr size_t kCopyBytes = size_t{1} << 30;  // 1 GiB each way: far beyond any L2
constexpr double kFitMargin = 0.95;             // leave room for the context and libraries

}  // namespace

void require_gpu() {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  if (driver == 0) no_gpu("no CUDA driver is installed");
  if (driver < runtime)
    no_gpu("the CUDA driver supports CUDA " + version_text(driver) + " but this program needs " +
           version_text(runtime) + "; update the driver");
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0)) no_gpu("no CUDA device found");
  if (err != cudaSuccess)
    no_gpu(std::string("the CUDA driver is not usable: ") + cudaGetErrorName(err) + " (" +
           cudaGetErrorString(err) + ")");
  int* flag = nullptr;
  CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
  probe_kernel<<<1, 1>>>(flag);
  const cudaError_t launch = cudaGetLastError();
  const cudaError_t sync = launch == cudaSuccess ? cudaDeviceSynchronize() : launch;
  CUDA_CHECK(cudaFree(flag));
  if (sync != cudaSuccess) {
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    const std::string sm = std::to_string(p.major) + std::to_string(p.minor);
    if (sync == cudaErrorNoKernelImageForDevice || sync == cudaErrorUnsupportedPtxVersion)
      no_gpu("this build has no kernel image for the " + std::string(p.name) + " (sm_" + sm +
             "); reconfigure with -Dgpu_arch=" + sm + " or the default 'portable'");
    no_gpu(std::string("a test kernel failed: ") + cudaGetErrorName(sync));
  }
}

DeviceInfo device_info() {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  DeviceInfo d;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = p.l2CacheSize;
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  d.free_bytes = static_cast<double>(free_b);
  d.total_bytes = static_cast<double>(total_b);
  // CUDA 13 dropped cudaDeviceProp::memoryClockRate; the attributes remain.
  int clock_khz = 0, bus_bits = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
  d.theoretical_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

double measure_copy_gbps(const CommonOptions& opt) {
  void *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, kCopyBytes));
  CUDA_CHECK(cudaMalloc(&dst, kCopyBytes));
  CUDA_CHECK(cudaMemset(src, 1, kCopyBytes));
  const Timing t = time_gpu(opt, [&] {
    CUDA_CHECK(cudaMemcpy(dst, src, kCopyBytes, cudaMemcpyDeviceToDevice));
  });
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  return gbps(2.0 * kCopyBytes, t.ms_median);
}

Gpu start_gpu(const CommonOptions& opt) {
  require_gpu();
  Gpu gpu;
  gpu.info = device_info();
  if (opt.verify_only) return gpu;
  gpu.copy_gbps = measure_copy_gbps(opt);
  const DeviceInfo& d = gpu.info;
  if (opt.json) {
    std::printf(
        "{\"record\":\"device\",\"name\":%s,\"cc\":\"%d.%d\",\"sm_count\":%d,\"memory_gb\":%s,"
        "\"l2_mb\":%s,\"theoretical_gbps\":%s,\"copy_gbps\":%s,\"driver\":\"%s\",\"runtime\":\"%s\"}\n",
        json_quote(d.name).c_str(), d.cc_major, d.cc_minor, d.sm_count,
        json_number(d.total_bytes / 1e9).c_str(), json_number(d.l2_bytes / 1e6).c_str(),
        json_number(d.theoretical_gbps).c_str(), json_number(gpu.copy_gbps).c_str(),
        version_text(d.driver_version).c_str(), version_text(d.runtime_version).c_str());
  } else {
    std::printf("GPU %s (sm_%d%d), %d SMs, %.1f GB, L2 %.1f MB, driver CUDA %s, runtime %s\n",
                d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count, d.total_bytes / 1e9,
                d.l2_bytes / 1e6, version_text(d.driver_version).c_str(),
                version_text(d.runtime_version).c_str());
    std::printf("DRAM bandwidth: %.0f GB/s theoretical, %.0f GB/s measured copy (%.0f%%); "
                "\"%%copy\" below is relative to the measured copy\n",
                d.theoretical_gbps, gpu.copy_gbps, 100.0 * gpu.copy_gbps / d.theoretical_gbps);
  }
  std::fflush(stdout);
  return gpu;
}

void require_fits(const Gpu& gpu, const std::string& option, int64_t value, double bytes_per_unit,
                  double fixed_bytes) {
  const std::string msg =
      fits_message(option, value, bytes_per_unit, fixed_bytes, gpu.info.free_bytes * kFitMargin);
  if (!msg.empty()) {
    std::fprintf(stderr, "error: %s\n", msg.c_str());
    std::exit(kExitBadInput);
  }
}

void* device_alloc(size_t bytes) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, bytes == 0 ? 1 : bytes));
  return p;
}

void device_free(void* ptr) {
  if (ptr) CUDA_CHECK(cudaFree(ptr));
}

}  // namespace sw
