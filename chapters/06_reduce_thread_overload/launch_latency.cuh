// Chapter 06's small sums, the tools: below 2^20 floats a sum costs its launches
// more than its bytes, so CUB, every step and an empty kernel (the floor) are timed
// three ways (Mode): alone, ten calls back to back, and the ten calls captured once
// into a CUDA graph. OverloadProblem::small_sums (overload_problem.cuh) measures them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/problems/reduce.h"
#include "common/report.h"

namespace ch06 {

namespace rd = sw::reduce;

constexpr int64_t kLatencyN = int64_t{1} << 20;  // where launches, not bytes, dominate
constexpr int64_t kSmallestN = int64_t{1} << 10,
                  kLargestN = int64_t{1} << 26;  // the small sums, x4 apart
const char* const kLatencyProblem = "sum-latency";

// --- three ways to time a sum ----------------------------------------------------------------

// kAlone: one call per timed run (it includes the launch latency); kBackToBack:
// kCallsPerRun calls between one pair of events; kGraph: those calls captured once
// into a CUDA graph, launched once per timed run. Each row's time is per sum.
enum class Mode { kAlone, kBackToBack, kGraph };
constexpr int kCallsPerRun = 10;

static_assert(kCallsPerRun == 10, "mode_name says graph-of-10");
inline const char* mode_name(Mode mode) {
  return mode == Mode::kBackToBack ? "back-to-back"
         : mode == Mode::kGraph    ? "graph-of-10"
                                   : "alone";
}

// A debug build's CHECK_LAUNCH synchronizes, which a stream capture forbids.
#ifdef NDEBUG
constexpr bool kGraphsWork = true;
#else
constexpr bool kGraphsWork = false;
#endif

// kCallsPerRun calls of launch(s), captured into a CUDA graph on a stream of its own
// (a capture records the launches and runs nothing). launch_graph launches `exec` on
// the default stream, where measure()'s events are.
class Graph {
 public:
  Graph(rd::Launch launch, rd::Sum s) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    s.stream = stream_;
    CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed));
    for (int i = 0; i < kCallsPerRun; ++i) launch(s);
    cudaGraph_t graph = nullptr;
    CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_CHECK(cudaGraphDestroy(graph));
  }
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (stream_) cudaStreamDestroy(stream_);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  cudaGraphExec_t exec = nullptr;

 private:
  cudaStream_t stream_ = nullptr;
};

inline void launch_graph(const Graph& g) { CUDA_CHECK(cudaGraphLaunch(g.exec, nullptr)); }

// A graph row's time per sum: one launch is kCallsPerRun sums.
inline sw::Result per_sum(sw::Result r) {
  r.timing.ms_median /= kCallsPerRun;
  r.timing.ms_min /= kCallsPerRun;
  return r;
}

// The floor: a launch that does nothing.
__global__ void empty_kernel() {}

inline void launch_empty(const rd::Sum& s) {
  empty_kernel<<<1, 1, 0, s.stream>>>();
  CHECK_LAUNCH();
}

// "n=2^20 back-to-back: two-pass 4.1 us, ..., cub 8.1 us, empty-kernel 3.6 us"
inline void small_sum_note(sw::Report& report, const std::string& what,
                           const std::vector<sw::Result>& rows) {
  std::string line = what + ":";
  for (const sw::Result& r : rows) {
    char part[96];
    std::snprintf(part, sizeof part, "%s %s %.1f us", &r == &rows.front() ? "" : ",",
                  r.variant.c_str(), 1e3 * r.timing.ms_median);
    line += part;
  }
  report.note(line);
}

}  // namespace ch06
