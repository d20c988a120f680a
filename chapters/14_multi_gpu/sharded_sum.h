// Chapter 14, Part 1: one float array summed in K shards, one per GPU, with chapter
// 06's kernel; then the K sums combined on the host or by NCCL.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/cuda_utils.cuh"
#include "common/device.h"
#include "common/report.h"
#include "machine.h"

namespace ch14 {

// One float array in `count` contiguous shards: GPU g holds elements [first[g],
// first[g] + size[g]). Buffers are allocated once, GPU g's for the largest shard it
// ever gets (capacity[g] floats).
struct Shards {
  explicit Shards(const std::vector<int64_t>& capacity);
  int count = 0;
  std::vector<int64_t> first, size;
  std::vector<int> sums_per_sm;  // resident blocks of chapter 06's kernel per SM, per GPU
  std::vector<sw::DeviceBuffer<float>> x, partials, sum,
      total;                                    // per GPU: shard, block sums, its sum, the total
  sw::PinnedBuffer<float> host_sums{kMaxGpus};  // the GPUs' sums, copied back
  double host_total = NAN;                      // shard-host-combine's result

  void split(int gpus, int64_t n);       // strong scaling: n in all
  void repeat(int gpus, int64_t shard);  // weak scaling: `shard` on each GPU
  int64_t n() const { return first[count - 1] + size[count - 1]; }
  void fill(uint64_t seed) const;  // Data::kRandom, element i of one long array
  void poison();
};

// One GPU's sum of n floats, as Part 1 runs it on every GPU and Part 3 on each rank's: chapter
// 06's two passes, each launcher making both launches itself. First gpu_sum_grid(n, per_sm)
// blocks of reduce_overload<kSumBlock, Finish::kPartials> write their sums into `partials`
// (gpu_sum_partials(per_sm) floats), then one block adds them. per_sm: gpu_sum_blocks_per_sm().
constexpr int kSumBlock = 256;
int gpu_sum_blocks_per_sm();
inline int64_t gpu_sum_partials(int blocks_per_sm) {
  return int64_t{blocks_per_sm} * sw::sm_count();
}
int64_t gpu_sum_grid(int64_t n, int blocks_per_sm);
// The depth of its error bound (sw::check_sum): both launches.
int64_t gpu_sum_depth(int64_t n, int blocks_per_sm);

// shard-host-combine (the step) and shard-nccl-allreduce (the vendor row).
extern const std::vector<Step<Shards>> kSumSteps;

// The results of the last run of `step`: one on the host, or one per GPU.
std::vector<double> shard_results(const Step<Shards>& step, const Shards& s);

// The exact sum and sum of |x| of elements [first, first + n) of the array (in double; in
// multi_gpu_checks.cu).
struct Ref {
  double sum = 0, abs_sum = 0;
};
Ref reference(uint64_t seed, int64_t first, int64_t n);

// The error bound's depth of the last split: the deepest GPU's two launches of
// chapter 06's kernel, then the combine's `count` additions.
int64_t sum_depth(const Shards& s);

// Part 1's benchmark: strong scaling (n in all), weak scaling (shard per GPU), then
// the fixed costs alone (problem "sharded-sum-latency").
void bench_sharded_sum(Machine& m, sw::Report& report, const sw::CommonOptions& opt, int64_t n,
                       int64_t shard);

}  // namespace ch14
