// Chapter 14, Part 2's benchmark: the peer copies as the ceiling (problem "p2p"), the
// ring's sweep of slices, and every all-reduce at every size on 1, 2, 4, ..., K GPUs.
// The GB/s column of an all-reduce row is the bus bandwidth (nccl-tests' busbw).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "all_reduce.h"
#include "common/check.h"
#include "common/multi_gpu_timer.h"
#include "common/report.h"
#include "common/timing.h"
#include "multi_gpu_checks.h"

namespace ch14 {
namespace {

constexpr int64_t kP2pBytes = 1024 * kMiB;     // the peer copies of the ceiling
constexpr int64_t kMinSliceBytes = 16 * kMiB;  // the ring's sweep: no slice smaller than this

// Problem "p2p": a 1 GiB peer copy between every ordered pair, one way; then both ways at once.
// Returns the one-way GB/s of every pair, [src][dst].
std::vector<std::vector<double>> bench_p2p(Machine& m, const Vectors& v, sw::Report& report,
                                           const sw::CommonOptions& opt) {
  const int64_t n = kP2pBytes / sizeof(float);
  const size_t bytes = kP2pBytes;
  std::vector<std::vector<double>> one_way(m.k, std::vector<double>(m.k, 0.0));
  for (int src = 0; src < m.k; ++src)
    for (int dst = 0; dst < m.k; ++dst) {
      if (src == dst) continue;
      sw::Result r{"peer-copy", n, static_cast<double>(bytes), {}, true, "ceiling"};
      r.problem = "p2p";
      r.note = "one-way";
      r.extra = {{"src", src}, {"dst", dst}, {"direction", 1}};
      r.timing = sw::time_gpus(opt, m.k, 1, [&] {
        CUDA_CHECK(cudaSetDevice(src));
        CUDA_CHECK(cudaMemcpyPeerAsync(v.recv[dst].get(), dst, v.send[src].get(), src, bytes,
                                       m.stream[src][0]));
      });
      report.add(r);
      one_way[src][dst] = sw::gbps(r.bytes, r.timing.ms_median);
    }
  for (int a = 0; a < m.k; ++a)
    for (int b = a + 1; b < m.k; ++b) {
      sw::Result r{"peer-copy", n, 2.0 * bytes, {}, true, "ceiling"};
      r.problem = "p2p";
      r.note = "both-ways";
      r.extra = {{"src", a}, {"dst", b}, {"direction", 2}};
      r.timing = sw::time_gpus(opt, m.k, 1, [&] {
        CUDA_CHECK(cudaSetDevice(a));
        CUDA_CHECK(
            cudaMemcpyPeerAsync(v.recv[b].get(), b, v.send[a].get(), a, bytes, m.stream[a][0]));
        CUDA_CHECK(cudaSetDevice(b));
        CUDA_CHECK(
            cudaMemcpyPeerAsync(v.recv[a].get(), a, v.send[b].get(), b, bytes, m.stream[b][0]));
      });
      report.add(r);
    }
  CUDA_CHECK(cudaSetDevice(0));
  return one_way;
}

// The ring's ceiling on GPUs 0 .. count-1: its slowest link, g-1 -> g.
double ring_ceiling(const std::vector<std::vector<double>>& one_way, int count) {
  double slowest = INFINITY;
  for (int g = 0; g < count; ++g) slowest = std::min(slowest, one_way[ring_prev(g, count)][g]);
  return slowest;
}

// One all-reduce measured: a poisoned run, checked; `batch` calls back to back per timed run; the
// last result checked again (bit for bit against the first for a fixed order) unless `once`.
sw::Result measure_all_reduce(Machine& m, const Vectors& v, const Step<const Vectors>& a,
                              const sw::CommonOptions& opt, uint64_t seed, int batch, bool once,
                              sw::Report& report) {
  const VectorCheck first = run_checked(m, v, a, Data::kRandom, seed);
  const sw::Timing t = sw::time_gpus(opt, v.count, batch, a.launch, m, v);
  const VectorCheck last = once ? first : check_outputs(v, Data::kRandom, seed);
  const bool ok = first.wrong == 0 && last.wrong == 0 && (!same_bits(a) || first.hash == last.hash);
  if (!ok)
    report.note(std::string(a.name) + " " + gpus_text(v.count) + ": " +
                (first.wrong ? first.first : last.first));
  // The GB/s column is the bus bandwidth: bytes = size x 2(K-1)/K (0 on one GPU: no bus).
  const double size = static_cast<double>(v.n) * sizeof(float),
               bus_factor = 2.0 * (v.count - 1) / v.count;
  sw::Result r{a.name, v.n, size * bus_factor, t, ok, a.role};
  r.problem = "all-reduce";
  r.note = gpus_text(v.count);
  r.extra = {{"gpus", v.count},
             {"bytes", size},
             {"calls", batch},
             {"algbw_gbps", sw::gbps(size, t.ms_median)},
             {"busbw_gbps", sw::gbps(size * bus_factor, t.ms_median)}};
  if (is_ring(a)) {
    r.extra["slices"] = v.slices;
    r.extra["peer_reads"] = v.peer_reads;
  }
  return r;
}

// The ring's sweep at this size: 1, 2, 4, 8 slices (none under kMinSliceBytes), with peer loads
// (rows ring-sweep, where every pair has peer access) and with copies (ring-copy-sweep). Returns
// the best slice count of the read mode the ring row uses.
int sweep_ring(Machine& m, Vectors& v, const sw::CommonOptions& opt, uint64_t seed, int batch,
               bool peer_row, sw::Report& report) {
  const Step<const Vectors>* ring = nullptr;
  for (const Step<const Vectors>& a : kAllReduceSteps)
    if (is_ring(a)) ring = &a;
  int best = 1;
  double best_gbps = -1;
  for (bool peer : {true, false}) {
    if (peer && !v.peer_ok) continue;
    v.peer_reads = peer;
    for (int slices : kSliceSweep) {
      const int64_t slice_bytes =
          v.n * static_cast<int64_t>(sizeof(float)) / (v.count * int64_t{slices});
      if (slices > 1 && slice_bytes < kMinSliceBytes) continue;
      v.slices = slices;
      sw::Result r = measure_all_reduce(m, v, *ring, opt, seed, batch, /*once=*/true, report);
      r.variant = peer ? "ring-sweep" : "ring-copy-sweep";
      r.role = "sweep";
      report.add(r);
      const double gbps = sw::gbps(r.bytes, r.timing.ms_median);
      if (peer == peer_row && gbps > best_gbps) {
        best_gbps = gbps;
        best = slices;
      }
    }
  }
  return best;
}

}  // namespace

// Part 2: the peer copies, then every all-reduce at every size on 1, 2, 4, ..., K GPUs; the ring
// at --slices, or at the best point of its sweep.
void bench_all_reduce(Machine& m, sw::Report& report, const sw::CommonOptions& opt, bool force_copy,
                      int slices) {
  const uint64_t seed = static_cast<uint64_t>(opt.seed);
  Vectors v = make_vectors(m, m.k, kAllReduceBytes.back() / static_cast<int64_t>(sizeof(float)));
  const bool peer_row = v.peer_ok && !force_copy;  // the ring row's read mode
  const std::vector<std::vector<double>> one_way =
      m.k > 1 ? bench_p2p(m, v, report, opt) : std::vector<std::vector<double>>{};
  for (int count : gpu_counts(m.k)) {
    v.count = count;
    std::map<std::string, double> busbw;  // at the largest size
    for (int64_t size : kAllReduceBytes) {
      v.n = size / static_cast<int64_t>(sizeof(float));
      fill_vectors(v, Data::kRandom, seed);
      const int batch = size <= kBatchMaxBytes ? kBatchCalls : 1;
      const int ring_slices = slices      ? slices
                              : count > 1 ? sweep_ring(m, v, opt, seed, batch, peer_row, report)
                                          : 1;
      for (const Step<const Vectors>& a : kAllReduceSteps) {
        v.peer_reads = peer_row;
        v.slices = ring_slices;
        const sw::Result r = measure_all_reduce(m, v, a, opt, seed, batch, /*once=*/false, report);
        report.add(r);
        busbw[a.name] = r.extra.at("busbw_gbps");
      }
    }
    if (count == 1) {
      report.note("gpus=1: an all-reduce of one vector is a copy; no bus, so busbw is 0 (n/a)");
      continue;
    }
    const double ceiling = ring_ceiling(one_way, count);
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s at 1 GiB: busbw naive-gather %.0f, ring %.0f, nccl-allreduce %.0f GB/s; "
                  "ring/nccl %.2f; "
                  "nccl / the ring's slowest one-way peer copy (%.0f GB/s) %.2f",
                  gpus_text(count).c_str(), busbw["naive-gather"], busbw["ring"],
                  busbw["nccl-allreduce"], busbw["ring"] / busbw["nccl-allreduce"], ceiling,
                  busbw["nccl-allreduce"] / ceiling);
    report.note(line);
  }
}

}  // namespace ch14
