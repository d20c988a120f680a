#include "gpu_sensors.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "common/check.h"

namespace sw {
namespace {

// The few NVML entry points used here, declared as the NVML API gives them (nvml.h): each
// returns nvmlReturn_t, 0 for success; a device is an opaque handle.
using NvmlDevice = struct NvmlDeviceOpaque*;
using InitFn = int (*)();
using HandleFn = int (*)(const char* pci_bus_id, NvmlDevice* device);
using ClockFn = int (*)(NvmlDevice device, int clock_type, unsigned* mhz);
using PowerFn = int (*)(NvmlDevice device, unsigned* milliwatts);
using EnergyFn = int (*)(NvmlDevice device, unsigned long long* millijoules);
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
constexpr int kBusIdChars = 32;  // "0000:65:00.0" and its end

// nvmlDeviceGetFieldValues(device, count, values): one query of `count` fields, each
// answered in its own nvmlFieldValue_t. The struct as NVML's reference documents it
// (Field Value Queries): fieldId, scopeId, timestamp (us), latencyUsec, valueType
// (nvmlValueType_t), nvmlReturn (this field's own result), value (a union of 8 bytes).
struct FieldValue {
  unsigned field_id;
  unsigned scope_id;  // 0: the GPU alone (1 would be the whole module, e.g. Grace + GPU)
  long long timestamp_us;
  long long latency_us;
  int value_type;
  int nvml_return;
  union {
    double d;
    unsigned u32;
    unsigned long long u64;
    long long i64;
    int i32;
    unsigned short u16;
  } value;
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");
using FieldsFn = int (*)(NvmlDevice device, int count, FieldValue* values);
// NVML_FI_DEV_POWER_INSTANT (nvml.h: "Current GPU power, supported on all architectures"),
// in milliwatts.
constexpr unsigned kFieldPowerInstant = 186;
// nvmlValueType_t: DOUBLE 0, UNSIGNED_INT 1, UNSIGNED_LONG 2, UNSIGNED_LONG_LONG 3,
// SIGNED_LONG_LONG 4, SIGNED_INT 5, UNSIGNED_SHORT 6.
double field_number(const FieldValue& f) {
  switch (f.value_type) {
    case 0:
      return f.value.d;
    case 1:
      return f.value.u32;
    case 2:
    case 3:
      return static_cast<double>(f.value.u64);
    case 4:
      return static_cast<double>(f.value.i64);
    case 5:
      return f.value.i32;
    case 6:
      return f.value.u16;
    default:
      return NAN;
  }
}

// NVML opened once per process; null members where it is missing.
struct Nvml {
  HandleFn handle = nullptr;
  ClockFn clock = nullptr;
  PowerFn power = nullptr;
  FieldsFn fields = nullptr;
  EnergyFn energy = nullptr;
  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    const auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
    if (!init || init() != kNvmlSuccess) return;
    handle = reinterpret_cast<HandleFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<ClockFn>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    power = reinterpret_cast<PowerFn>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    fields = reinterpret_cast<FieldsFn>(dlsym(lib, "nvmlDeviceGetFieldValues"));
    energy = reinterpret_cast<EnergyFn>(dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
  }
};

const Nvml& nvml() {
  static const Nvml opened;
  return opened;
}

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

// What nvmlDeviceGetPowerUsage averages over on CUDA device `device`: 1 s on Ampere and
// newer GPUs but GA100 (compute capability 8.0), none (0) on those and older ones. The
// real GPU's capability (not an emulated one's: common/device.cu): it is the board's.
double average_window_s(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return NAN;
  }
  return major * 10 + minor > 80 ? 1.0 : 0.0;
}

// The NVML handle of the current CUDA device (null if none).
NvmlDevice current_device(int* device) {
  if (cudaGetDevice(device) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return device_handle(nvml(), *device);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr double kClockEveryS = 0.01;  // a power window's SM clock readings, 10 ms apart
constexpr double kStepWaitS = 0.25;    // the longest wait for the energy counter to step

}  // namespace

SensorReading read_sensors() {
  const Nvml& nvml = sw::nvml();
  SensorReading r;
  int device = 0;
  const NvmlDevice d = current_device(&device);
  if (!d) return r;
  unsigned mhz = 0, milliwatts = 0;
  if (nvml.clock && nvml.clock(d, kNvmlClockSm, &mhz) == kNvmlSuccess) r.sm_clock_mhz = mhz;
  FieldValue now = {};
  now.field_id = kFieldPowerInstant;
  if (nvml.fields && nvml.fields(d, 1, &now) == kNvmlSuccess && now.nvml_return == kNvmlSuccess &&
      std::isfinite(field_number(now))) {
    r.power_w = field_number(now) / 1000.0;
    r.power_window_s = 0;
  } else if (nvml.power && nvml.power(d, &milliwatts) == kNvmlSuccess) {
    r.power_w = milliwatts / 1000.0;
    r.power_window_s = average_window_s(device);
  }
  return r;
}

EnergyReading read_energy() {
  EnergyReading r;
  int device = 0;
  const NvmlDevice d = current_device(&device);
  unsigned long long millijoules = 0;
  if (d && nvml().energy && nvml().energy(d, &millijoules) == kNvmlSuccess)
    r.joules = static_cast<double>(millijoules) / 1000.0;
  r.seconds = now_s();
  return r;
}

bool power_window_begin(PowerWindowState& w) {
  w.before = read_energy();
  if (!std::isfinite(w.before.joules)) return false;
  const double start = w.before.seconds;
  for (EnergyReading r = w.before; r.seconds - start < kStepWaitS; r = read_energy())
    if (r.joules != w.before.joules) {  // the counter stepped: the window starts here
      w.before = r;
      break;
    }
  for (void*& e : w.done) {
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    e = event;
  }
  w.next_clock_s = w.before.seconds;
  return true;
}

bool power_window_more(PowerWindowState& w) {
  CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(w.done[w.runs % 2])));
  if (w.runs > 0)
    CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(w.done[(w.runs - 1) % 2])));
  ++w.runs;
  const double now = now_s();
  if (now >= w.next_clock_s) {  // the run just launched is on the GPU
    const double mhz = read_sensors().sm_clock_mhz;
    if (std::isfinite(mhz)) w.mhz.push_back(mhz);
    w.next_clock_s = now + kClockEveryS;
  }
  if (now - w.before.seconds < kPowerWindowS) return true;
  const EnergyReading r = read_energy();  // the GPU still runs the queued run
  if (!w.armed) {  // the window has lasted long enough: wait for the counter's next step
    w.armed = true;
    w.last_joules = r.joules;
    return true;
  }
  if (r.joules != w.last_joules || now - w.before.seconds >= kPowerWindowS + kStepWaitS) {
    w.after = r;
    return false;
  }
  return true;
}

PowerWindow power_window_end(PowerWindowState& w) {
  CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(w.done[(w.runs - 1) % 2])));
  const EnergyReading after = std::isfinite(w.after.joules) ? w.after : read_energy();
  for (void* e : w.done) CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(e)));
  PowerWindow p;
  p.power_w = average_power_w(w.before, after);
  p.seconds = after.seconds - w.before.seconds;
  if (!w.mhz.empty()) {
    std::sort(w.mhz.begin(), w.mhz.end());
    p.sm_clock_mhz = w.mhz[w.mhz.size() / 2];
  }
  return p;
}

}  // namespace sw
