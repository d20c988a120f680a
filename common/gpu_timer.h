// GPU timing with CUDA events.
//
//   sw::Timing t = sw::time_gpu(opt, [&] { kernel<<<g, b>>>(...); CHECK_LAUNCH(); });
//
// `before` (optional) runs before every run, warm-up and timed alike, outside
// the timed region: use it to restore an input that the kernel overwrites.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "check.h"
#include "cli.h"
#include "timing.h"

namespace sw {

template <class Run, class Before>
Timing time_gpu(const CommonOptions& opt, Run&& run, Before&& before) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < opt.warmup; ++i) {
    before();
    run();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int i = 0; i < opt.reps; ++i) {
    before();
    CUDA_CHECK(cudaEventRecord(start));
    run();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float elapsed = 0;
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
    ms.push_back(elapsed);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return summarize(ms);
}

template <class Run>
Timing time_gpu(const CommonOptions& opt, Run&& run) {
  return time_gpu(opt, run, [] {});
}

}  // namespace sw
