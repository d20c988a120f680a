// Chapter 14, Part 1: a sum sharded across GPUs (see sharded_sum.h). Each GPU sums
// its shard with chapter 06's two-pass kernel (reduce_overload), then the K sums
// are combined on the host or with one ncclAllReduce.
#include <algorithm>
#include <cstdio>
#include <map>

// Chapter 06's kernel, reused, not copied.
#include "chapters/06_reduce_thread_overload/reduce_overload.cuh"
#include "common/check.h"
#include "common/multi_gpu_timer.h"
#include "common/nccl_check.h"
#include "common/verify.h"
#include "multi_gpu_checks.h"
#include "sharded_sum.h"

namespace ch14 {
namespace {

using ch06::Finish;
using ch06::reduce_overload;

constexpr int64_t kLatencyN = int64_t{1} << 20;  // Part 1 at a size where fixed costs dominate

// The fixed costs, each alone on the s.count GPUs (problem "sharded-sum-latency").
// empty-launch, the floor of every launch: a kernel that does nothing, on every GPU.
__global__ void empty_kernel() {}
void launch_empty(Machine& m, Shards& s) {
  for (int g = 0; g < s.count; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    empty_kernel<<<1, 1, 0, m.stream[g][0]>>>();
    CHECK_LAUNCH();
  }
}

// host-combine-scalar: every GPU's sum (already in place) copied to the host and added there.
void launch_host_combine(Machine& m, Shards& s) {
  for (int g = 0; g < s.count; ++g)
    CUDA_CHECK(cudaMemcpyAsync(&s.host_sums[g], s.sum[g].get(), sizeof(float),
                               cudaMemcpyDeviceToHost, m.stream[g][0]));
  double total = 0;
  for (int g = 0; g < s.count; ++g) {
    CUDA_CHECK(cudaStreamSynchronize(m.stream[g][0]));
    total += s.host_sums[g];
  }
  s.host_total = total;
}

// nccl-allreduce-scalar: NCCL's all-reduce of every GPU's sum (already in place), one float each.
void launch_nccl_combine(Machine& m, Shards& s) {
  const std::vector<ncclComm_t>& comm = m.comm(s.count);
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < s.count; ++g)
    NCCL_CHECK(ncclAllReduce(s.sum[g].get(), s.total[g].get(), 1, ncclFloat, ncclSum, comm[g],
                             m.stream[g][0]));
  NCCL_CHECK(ncclGroupEnd());
}

// Where the K shard sums are added: on the host, or on every GPU by NCCL.
enum class TotalOn { kHost, kNccl };

// shard-host-combine and shard-nccl-allreduce: every GPU sums its shard with chapter 06's two
// passes (the block sums, then one block adds them). kHost: each GPU copies its sum to the host,
// which adds them (host-combine-scalar's launcher). kNccl: one all-reduce of one float per GPU
// (nccl-allreduce-scalar's).
template <TotalOn kTotal>
void launch_sharded_sum(Machine& m, Shards& s) {
  for (int g = 0; g < s.count; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    const int64_t blocks = gpu_sum_grid(s.size[g], s.sums_per_sm[g]);
    reduce_overload<kSumBlock, Finish::kPartials>
        <<<blocks, kSumBlock, 0, m.stream[g][0]>>>(s.x[g].get(), s.size[g], s.partials[g].get());
    CHECK_LAUNCH();
    reduce_overload<kSumBlock, Finish::kPartials>
        <<<1, kSumBlock, 0, m.stream[g][0]>>>(s.partials[g].get(), blocks, s.sum[g].get());
    CHECK_LAUNCH();
  }
  if (kTotal == TotalOn::kHost)
    launch_host_combine(m, s);
  else
    launch_nccl_combine(m, s);
}

// A poisoned run, checked; the timed runs; the last one checked again (bit for bit against the
// first for the host combine, whose order is fixed).
sw::Result measure_sum(Machine& m, Shards& s, const Step<Shards>& c, const Ref& ref,
                       const sw::CommonOptions& opt) {
  const int64_t n = s.n(), depth = sum_depth(s);
  s.poison();
  c.launch(m, s);
  sw::sync_gpus(s.count);
  const std::vector<double> first = shard_results(c, s);
  const sw::Timing t = sw::time_gpus(opt, s.count, 1, c.launch, m, s);
  const std::vector<double> last = shard_results(c, s);
  const bool ok = check_shard_results(first, ref, depth, n).empty() &&
                  check_shard_results(last, ref, depth, n).empty() &&
                  (!same_bits(c) || sw::same_bits(first[0], last[0]));
  sw::Result r{c.name, n, static_cast<double>(n) * sizeof(float), t, ok, c.role};
  r.extra["gpus"] = s.count;
  r.extra["shard"] = static_cast<double>(s.size[0]);
  r.extra["rel_error"] = sw::check_sum(last[0], ref.sum, ref.abs_sum, depth, n).rel_error;
  return r;
}

// "strong: shard-host-combine 1 GPU 1.95 ms; 2 GPUs 0.99 ms (1.97x); ..."
void scaling_note(sw::Report& report, const std::string& what,
                  const std::vector<sw::Result>& rows) {
  std::string line = what + ":";
  for (const sw::Result& r : rows) {
    char part[96];
    const double speedup = rows.front().timing.ms_median / r.timing.ms_median;
    const bool weak = what.rfind("weak", 0) == 0;  // weak scaling: the work grows with K
    std::snprintf(part, sizeof part, "%s %d GPU(s) %.3f ms (%.2fx)", &r == &rows.front() ? "" : ";",
                  static_cast<int>(r.extra.at("gpus")), r.timing.ms_median,
                  weak ? speedup * r.extra.at("gpus") : speedup);
    line += part;
  }
  report.note(line);
}

// The fixed costs on `count` GPUs, each alone: a launch on every GPU, the host combine
// of one float per GPU, NCCL's all-reduce of one float per GPU, and the whole sharded
// sum at a size where they dominate.
void bench_fixed_costs(Machine& m, Shards& s, sw::Report& report, const sw::CommonOptions& opt,
                       int count, uint64_t seed) {
  s.split(count, kLatencyN);
  s.fill(seed);
  const Ref ref = reference(seed, 0, kLatencyN);
  std::vector<sw::Result> rows;
  rows.push_back(
      {"empty-launch", count, 0, sw::time_gpus(opt, count, 1, launch_empty, m, s), true, "lesson"});
  launch_sharded_sum<TotalOn::kNccl>(m, s);  // every GPU's sum in place for the two combines alone
  sw::sync_gpus(count);
  rows.push_back({"host-combine-scalar", count, 0,
                  sw::time_gpus(opt, count, 1, launch_host_combine, m, s), true, "lesson"});
  const int64_t depth = sum_depth(s);
  rows.back().ok =
      check_shard_results(shard_results(kSumSteps[0], s), ref, depth, kLatencyN).empty();
  rows.push_back({"nccl-allreduce-scalar", count, 0,
                  sw::time_gpus(opt, count, 1, launch_nccl_combine, m, s), true, "lesson"});
  rows.back().ok =
      check_shard_results(shard_results(kSumSteps[1], s), ref, depth, kLatencyN).empty();
  for (const Step<Shards>& c : kSumSteps) {
    sw::Result r = measure_sum(m, s, c, ref, opt);
    r.role = "lesson";
    rows.push_back(r);
  }
  std::string line = "fixed costs, " + gpus_text(count) + ":";
  for (sw::Result& r : rows) {
    r.problem = "sharded-sum-latency";
    r.note = gpus_text(count);
    r.extra["gpus"] = count;
    report.add(r);
    char part[96];
    std::snprintf(part, sizeof part, "%s %s %.1f us", &r == &rows.front() ? "" : ",",
                  r.variant.c_str(), 1e3 * r.timing.ms_median);
    line += part;
  }
  report.note(line + " (n=2^20 for the sums)");
}

}  // namespace

int gpu_sum_blocks_per_sm() {
  return sw::resident_blocks_per_sm(reduce_overload<kSumBlock, Finish::kPartials>, kSumBlock);
}

int64_t gpu_sum_grid(int64_t n, int blocks_per_sm) {
  return ch06::grid_for(n, kSumBlock, blocks_per_sm, sw::sm_count());
}

int64_t gpu_sum_depth(int64_t n, int blocks_per_sm) {
  const int64_t blocks = gpu_sum_grid(n, blocks_per_sm);
  return ch06::launch_depth(n, blocks * kSumBlock) + ch06::launch_depth(blocks, kSumBlock);
}

const std::vector<Step<Shards>> kSumSteps = {
    {"shard-host-combine", launch_sharded_sum<TotalOn::kHost>, {}, "step", kSameBits},
    {"shard-nccl-allreduce", launch_sharded_sum<TotalOn::kNccl>, {}, "vendor"},
};

Shards::Shards(const std::vector<int64_t>& capacity) {
  for (size_t g = 0; g < capacity.size(); ++g) {
    CUDA_CHECK(cudaSetDevice(static_cast<int>(g)));
    sums_per_sm.push_back(gpu_sum_blocks_per_sm());
    x.emplace_back(std::max<int64_t>(capacity[g], 1));
    partials.emplace_back(gpu_sum_partials(sums_per_sm[g]));
    sum.emplace_back(1);
    total.emplace_back(1);
  }
  CUDA_CHECK(cudaSetDevice(0));
}

void Shards::split(int gpus, int64_t n) {
  count = gpus;
  first.assign(count, 0);
  size.assign(count, 0);
  for (int g = 0; g < count; ++g) {
    first[g] = n * g / count;
    size[g] = n * (g + 1) / count - first[g];
  }
}

void Shards::repeat(int gpus, int64_t shard) {
  count = gpus;
  first.assign(count, 0);
  size.assign(count, shard);
  for (int g = 0; g < count; ++g) first[g] = g * shard;
}

void Shards::fill(uint64_t seed) const {
  for (int g = 0; g < count; ++g)
    launch_fill(g, x[g].get(), first[g], size[g], seed, Data::kRandom);
  sw::sync_gpus(count);
}

void Shards::poison() {
  for (int g = 0; g < count; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    sw::poison(partials[g].get(), partials[g].bytes());
    sw::poison(sum[g].get(), sum[g].bytes());
    sw::poison(total[g].get(), total[g].bytes());
    host_sums[g] = NAN;
  }
  host_total = NAN;
  sw::sync_gpus(count);
}

std::vector<double> shard_results(const Step<Shards>& step, const Shards& s) {
  if (step.launch == launch_sharded_sum<TotalOn::kHost>) return {s.host_total};
  std::vector<double> out;
  for (int g = 0; g < s.count; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    out.push_back(sw::read(s.total[g].get()));
  }
  CUDA_CHECK(cudaSetDevice(0));
  return out;
}

int64_t sum_depth(const Shards& s) {
  int64_t worst = 0;
  for (int g = 0; g < s.count; ++g) {
    CUDA_CHECK(cudaSetDevice(g));
    worst = std::max(worst, gpu_sum_depth(s.size[g], s.sums_per_sm[g]));
  }
  CUDA_CHECK(cudaSetDevice(0));
  return worst + s.count;
}

void bench_sharded_sum(Machine& m, sw::Report& report, const sw::CommonOptions& opt, int64_t n,
                       int64_t shard) {
  using namespace std::string_literals;
  const std::vector<int> counts = gpu_counts(m.k);
  std::vector<int64_t> capacity(m.k, shard);
  for (int count : counts)
    for (int g = 0; g < count; ++g)
      capacity[g] = std::max(capacity[g], n * (g + 1) / count - n * g / count);
  Shards s(capacity);
  const uint64_t seed = static_cast<uint64_t>(opt.seed);

  const Ref strong_ref = reference(seed, 0, n);
  std::map<std::string, std::vector<sw::Result>> strong, weak;
  for (int count : counts) {
    s.split(count, n);
    s.fill(seed);
    for (const Step<Shards>& c : kSumSteps) {
      sw::Result r = measure_sum(m, s, c, strong_ref, opt);
      r.note = "strong " + gpus_text(count);
      report.add(r);
      strong[c.name].push_back(r);
    }
  }
  std::vector<Ref> shard_refs;  // shard g of the weak-scaling array, for the prefix of each count
  for (int g = 0; g < m.k; ++g) shard_refs.push_back(reference(seed, g * shard, shard));
  for (int count : counts) {
    s.repeat(count, shard);
    s.fill(seed);
    Ref ref;
    for (int g = 0; g < count; ++g)
      ref.sum += shard_refs[g].sum, ref.abs_sum += shard_refs[g].abs_sum;
    for (const Step<Shards>& c : kSumSteps) {
      sw::Result r = measure_sum(m, s, c, ref, opt);
      r.note = "weak " + gpus_text(count);
      report.add(r);
      weak[c.name].push_back(r);
    }
  }
  for (const Step<Shards>& c : kSumSteps) {
    scaling_note(report, "strong scaling, speedup over 1 GPU: "s + c.name, strong[c.name]);
    scaling_note(report, "weak scaling, work per time over 1 GPU: "s + c.name, weak[c.name]);
  }
  for (int count : counts) bench_fixed_costs(m, s, report, opt, count, seed);
}

}  // namespace ch14
