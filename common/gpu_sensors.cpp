#include "gpu_sensors.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <map>

namespace sw {
namespace {

// The few NVML entry points used here, declared as the NVML API gives them (nvml.h): each
// returns nvmlReturn_t, 0 for success; a device is an opaque handle.
using NvmlDevice = struct NvmlDeviceOpaque*;
using InitFn = int (*)();
using HandleFn = int (*)(const char* pci_bus_id, NvmlDevice* device);
using ClockFn = int (*)(NvmlDevice device, int clock_type, unsigned* mhz);
using PowerFn = int (*)(NvmlDevice device, unsigned* milliwatts);
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
constexpr int kBusIdChars = 32;  // "0000:65:00.0" and its end

// NVML opened once per process; null members where it is missing.
struct Nvml {
  HandleFn handle = nullptr;
  ClockFn clock = nullptr;
  PowerFn power = nullptr;
  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    const auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
    if (!init || init() != kNvmlSuccess) return;
    handle = reinterpret_cast<HandleFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<ClockFn>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    power = reinterpret_cast<PowerFn>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
  }
};

// The NVML handle of CUDA device `device` (null if none), looked up once per device.
NvmlDevice device_handle(const Nvml& nvml, int device) {
  static std::map<int, NvmlDevice> handles;
  const auto found = handles.find(device);
  if (found != handles.end()) return found->second;
  NvmlDevice d = nullptr;
  char bus_id[kBusIdChars] = {};
  if (nvml.handle && cudaDeviceGetPCIBusId(bus_id, kBusIdChars, device) == cudaSuccess &&
      nvml.handle(bus_id, &d) != kNvmlSuccess)
    d = nullptr;
  cudaGetLastError();  // a failed query is no error of the program's
  handles[device] = d;
  return d;
}

}  // namespace

SensorReading read_sensors() {
  static const Nvml nvml;
  SensorReading r;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return r;
  }
  const NvmlDevice d = device_handle(nvml, device);
  if (!d) return r;
  unsigned mhz = 0, milliwatts = 0;
  if (nvml.clock && nvml.clock(d, kNvmlClockSm, &mhz) == kNvmlSuccess) r.sm_clock_mhz = mhz;
  if (nvml.power && nvml.power(d, &milliwatts) == kNvmlSuccess) r.power_w = milliwatts / 1000.0;
  return r;
}

}  // namespace sw
