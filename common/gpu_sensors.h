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
// What NVML returns: the SM clock now, in MHz, and the board's power in W as the driver
// averages it (over about a second on recent boards), so a row whose timed runs are short
// reads part of the idle time between them too.
#pragma once

#include <cmath>

namespace sw {

struct SensorReading {
  double sm_clock_mhz = NAN;  // the SM clock now
  double power_w = NAN;       // the board's power draw
};

// The current CUDA device's SM clock and power; NaN for a reading NVML does not give.
SensorReading read_sensors();

}  // namespace sw
