// Chapter 06's latency study: below 2^20 floats a sum costs its launches more than
// its bytes. CUB, every step and an empty kernel (the floor) are timed three ways
// (Mode): alone, ten calls back to back, and the ten calls captured once into a CUDA
// graph. The timed callable calls the launcher itself, or launches the graph of its
// calls; around it runs the protocol (sw::bench::measure, common/bench/protocol.h: poison, one run,
// check; time; check again). Included once, by 06_reduce_thread_overload.cu, whose
// main calls small_sums.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/gpu_timer.h"
#include "common/reduce_harness.h"
#include "common/report.h"

namespace ch06 {

namespace rd = sw::reduce;

constexpr int64_t kLatencyN = int64_t{1} << 20;  // where launches, not bytes, dominate
constexpr int64_t kSmallestN = int64_t{1} << 10,
                  kLargestN = int64_t{1} << 26;  // the small sums, x4 apart
const char* const kLatencyProblem = "sum-latency";

// --- three ways to time a sum ----------------------------------------------------------------

// kAlone: one call per timed run (common/gpu_timer.h: the stream drains between
// runs, so each includes the launch latency). kBackToBack: kCallsPerRun calls in a
// row between one pair of events, time / kCallsPerRun. kGraph: the same calls
// captured once into a CUDA graph, one graph launch per timed run, time / kCallsPerRun.
enum class Mode { kAlone, kBackToBack, kGraph };
constexpr int kCallsPerRun = 10;

static_assert(kCallsPerRun == 10, "mode_name says graph-of-10");
inline const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::kBackToBack:
      return "back-to-back";
    case Mode::kGraph:
      return "graph-of-10";
    default:
      return "alone";
  }
}

// A debug build's CHECK_LAUNCH synchronizes, which a stream capture forbids.
#ifdef NDEBUG
constexpr bool kGraphsWork = true;
#else
constexpr bool kGraphsWork = false;
#endif

// kCallsPerRun calls of launch(s), captured into a CUDA graph on a stream of its own
// (a capture records the launches and runs nothing). `exec` is launched on the
// default stream, where gpu_timer.h's events are.
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

// launch(s) timed in `mode`: measure(calls, run) times run(), which makes `calls`
// sums, and returns the row, its time per sum. The timed callable calls the
// launcher (time_gpu -> the lambda -> launch -> <<<>>>) or launches the graph.
template <class Measure>
sw::Result in_mode(Mode mode, rd::Launch launch, const rd::Sum& s, Measure measure) {
  if (mode == Mode::kAlone) return measure(1, [&] { launch(s); });
  if (mode == Mode::kBackToBack)
    return measure(kCallsPerRun, [&] {
      for (int i = 0; i < kCallsPerRun; ++i) launch(s);
    });
  const Graph graph(launch, s);
  return measure(kCallsPerRun, [&] { CUDA_CHECK(cudaGraphLaunch(graph.exec, nullptr)); });
}

// --- the floor: a launch that does nothing ---------------------------------------------------

__global__ void empty_kernel() {}

inline void launch_empty(const rd::Sum& s) {
  empty_kernel<<<1, 1, 0, s.stream>>>();
  CHECK_LAUNCH();
}

// Its row: n 0, no bytes, always ok.
inline sw::Result time_empty(const sw::CommonOptions& opt, Mode mode) {
  return in_mode(mode, launch_empty, rd::Sum{}, [&](int calls, auto run) {
    return sw::Result{"empty-kernel", 0, 0.0, sw::bench::per_call(sw::time_gpu(opt, run), calls),
                      true};
  });
}

// --- the small sums --------------------------------------------------------------------------

// "n=2^20 back-to-back: two-pass 4.1 us, ..., cub 8.1 us, empty-kernel 3.6 us"
inline void small_sum_note(rd::Setup& s, const std::string& what,
                           const std::vector<sw::Result>& rows) {
  std::string line = what + ":";
  for (const sw::Result& r : rows) {
    char part[96];
    std::snprintf(part, sizeof part, "%s %s %.1f us", &r == &rows.front() ? "" : ",",
                  r.variant.c_str(), 1e3 * r.timing.ms_median);
    line += part;
  }
  s.report.note(line);
}

// The small sum. At 2^20 floats (4 MB, inside L2 after the first run) the launches
// dominate: the standard rows of CUB and `steps` (problem "sum", note "n=2^20", each
// call alone). Then, problem "sum-latency": an empty kernel's launch (role "lesson"),
// and CUB and every step from 2^10 to 2^26 floats (role "sweep"), each timed back to
// back and in a CUDA graph of ten sums; the note says the mode.
inline void small_sums(rd::Setup& s, const std::vector<rd::Step>& steps, int bpsm) {
  std::vector<Mode> modes = {Mode::kAlone, Mode::kBackToBack, Mode::kGraph};
  if (!kGraphsWork) {
    modes.pop_back();
    s.report.note(
        "no graph-of-10 rows: in a debug build CHECK_LAUNCH synchronizes, which a capture forbids");
  }
  std::map<Mode, sw::Result> empty;
  for (Mode mode : modes) {
    sw::Result r = time_empty(s.opt, mode);
    r.role = "lesson";
    r.problem = kLatencyProblem;
    r.note = mode_name(mode);
    s.report.add(r);
    empty[mode] = r;
  }
  const rd::Config c{s.block, bpsm};
  for (int64_t n = kSmallestN; n <= kLargestN; n *= 4) {
    const rd::Input in = rd::make_input(n, s.opt.seed);
    const rd::Sum sum = in.sum(c);
    for (Mode mode : modes) {
      if (mode == Mode::kAlone && n != kLatencyN) continue;
      std::vector<sw::Result> rows = {in_mode(mode, rd::launch_cub, sum, [&](int calls, auto run) {
        return rd::measure_cub_runs(s.opt, in, calls, run);
      })};
      for (const rd::Step& step : steps)
        rows.push_back(in_mode(mode, step.launch, sum, [&](int calls, auto run) {
          return rd::measure_runs(s.opt, step, in, c, calls, run);
        }));
      for (sw::Result& r : rows) {
        if (mode == Mode::kAlone) {
          r.note = "n=2^20";  // roles vendor and step, as at 2^28
        } else {
          r.role = "sweep";
          r.problem = kLatencyProblem;
          r.note = mode_name(mode);
        }
        s.report.add(r);
      }
      rows.push_back(empty[mode]);
      if (n == kLatencyN) small_sum_note(s, std::string("n=2^20 ") + mode_name(mode), rows);
    }
  }
}

}  // namespace ch06
