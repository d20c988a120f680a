// Timing work that spans several GPUs: chapter 14's protocol. CUDA events time one
// device (sw::bench::measure, common/bench/protocol.h, times one GPU's rows), so the
// host clock times the work and a synchronize of every GPU in use.
//
//   sw::Timing t = sw::time_gpus(opt, k, 1, launch_sharded_sum, m, s);
//
// time_gpus calls the launcher itself, and the launcher holds the <<<>>> (or the
// library call); work of no launcher of its own (a peer copy) is a lambda with no
// arguments.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <vector>

#include "common/check.h"
#include "common/cli.h"
#include "common/timing.h"

namespace sw {

// Waits for GPUs 0 .. count-1 to finish everything queued, then makes GPU 0 current.
inline void sync_gpus(int count) {
  for (int g = 0; g < count; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaSetDevice(0));
}

// A run is `calls` calls of launch(args...) back to back and a synchronize of GPUs
// 0 .. count-1, timed by the host clock: opt.warmup runs untimed, then opt.reps
// timed; the median and the minimum, per call.
template <class Launch, class... Args>
Timing time_gpus(const CommonOptions& opt, int count, int calls, Launch&& launch, Args&&... args) {
  std::vector<double> ms;
  for (int k = 0; k < opt.warmup + opt.reps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) launch(args...);
    sync_gpus(count);
    const auto t1 = std::chrono::steady_clock::now();
    if (k >= opt.warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  Timing t = summarize(ms);
  t.ms_median /= calls;
  t.ms_min /= calls;
  return t;
}

}  // namespace sw
