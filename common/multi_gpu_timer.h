// Timing work that spans several GPUs. CUDA events time one device, so the host
// clock times the work and a synchronize of every GPU in use.
//
//   sw::Timing t = sw::time_gpus(opt, k, 1, [&] { for (int g = 0; g < k; ++g) launch_on(g); });
#pragma once

#include <cuda_runtime_api.h>

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

// The host clock around `batch` calls back to back and a synchronize of GPUs
// 0 .. count-1, opt.warmup times untimed, then opt.reps times; per call.
template <class Call>
Timing time_gpus(const CommonOptions& opt, int count, int batch, Call&& call) {
  Timing t = time_cpu(opt.warmup, opt.reps, [&] {
    for (int b = 0; b < batch; ++b) call();
    sync_gpus(count);
  });
  t.ms_median /= batch;
  t.ms_min /= batch;
  return t;
}

}  // namespace sw
