// The SM clock and the board power of the current GPU, read while it works.
//
//   const sw::SensorReading s = sw::read_sensors();   // NaN where there is no reading
//   const sw::PowerWindow p = sw::power_window([&] { launch(args); });
//
// measure() (common/bench/protocol.h) reads the SM clock once per timed run of a
// compute-bound row (Row::flops > 0), once the run is launched, and keeps the median: a
// compute-bound kernel's speed is the SM clock's, and the clock is what the board's power
// limit leaves it. Those readings do not show the limit: at chapter 21's largest shapes
// they read the boost clock where Nsight Compute counts far fewer cycles per second over
// the same kernel (docs/21's Evidence). So the table prints power_window's median clock,
// read over the same back-to-back runs as the power. Its power is power_window's: the row's run
// repeated back to back for at least kPowerWindowS, NVML's energy counter (the GPU's total
// energy since the driver loaded, nvmlDeviceGetTotalEnergyConsumption, in mJ; Volta and
// newer) read before and after, average W = delta energy / elapsed time. A timed block of
// 20 runs of 0.2 ms is too short for any NVML reading (the counter moves about every 10 ms,
// the power readings average over up to 1 s): read around it, it gave the idle board's
// power (135 W beside 600 TFLOP/s on an H100). Where the GPU has no energy counter,
// measure() keeps the median of read_sensors' power, one reading per timed run.
//
// NVML is the driver's management library (what nvidia-smi prints), opened at run time
// (dlopen of libnvidia-ml.so.1, installed with every driver): nothing links against it, so
// a machine without a driver still runs every program (exit 77), and a machine whose driver
// lacks NVML prints "-" in those columns. The GPU is found by its PCI bus id, the one name
// that CUDA and NVML share whatever CUDA_VISIBLE_DEVICES says.
//
// What read_sensors returns: the SM clock now, in MHz, and the GPU's power in W. The power
// is NVML's instantaneous reading (the field NVML_FI_DEV_POWER_INSTANT) where the driver
// offers it. Where it does not, it is nvmlDeviceGetPowerUsage's, which NVML documents as
// an average over 1 s on Ampere and newer GPUs (GA100, compute capability 8.0, and older
// GPUs excepted: instantaneous there). power_window_s says what a power reading averages
// over: 0 for an instantaneous one, 1 for the average over 1 s, a power window's length
// for power_window's; measure() records it beside power_w.
#pragma once

#include <cmath>
#include <vector>

namespace sw {

struct SensorReading {
  double sm_clock_mhz = NAN;    // the SM clock now
  double power_w = NAN;         // the GPU's power draw
  double power_window_s = NAN;  // what power_w averages over: 0 (now) or 1 (the last second)
};

// The current CUDA device's SM clock and power; NaN for a reading NVML does not give.
SensorReading read_sensors();

// The GPU's energy counter and the host's steady clock at one moment.
struct EnergyReading {
  double joules = NAN;   // NVML's total energy of the current device; NaN: no counter
  double seconds = NAN;  // std::chrono::steady_clock, in s
};
EnergyReading read_energy();

// A power window at least this long: the energy counter's steps (about 10 ms) are then
// within 4 % of what it counts.
constexpr double kPowerWindowS = 0.25;

// The average power between two readings: delta energy / delta time, or NaN where a
// reading has no counter, the window is shorter than kPowerWindowS, or the counter did not
// move (a driver that does not update it).
inline double average_power_w(const EnergyReading& before, const EnergyReading& after) {
  const double joules = after.joules - before.joules, seconds = after.seconds - before.seconds;
  if (!std::isfinite(joules) || !std::isfinite(seconds) || seconds < kPowerWindowS || joules <= 0)
    return NAN;
  return joules / seconds;
}

// What power_window measured: the average power, the window's length, the median SM clock
// over it (NaN each where NVML gives none).
struct PowerWindow {
  double power_w = NAN;
  double seconds = NAN;
  double sm_clock_mhz = NAN;
};

// power_window's state between runs (gpu_sensors.cpp; no CUDA types in this header).
struct PowerWindowState {
  EnergyReading before;                // the counter's first change after the window began
  EnergyReading after;                 // its first change after kPowerWindowS (NaN until then)
  bool armed = false;                  // kPowerWindowS has passed: the next step ends the window
  double last_joules = NAN;            // the counter when it had
  void* done[2] = {nullptr, nullptr};  // cudaEvent_t: the end of the last two runs
  int runs = 0;
  double next_clock_s = 0;       // when to read the SM clock next
  std::vector<double> mhz = {};  // its readings
};
// Starts a window: false (and nothing to end) where the GPU has no energy counter. The
// counter moves in steps (about every 10 to 100 ms): a window from one step to another
// measures the energy of exactly its time, where a window between two arbitrary moments
// is off by up to a step's energy at each end (on an H100, 890 W over 0.25 s on a 700 W
// board). So the window waits for the counter's next step to begin, and ends at the first
// step after kPowerWindowS, each wait at most kStepWaitS.
bool power_window_begin(PowerWindowState& w);
// After a run was launched: marks its end, waits for the run before it (one run stays
// queued, so the GPU never idles for the host), reads the clock every 10 ms; false once
// the window has lasted kPowerWindowS and the counter has stepped since (or kStepWaitS more).
bool power_window_more(PowerWindowState& w);
// Waits for the last run; the average power between the window's two counter steps.
PowerWindow power_window_end(PowerWindowState& w);

// `run` (one asynchronous run: launches, no synchronization) repeated back to back for at
// least kPowerWindowS; NaNs at once where the GPU has no energy counter.
template <class Run>
PowerWindow power_window(Run&& run) {
  PowerWindowState w;
  if (!power_window_begin(w)) return {};
  do run();
  while (power_window_more(w));
  return power_window_end(w);
}

}  // namespace sw
