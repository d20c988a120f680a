// The SM clock and the board power of the current GPU, read while it works.
//
//   const sw::SensorReading s = sw::read_sensors();   // NaN where there is no reading
//
// measure() (common/bench/protocol.h) reads them once per timed run of a compute-bound
// row (Row::flops > 0), while the run is on the GPU, and reports their medians beside the
// row's TFLOP/s: a compute-bound kernel's speed is the SM clock's, and the clock is what
// the board's power limit leaves it. They come from NVML, the driver's management
// library (what nvidia-smi prints), which is opened at run time (dlopen of
// libnvidia-ml.so.1, installed with every driver): nothing links against it, so a machine
// without a driver still runs every program (exit 77), and a machine whose driver lacks
// NVML prints "-" in those columns. The GPU is found by its PCI bus id, the one name that
// CUDA and NVML share whatever CUDA_VISIBLE_DEVICES says.
//
// What NVML returns: the SM clock now, in MHz, and the GPU's power in W. The power is
// NVML's instantaneous reading (the field NVML_FI_DEV_POWER_INSTANT) where the driver
// offers it. Where it does not, it is nvmlDeviceGetPowerUsage's, which NVML documents as
// an average over 1 s on Ampere and newer GPUs (GA100, compute capability 8.0, and older
// GPUs excepted: instantaneous there), so a row whose timed runs are short reads part of
// the idle time before them too. power_window_s says which the reading is: 0 for an
// instantaneous one, 1 for the average over 1 s; measure() records it beside power_w.
#pragma once

#include <cmath>

namespace sw {

struct SensorReading {
  double sm_clock_mhz = NAN;    // the SM clock now
  double power_w = NAN;         // the GPU's power draw
  double power_window_s = NAN;  // what power_w averages over: 0 (now) or 1 (the last second)
};

// The current CUDA device's SM clock and power; NaN for a reading NVML does not give.
SensorReading read_sensors();

}  // namespace sw
