// Chapter 14, Part 3: Parts 1 and 2's problems across processes (see ranks.h), with their
// kernels and checks: --verify-only's sweep, the measurements, and the loop of the fault
// trials. Every rank checks its own results; all_ranks() adds up the failures, so that every
// rank's report (rank 0's is printed) counts every rank's checks.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "chapters/06_reduce_thread_overload/reduce_overload.cuh"  // chapter 06's kernel, reused
#include "chapters/14_multi_gpu/multi_gpu_checks.h"                // Parts 1 and 2's checks
#include "chapters/14_multi_gpu/sharded_sum.h"                     // Part 1's block and grid sizes
#include "common/check.h"
#include "common/timing.h"
#include "ranks.h"

namespace ch14 {
namespace {

std::string ranks_text(const Rank& rank) { return "ranks=" + std::to_string(rank.env.size); }

// How many ranks found their result wrong (`wrong`: this rank's message, "" when right). A
// failing rank other than 0 prints its own detail (the launcher prefixes it with its rank).
int ranks_wrong(Rank& rank, const std::string& what, const std::string& wrong) {
  if (!wrong.empty() && rank.env.rank != 0)
    std::fprintf(stderr, "rank %d: FAIL %s: %s\n", rank.env.rank, what.c_str(), wrong.c_str());
  return static_cast<int>(rank.all_ranks(wrong.empty() ? 0 : 1, ncclSum));
}

// One check, on every rank: PASS where no rank failed.
void check_all(Rank& rank, sw::Report& report, const std::string& what, const std::string& wrong) {
  const int bad = ranks_wrong(rank, what, wrong);
  report.check(
      bad == 0, what,
      bad == 0 ? "" : std::to_string(bad) + " rank(s) wrong" + (wrong.empty() ? "" : "; " + wrong));
}

// This rank's shard of Part 1's array, its sum with Part 1's kernels, and the total.
struct Shard {
  int64_t first = 0, size = 0;
  int per_sm = gpu_sum_blocks_per_sm();
  sw::DeviceBuffer<float> x, partials{gpu_sum_partials(per_sm)}, sum{1}, total{1};
  Shard(const Rank& rank, int64_t n) : x(std::max<int64_t>(sw::ceil_div(n, rank.env.size), 1)) {}
  void split(const Rank& rank, int64_t n, uint64_t seed) {
    const int k = rank.env.size, r = rank.env.rank;
    first = n * r / k;
    size = n * (r + 1) / k - first;
    launch_fill(rank.device, x.get(), first, size, seed, Data::kRandom);
  }
  void poison() {
    sw::poison(sum.get(), sizeof(float));
    sw::poison(total.get(), sizeof(float));
  }
  // The total against the reference of all n floats; the error bound's depth: the deepest
  // rank's sum, then the all-reduce's additions.
  std::string check(Rank& rank, const Ref& ref, int64_t n) {
    const auto depth = static_cast<int64_t>(rank.all_ranks(gpu_sum_depth(size, per_sm), ncclMax));
    return check_shard_results({sw::read(total.get())}, ref, depth + rank.env.size, n);
  }
};

// shard-nccl-allreduce: this rank's sum (chapter 06's two passes), then one all-reduce of one
// float.
void launch_shard_sum(Rank& rank, Shard& s) {
  const int64_t blocks = gpu_sum_grid(s.size, s.per_sm);
  ch06::reduce_overload<kSumBlock, ch06::Finish::kPartials>
      <<<blocks, kSumBlock, 0, rank.streams[0]>>>(s.x.get(), s.size, s.partials.get());
  CHECK_LAUNCH();
  ch06::reduce_overload<kSumBlock, ch06::Finish::kPartials>
      <<<1, kSumBlock, 0, rank.streams[0]>>>(s.partials.get(), blocks, s.sum.get());
  CHECK_LAUNCH();
  rank.nccl(
      ncclAllReduce(s.sum.get(), s.total.get(), 1, ncclFloat, ncclSum, rank.comm, rank.streams[0]),
      "ncclAllReduce of the shards' sums");
}

// nccl-allreduce-scalar: NCCL's all-reduce of this rank's sum (already in place) alone.
void launch_nccl_scalar(Rank& rank, Shard& s) {
  rank.nccl(
      ncclAllReduce(s.sum.get(), s.total.get(), 1, ncclFloat, ncclSum, rank.comm, rank.streams[0]),
      "ncclAllReduce of one float");
}

// nccl-allreduce across processes: one ncclAllReduce of v.n floats.
void launch_nccl_allreduce(Rank& rank, IpcRing& v) {
  rank.nccl(ncclAllReduce(v.send.get(), v.recv.get(), v.n, ncclFloat, ncclSum, rank.comm,
                          rank.streams[0]),
            "ncclAllReduce");
}

// ipc-ring where `ring`, else nccl-allreduce.
const RankStep& all_reduce(bool ring) { return kRankSteps[ring ? 0 : 1]; }

// A poisoned run of every rank, checked (this rank's output); every rank's input filled first.
VectorCheck run_checked(Rank& rank, IpcRing& v, const RankStep& a, Data d, uint64_t seed) {
  launch_fill(rank.device, v.send.get(), 0, v.n, vector_seed(seed, rank.env.rank), d);
  sw::poison(v.recv.get(), static_cast<size_t>(v.n) * sizeof(float));
  rank.all_ranks(0, ncclSum);  // every rank's input is in place before any rank reads it
  a.launch(rank, v);
  rank.wait(a.name);
  return check_vectors({{rank.device, rank.env.rank, v.recv.get()}}, rank.env.size, v.n, d, seed);
}

// Chapter 14's timing (sw::time_gpus) across processes: a run is `calls` calls of
// launch(args...) back to back, then the wait; per call, the slowest rank's median.
template <class Launch, class... Args>
sw::Timing time_ranks(Rank& rank, const sw::CommonOptions& opt, int calls, Launch&& launch,
                      Args&&... args) {
  std::vector<double> ms;
  for (int k = 0; k < opt.warmup + opt.reps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) launch(args...);
    rank.wait("a timed run");
    const auto t1 = std::chrono::steady_clock::now();
    if (k >= opt.warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  sw::Timing t = sw::summarize(ms);
  t.ms_median = rank.all_ranks(t.ms_median, ncclMax) / calls;
  t.ms_min = rank.all_ranks(t.ms_min, ncclMax) / calls;
  return t;
}

}  // namespace

const std::vector<RankStep> kRankSteps = {
    {"ipc-ring", launch_ipc_ring, {}, "step", kSameBits},
    {"nccl-allreduce", launch_nccl_allreduce, {}, "vendor"},
};

void verify_ranks(Rank& rank, sw::Report& report, uint64_t seed, IpcRing& v, bool ring_ok) {
  const std::string ranks = ranks_text(rank);
  const std::vector<int64_t> sums = {1, 7, 1000, 1000003, (int64_t{1} << 24) + 1};
  Shard shard(rank, sums.back());
  for (int64_t n : sums) {
    shard.split(rank, n, seed);
    shard.poison();
    launch_shard_sum(rank, shard);
    rank.wait("shard-nccl-allreduce");
    check_all(rank, report, "shard-nccl-allreduce n=" + std::to_string(n) + " " + ranks,
              shard.check(rank, reference(seed, 0, n), n));
  }
  const std::vector<int64_t> sizes = {1, 7, 1000, 1000003, kVerifyFloats};
  const bool peer = v.peer_reads;
  for (int64_t n : sizes)
    for (Data d : {Data::kExact, Data::kRandom})
      for (bool ring : {false, true}) {
        if (ring && !ring_ok) continue;
        const bool vary = ring && rank.env.size > 1;  // one rank: the ring is a copy
        for (bool reads : vary ? std::vector<bool>{true, false} : std::vector<bool>{true})
          for (int slices :
               vary ? std::vector<int>{1, 3, int(v.joined.size())} : std::vector<int>{1}) {
            v.n = n;
            v.peer_reads = reads;
            v.slices = slices;
            const VectorCheck c = run_checked(rank, v, all_reduce(ring), d, seed);
            std::string what = std::string(all_reduce(ring).name) + " n=" + std::to_string(n) +
                               " " + ranks + " " + data_name(d);
            if (ring)
              what += std::string(reads ? " peer-loads" : " copies") +
                      " slices=" + std::to_string(slices);
            check_all(rank, report, what, c.first);
          }
      }
  if (!ring_ok) return;
  v.n = 1000003;  // the ring adds in a fixed order: the same bits every run
  v.peer_reads = peer;
  v.slices = 1;
  const VectorCheck first = run_checked(rank, v, all_reduce(true), Data::kRandom, seed);
  int differing = 0;
  for (int r = 1; r < kRepeatRuns; ++r)
    differing += run_checked(rank, v, all_reduce(true), Data::kRandom, seed).hash != first.hash;
  check_all(
      rank, report,
      "ipc-ring bitwise identical over " + std::to_string(kRepeatRuns) + " runs n=1000003 " + ranks,
      first.wrong ? first.first
      : differing ? std::to_string(differing) + " runs gave other bits"
                  : "");
}

void bench_ranks(Rank& rank, sw::Report& report, const sw::CommonOptions& opt, int64_t n,
                 IpcRing& v, bool ring_ok) {
  const uint64_t seed = static_cast<uint64_t>(opt.seed);
  const int k = rank.env.size;
  // Part 1 across processes: the sharded sum at --n, and NCCL's all-reduce of one float alone.
  Shard shard(rank, n);
  shard.split(rank, n, seed);
  shard.poison();
  launch_shard_sum(rank, shard);
  rank.wait("shard-nccl-allreduce");
  const Ref ref = reference(seed, 0, n);
  const std::string first = shard.check(rank, ref, n);
  const sw::Timing t = time_ranks(rank, opt, 1, launch_shard_sum, rank, shard);
  const std::string last = shard.check(rank, ref, n);
  sw::Result r{
      "shard-nccl-allreduce", n, static_cast<double>(n) * sizeof(float), t, true, "vendor"};
  r.problem = "sharded-sum";
  r.note = "strong " + ranks_text(rank);
  r.extra["ranks"] = k;
  r.ok = ranks_wrong(rank, r.variant + " " + r.note, first.empty() ? last : first) == 0;
  report.add(r);
  sw::Result scalar{"nccl-allreduce-scalar", k, 0, {}, true, "lesson"};
  scalar.timing = time_ranks(rank, opt, 1, launch_nccl_scalar, rank, shard);
  scalar.problem = "sharded-sum-latency";
  scalar.note = ranks_text(rank);
  scalar.extra["ranks"] = k;
  scalar.ok = ranks_wrong(rank, scalar.variant + " " + scalar.note, shard.check(rank, ref, n)) == 0;
  report.add(scalar);

  // Part 2 across processes: the all-reduce at Part 2's sizes; the GB/s column is busbw.
  const double bus_factor = 2.0 * (k - 1) / k;
  for (int64_t bytes : kAllReduceBytes)
    for (bool ring : {true, false}) {
      if (ring && !ring_ok) continue;
      v.n = bytes / static_cast<int64_t>(sizeof(float));
      const int batch = bytes <= kBatchMaxBytes ? kBatchCalls : 1;
      const RankStep& step = all_reduce(ring);
      const VectorCheck c1 = run_checked(rank, v, step, Data::kRandom, seed);
      const sw::Timing timing = time_ranks(rank, opt, batch, step.launch, rank, v);
      const VectorCheck c2 =
          check_vectors({{rank.device, rank.env.rank, v.recv.get()}}, k, v.n, Data::kRandom, seed);
      const std::string wrong = c1.wrong   ? c1.first
                                : c2.wrong ? c2.first
                                : same_bits(step) && c1.hash != c2.hash
                                    ? "the last run gave other bits"
                                    : "";
      sw::Result a{step.name, v.n, bytes * bus_factor, timing, true, step.role};
      a.problem = "all-reduce";
      a.note = ranks_text(rank);
      a.extra = {{"ranks", k},
                 {"bytes", bytes},
                 {"calls", batch},
                 {"algbw_gbps", sw::gbps(bytes, timing.ms_median)},
                 {"busbw_gbps", sw::gbps(bytes * bus_factor, timing.ms_median)}};
      if (ring) {
        a.extra["slices"] = v.slices;
        a.extra["peer_reads"] = v.peer_reads;
      }
      a.ok = ranks_wrong(rank, a.variant + " n=" + std::to_string(v.n) + " " + a.note, wrong) == 0;
      if (!wrong.empty()) report.note(a.variant + " " + a.note + ": " + wrong);
      report.add(a);
    }
  if (k == 1) report.note("ranks=1: an all-reduce of one vector is a copy; no bus, so busbw is 0");
}

void loop_ranks(Rank& rank, sw::Report& report, int64_t iterations, uint64_t seed, IpcRing& v) {
  v.n = kLoopFloats;
  launch_fill(rank.device, v.send.get(), 0, v.n, vector_seed(seed, rank.env.rank), Data::kExact);
  rank.all_ranks(0, ncclSum);
  std::fprintf(stderr, "rank %d: a loop of %lld all-reduces of 64 MiB started\n", rank.env.rank,
               static_cast<long long>(iterations));
  std::fflush(stderr);
  for (int64_t i = 0; i < iterations; ++i) {
    launch_nccl_allreduce(rank, v);
    rank.wait("all-reduce " + std::to_string(i) + " of the loop");
  }
  const VectorCheck c = check_vectors({{rank.device, rank.env.rank, v.recv.get()}}, rank.env.size,
                                      v.n, Data::kExact, seed);
  check_all(rank, report,
            "nccl-allreduce loop of " + std::to_string(iterations) + " " + ranks_text(rank),
            c.first);
}

}  // namespace ch14
