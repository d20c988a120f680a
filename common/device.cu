// GPU presence, device properties, the banner and the measured copy ceiling, and
// the device limits as the programs see them (an emulated GPU's, with -Demulate).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "bench/protocol.h"
#include "check.h"
#include "cuda_utils.cuh"
#include "device.h"
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

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

constexpr double kFitMargin = 0.95;  // leave room for the context and libraries

// A GPU that a build emulates (meson -Demulate=t4|sm86 defines SW_EMULATE_CC as 75
// or 86): the limits the programs see, from NVIDIA's data sheets and the CUDA
// programming guide's table of compute capabilities. The speed stays the real GPU's.
struct EmulatedGpu {
  const char* name;
  int cc_major, cc_minor;
  int sm_count, threads_per_sm, blocks_per_sm;
  int smem_per_sm, smem_per_block, smem_per_block_optin, smem_reserved_per_block;  // bytes
  int l2_bytes;
  double memory_bytes;  // what nvidia-smi reports as the total
};
constexpr EmulatedGpu kEmulatable[] = {
    // A Tesla T4 (Turing, Colab's free GPU): 40 SMs of 1024 threads and 64 KiB of shared memory.
    {"Tesla T4", 7, 5, 40, 1024, 16, 64 << 10, 48 << 10, 64 << 10, 0, 4 << 20, 15360.0 * (1 << 20)},
    // A GeForce RTX 3090 (Ampere, sm_86): 82 SMs of 1536 threads and 100 KiB of shared memory.
    {"GeForce RTX 3090", 8, 6, 82, 1536, 16, 100 << 10, 48 << 10, 99 << 10, 1 << 10, 6 << 20,
     24576.0 * (1 << 20)},
};
#ifdef SW_EMULATE_CC
constexpr int kEmulateCc = SW_EMULATE_CC;
#else
constexpr int kEmulateCc = 0;
#endif
static_assert(kEmulateCc == 0 || kEmulateCc == 75 || kEmulateCc == 86, "SW_EMULATE_CC: 75 or 86");

constexpr const EmulatedGpu* find_emulated() {
  for (const EmulatedGpu& e : kEmulatable)
    if (e.cc_major * 10 + e.cc_minor == kEmulateCc) return &e;
  return nullptr;
}
// The emulated GPU, or nullptr: the real GPU, as it is. (A function, not a constant:
// compilers warn of the branches a constant pointer makes dead.)
const EmulatedGpu* emulated() { return find_emulated(); }

// The emulated GPU's value of `attr` given the real one: a limit is capped at the
// emulated GPU's (a smaller real GPU keeps its own), a feature it lacks reads 0.
int emulated_value(const EmulatedGpu* e, cudaDeviceAttr attr, int real, int device) {
  switch (attr) {
    case cudaDevAttrComputeCapabilityMajor:
    case cudaDevAttrComputeCapabilityMinor: {
      int major = 0, minor = 0;  // the real one, unless it is the newer
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
      const bool newer = major * 10 + minor >= e->cc_major * 10 + e->cc_minor;
      if (!newer) return real;
      return attr == cudaDevAttrComputeCapabilityMajor ? e->cc_major : e->cc_minor;
    }
    case cudaDevAttrMultiProcessorCount:
      return std::min(real, e->sm_count);
    case cudaDevAttrMaxThreadsPerMultiProcessor:
      return std::min(real, e->threads_per_sm);
    case cudaDevAttrMaxBlocksPerMultiprocessor:
      return std::min(real, e->blocks_per_sm);
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
      return std::min(real, e->smem_per_sm);
    case cudaDevAttrMaxSharedMemoryPerBlock:
      return std::min(real, e->smem_per_block);
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      return std::min(real, e->smem_per_block_optin);
    case cudaDevAttrReservedSharedMemoryPerBlock:
      return e->smem_reserved_per_block;
    case cudaDevAttrL2CacheSize:
      return std::min(real, e->l2_bytes);
    case cudaDevAttrClusterLaunch:
      return 0;
    default:
      return real;
  }
}

// One device attribute, or 0 where this driver does not report it.
int attribute(cudaDeviceAttr what, int dev) {
  int v = 0;
  if (get_device_attribute(&v, what, dev) != cudaSuccess) {
    cudaGetLastError();  // clear it: the attribute is optional
    return 0;
  }
  return v;
}

// A positive count as JSON, or null for 0 (not reported).
std::string json_or_null(int v) { return v > 0 ? std::to_string(v) : "null"; }

}  // namespace

cudaError_t get_device_attribute(int* value, cudaDeviceAttr attr, int device) {
  const cudaError_t err = cudaDeviceGetAttribute(value, attr, device);
  if (const EmulatedGpu* e = emulated(); err == cudaSuccess && e)
    *value = emulated_value(e, attr, *value, device);
  return err;
}

cudaError_t max_active_blocks_per_sm(int* blocks, const void* kernel, int block,
                                     size_t dynamic_smem) {
  cudaError_t err =
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, block, dynamic_smem);
  const EmulatedGpu* e = emulated();
  if (err != cudaSuccess || !e) return err;
  cudaFuncAttributes a = {};
  err = cudaFuncGetAttributes(&a, kernel);
  if (err != cudaSuccess) return err;
  int cap = std::min(e->blocks_per_sm, e->threads_per_sm / std::max(block, 1));
  const size_t smem = a.sharedSizeBytes + dynamic_smem;
  if (smem > 0) cap = std::min<int>(cap, e->smem_per_sm / (smem + e->smem_reserved_per_block));
  *blocks = std::min(*blocks, cap);
  return cudaSuccess;
}

bool has_feature(Feature f, std::string* why) {
  const bool clusters = f == Feature::kClusters;
  int device = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(get_device_attribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  const int major = cc_major();
  int yes = major >= 9;
  if (clusters && yes) CUDA_CHECK(get_device_attribute(&yes, cudaDevAttrClusterLaunch, device));
  if (!yes && why) {
    *why = std::string(clusters ? "thread block clusters need"
                                : "programmatic dependent launch needs") +
           " compute capability 9.0; this GPU has " + std::to_string(major) + "." +
           std::to_string(minor) +
           (emulated() ? std::string(" (an emulated ") + emulated()->name + ")" : "");
  }
  return yes;
}

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
  if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0))
    no_gpu("no CUDA device found");
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
             "); reconfigure with -Dgpu_arch=" + sm + " or the default 'auto'" +
             (emulated() ? std::string(
                               ", and -Demulate=none (this GPU cannot run the emulated one's code)")
                         : ""));
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
  d.cc_major = attribute(cudaDevAttrComputeCapabilityMajor, dev);
  d.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor, dev);
  d.sm_count = attribute(cudaDevAttrMultiProcessorCount, dev);
  d.l2_bytes = attribute(cudaDevAttrL2CacheSize, dev);
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  d.free_bytes = static_cast<double>(free_b);
  d.total_bytes = static_cast<double>(total_b);
  if (const EmulatedGpu* e =
          emulated()) {  // its name (a results file of its own), no more memory than it has
    d.emulated = e->name;
    d.name += std::string(" emulating a ") + e->name;
    const double used = d.total_bytes - d.free_bytes;
    d.total_bytes = std::min(d.total_bytes, e->memory_bytes);
    d.free_bytes = std::max(0.0, std::min(d.free_bytes, d.total_bytes - used));
  }
  // CUDA 13 dropped cudaDeviceProp::memoryClockRate and clockRate; the attributes remain.
  const int mem_clock_khz = attribute(cudaDevAttrMemoryClockRate, dev);
  d.mem_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, dev);
  d.theoretical_gbps = 2.0 * mem_clock_khz * 1e3 * (d.mem_bus_bits / 8.0) / 1e9;
  d.mem_clock_mhz = mem_clock_khz / 1000;
  d.sm_clock_mhz = attribute(cudaDevAttrClockRate, dev) / 1000;
  d.warp_size = attribute(cudaDevAttrWarpSize, dev);
  d.max_threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor, dev);
  d.max_threads_per_block = attribute(cudaDevAttrMaxThreadsPerBlock, dev);
  d.max_blocks_per_sm = attribute(cudaDevAttrMaxBlocksPerMultiprocessor, dev);
  d.regs_per_sm = attribute(cudaDevAttrMaxRegistersPerMultiprocessor, dev);
  d.regs_per_block = attribute(cudaDevAttrMaxRegistersPerBlock, dev);
  d.smem_per_sm_bytes = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
  d.smem_per_block_bytes = attribute(cudaDevAttrMaxSharedMemoryPerBlock, dev);
  d.smem_per_block_optin_bytes = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  CUDA_CHECK(cudaGetDeviceCount(&d.device_count));
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

namespace {
// One device-to-device copy of the ceiling's bytes.
void copy_once(void* dst, const void* src) {
  CUDA_CHECK(cudaMemcpy(dst, src, kCopyBytes, cudaMemcpyDeviceToDevice));
}
}  // namespace

double copy_gbps(const CommonOptions& opt, void* dst, const void* src) {
  CommonOptions plain = opt;
  plain.graded_timing = false;  // the ceiling is timed as the tables' rows are
  const bench::Row row{"copy", static_cast<int64_t>(kCopyBytes), 2.0 * kCopyBytes};
  const Result r = bench::measure(plain, row, bench::Unchecked{}, copy_once, dst, src);
  return gbps(2.0 * kCopyBytes, r.timing.ms_median);
}

double measure_copy_gbps(const CommonOptions& opt) {
  void *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, kCopyBytes));
  CUDA_CHECK(cudaMalloc(&dst, kCopyBytes));
  CUDA_CHECK(cudaMemset(src, 1, kCopyBytes));
  const double g = copy_gbps(opt, dst, src);
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  return g;
}

std::string device_json(const Gpu& gpu) {
  const DeviceInfo& d = gpu.info;
  std::string s = "{\"record\":\"device\",\"name\":" + json_quote(d.name) + ",\"cc\":\"" +
                  std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + "\"";
  auto add = [&](const char* key, const std::string& value) {
    s += std::string(",\"") + key + "\":" + value;
  };
  add("sm_count", std::to_string(d.sm_count));
  add("gpu_count", std::to_string(d.device_count));
  add("memory_gb", json_number(d.total_bytes / 1e9));
  add("l2_mb", json_number(d.l2_bytes / 1e6));
  add("theoretical_gbps", json_number(d.theoretical_gbps));
  add("copy_gbps", json_number(gpu.copy_gbps));
  add("driver", "\"" + version_text(d.driver_version) + "\"");
  add("runtime", "\"" + version_text(d.runtime_version) + "\"");
  if (!d.emulated.empty()) add("emulated", json_quote(d.emulated));
  // The limits the docs' tables quote; null where the driver did not report one.
  using Field = int DeviceInfo::*;
  static constexpr std::pair<const char*, Field> kLimits[] = {
      {"warp_size", &DeviceInfo::warp_size},
      {"max_threads_per_sm", &DeviceInfo::max_threads_per_sm},
      {"max_threads_per_block", &DeviceInfo::max_threads_per_block},
      {"max_blocks_per_sm", &DeviceInfo::max_blocks_per_sm},
      {"regs_per_sm", &DeviceInfo::regs_per_sm},
      {"regs_per_block", &DeviceInfo::regs_per_block},
      {"smem_per_sm_bytes", &DeviceInfo::smem_per_sm_bytes},
      {"smem_per_block_bytes", &DeviceInfo::smem_per_block_bytes},
      {"smem_per_block_optin_bytes", &DeviceInfo::smem_per_block_optin_bytes},
      {"mem_bus_bits", &DeviceInfo::mem_bus_bits},
      {"mem_clock_mhz", &DeviceInfo::mem_clock_mhz},
      {"sm_clock_mhz", &DeviceInfo::sm_clock_mhz}};
  for (const auto& [key, field] : kLimits) add(key, json_or_null(d.*field));
  return s + "}";
}

Gpu start_gpu(const CommonOptions& opt) {
  require_gpu();
  Gpu gpu;
  gpu.info = device_info();
  const DeviceInfo& d = gpu.info;
  if (!d.emulated.empty() && !opt.json) {  // tests run --verify-only: their logs say it too
    std::printf(
        "emulated: a %s's limits (compute capability %d.%d, %d SMs, %d threads and %d KiB of "
        "shared "
        "memory per SM, %d KiB per block opted in, no thread block clusters, no programmatic "
        "dependent "
        "launch) at this GPU's speed\n",
        d.emulated.c_str(), d.cc_major, d.cc_minor, d.sm_count, d.max_threads_per_sm,
        d.smem_per_sm_bytes / 1024, d.smem_per_block_optin_bytes / 1024);
  }
  if (opt.verify_only) return gpu;
  gpu.copy_gbps = measure_copy_gbps(opt);
  if (opt.json) {
    std::printf("%s\n", device_json(gpu).c_str());
  } else {
    std::printf("GPU %s (sm_%d%d), %d SMs, %.1f GB, L2 %.1f MB, driver CUDA %s, runtime %s\n",
                d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count, d.total_bytes / 1e9,
                d.l2_bytes / 1e6, version_text(d.driver_version).c_str(),
                version_text(d.runtime_version).c_str());
    std::printf(
        "DRAM bandwidth: %.0f GB/s theoretical, %.0f GB/s measured copy (%.0f%%); "
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
