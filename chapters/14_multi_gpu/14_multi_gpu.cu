// Chapter 14: beyond one GPU. A sum sharded across GPUs, and an all-reduce, step by step to NCCL.
//
// What changed:  one process and one host thread drive K GPUs (every visible GPU, or --gpus K).
//   Part 1, problem "sharded-sum": one large float array split into K contiguous shards, one per
//                GPU. Each GPU sums its shard with chapter 06's two-pass kernel (reduce_overload),
//                then the K sums are combined:
//     shard-host-combine    each sum copied to the host and added there, in double
//     shard-nccl-allreduce  one ncclAllReduce of one float per GPU: every GPU holds the total
//                Strong scaling: a fixed total (--n, 8 GiB) on 1, 2, 4, ..., K GPUs; weak
//                scaling: a fixed shard per GPU (--shard, 2 GiB). Problem "sharded-sum-latency"
//                times the fixed costs alone: empty launches, the host combine, NCCL on a scalar.
//   Part 2, problem "all-reduce": every GPU holds a float vector (4 MiB to 1 GiB, a gradient's
//                size) and must end with the element-wise sum of all K vectors.
//     naive-gather   peer copies of every vector to GPU 0, a sum kernel there, peer copies back
//     ring           a reduce-scatter then an all-gather around the ring 0 -> 1 -> ... -> 0,
//                    K - 1 steps each on chunks of n / K: each GPU reads the previous GPU's
//                    chunk straight over NVLink (a peer pointer) and adds it into its own; a
//                    chunk can be cut in slices, on streams of their own, so steps overlap. The
//                    row runs at the best of a sweep (rows ring-sweep and ring-copy-sweep, role
//                    "sweep"): 1, 2, 4, 8 slices, with peer loads and with copy-engine copies
//     nccl-allreduce ncclAllReduce (the vendor row)
//                Problem "p2p": a 1 GiB cudaMemcpyPeerAsync between every pair of GPUs, one
//                direction and both at once: the ceiling.
//   Part 3 (--part 3), in one_process_per_gpu/ (its README.md first): the same problems with
//                one process per GPU, a rank, as multi-node programs run. A rank reads its place
//                from torchrun's, Open MPI's or Slurm's variables, takes its GPU and gets NCCL's
//                unique id from rank 0 through a bootstrap (--bootstrap tcp|file:PATH|mpi):
//     shard-nccl-allreduce  each rank sums its shard, then one ncclAllReduce of one float
//     ipc-ring              Part 2's ring over CUDA IPC handles; counters in GPU memory, not
//                           events, order the steps of different processes
//     nccl-allreduce        ncclAllReduce (the vendor row)
//                No rank blocks for ever: it exits 3 when the bootstrap gives up, and 4 on an
//                NCCL error or 5 after a wait past --timeout, both after ncclCommAbort.
// Why faster:    K GPUs bring K memories: a shard sum is bound by DRAM bandwidth, so K GPUs sum
//                K times the bytes in the same time, less the fixed costs of launching on K
//                GPUs and combining K numbers. An all-reduce is bound by the links between
//                GPUs: gathering on GPU 0 pushes all the data through GPU 0's link twice; a
//                ring keeps every link busy in both directions at once, moving 2(K-1)/K of the
//                vector per GPU whatever K is. Part 3 is not faster: it is what lets the
//                same program span hosts, at the price of a bootstrap and of no shared
//                address space (IPC handles, or NCCL's network path between hosts).
// Bottleneck:    Part 1: DRAM bandwidth of each GPU (chapter 06), then the launch and combine
//                latencies. Part 2: NVLink (or PCIe) bandwidth per GPU; the goal is NCCL's
//                bus bandwidth (busbw = algbw x 2(K-1)/K, as nccl-tests defines it), which
//                in turn approaches the measured peer copy.
// Timing:        the host clock around the work and a cudaDeviceSynchronize of every GPU in
//                use (CUDA events time one device); all-reduces of 64 MiB or less are timed
//                10 calls back to back, per call. All-reduce rows put busbw in the GB/s column.
//                Part 3: the same on each rank, its wait loop in place of the synchronize; the
//                slowest rank's median.
// NVLink multicast (NVLS) stays off: main() sets NCCL_NVLS_ENABLE=0 before NCCL starts.
// Steps:         shard-host-combine, naive-gather, ring, ipc-ring
// Run:           build/chapters/14_multi_gpu [--gpus K] [--n 2^31] [--shard 2^29] [--slices S]
//                [--ring-reads peer|copy] [--json]
//                build/chapters/14_multi_gpu --part 1 [--gpus K] [--n 2^31] [--shard 2^29]
//                build/chapters/14_multi_gpu --part 2 [--gpus K] [--slices S] [--ring-reads peer|copy]
//                build/chapters/14_multi_gpu --verify-only [--gpus K] [--part 1|2] [--json]
//                Part 3, K ranks (launch.py prefixes each line with its rank; --net forces
//                NCCL's network path: NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_IB_DISABLE,
//                NCCL_SOCKET_IFNAME=lo and a NCCL_HOSTID per rank):
//  chapters/14_multi_gpu/one_process_per_gpu/launch.py --ranks K [--net] -- build/chapters/14_multi_gpu
//                    --part 3 [--bootstrap tcp|file:PATH|mpi] [--timeout 30] [--verify-only]
//                or: mpirun --allow-run-as-root -np K -x MASTER_ADDR=127.0.0.1 <the same>
//                or: srun --ntasks=K --export=ALL,MASTER_ADDR=$(hostname) <the same>
// Files:         this file (the options, main); machine.cu (streams, peers, communicators,
//                the data); sharded_sum.cu (Part 1); all_reduce.cu (Part 2's steps) and
//                all_reduce_bench.cpp (its benchmark); multi_gpu_checks.cu (the checks);
//                one_process_per_gpu/ (Part 3: its README.md lists its files).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "all_reduce.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/device.h"
#include "common/report.h"
#include "machine.h"
#include "multi_gpu_checks.h"
#include "one_process_per_gpu/ranks.h"
#include "sharded_sum.h"

namespace ch14 {
namespace {

constexpr int kMaxSlices = 16;  // --slices range
// Part 1: strong scaling on 8 GiB of floats in all, weak scaling on 2 GiB per GPU.
constexpr int64_t kDefaultN = int64_t{1} << 31;
constexpr int64_t kDefaultShard = int64_t{1} << 29;
constexpr double kWorkingBytes = 64.0 * (1 << 20);  // device memory kept for NCCL and the context

struct Options {
  int64_t n = kDefaultN, shard = kDefaultShard;
  int gpus = 0, slices = 0;  // slices 0: the ring's sweep decides
  std::string ring_reads = "peer";
  std::string part;   // "": Parts 1 and 2
  RankOptions ranks;  // Part 3's own
};

// The names of a table's steps (role "step": not the vendor rows).
template <class S>
void add_steps(const std::vector<S>& table, std::vector<std::string>* names) {
  for (const S& s : table)
    if (std::string(s.role) == "step") names->push_back(s.name);
}

sw::Cli make_cli(Options* o) {
  sw::Cli cli("14_multi_gpu",
              "A sum sharded across GPUs and an all-reduce: by hand, then with NCCL.");
  cli.add_int("--n", &o->n, 1, sw::kMaxElements,
              "Part 1 strong scaling: floats in all, split across the GPUs");
  cli.add_int("--shard", &o->shard, 1, sw::kMaxElements, "Part 1 weak scaling: floats per GPU");
  cli.add_int("--gpus", &o->gpus, 1, kMaxGpus, "GPUs to use (default: every visible GPU)");
  cli.add_int(
      "--slices", &o->slices, 1, kMaxSlices,
      "ring: slices per chunk, each on a stream of its own (default: the best of its sweep)");
  cli.add_choice("--ring-reads", &o->ring_reads, {"peer", "copy"},
                 "ring: read the neighbour's memory directly (peer) or copy it over first (copy)");
  cli.add_choice("--part", &o->part, {"1", "2", "3"},
                 "one part only: 1 the sharded sum, 2 the all-reduce, 3 one process per GPU, "
                 "started by launch.py, mpirun or srun; default Parts 1 and 2");
  add_rank_options(cli, &o->ranks);
  std::vector<std::string> steps;  // --list: the steps of Parts 1, 2 and 3
  add_steps(kSumSteps, &steps);
  add_steps(kAllReduceSteps, &steps);
  add_steps(kRankSteps, &steps);
  cli.set_steps(steps);
  cli.without("--graded-timing");  // its timing spans several GPUs; no lab grades it
  return cli;
}

// The GPUs to use: --gpus, or every visible one. Exits 77 when --gpus asks for more
// than there are.
int gpus_to_use(const sw::Cli& cli, const Options& o, int visible) {
  if (cli.was_given("--gpus") && o.gpus > visible) {
    std::fprintf(stderr, "skipped: --gpus %d needs %d GPUs but %d %s visible\n", o.gpus, o.gpus,
                 visible, visible == 1 ? "is" : "are");
    std::exit(sw::kExitSkip);
  }
  return cli.was_given("--gpus") ? o.gpus : std::min(visible, kMaxGpus);
}

// Part 1 on one GPU holds all n floats; every GPU holds a weak-scaling shard. Exits 2
// when either does not fit.
void require_fits(const sw::Gpu& gpu, const Options& o, int k) {
  sw::require_fits(gpu, "--n", o.n, sizeof(float), kWorkingBytes);
  for (int g = 0; g < k; ++g) {
    sw::Gpu one = gpu;
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    one.info.free_bytes = static_cast<double>(free_b);
    sw::require_fits(one, "--shard", o.shard, sizeof(float), kWorkingBytes);
  }
  CUDA_CHECK(cudaSetDevice(0));
}

}  // namespace
}  // namespace ch14

// The parts in order; each checks itself with --verify-only, or measures.
namespace ch14 {
// An option that the chosen part (or --verify-only) leaves unused: one line, exit 2.
void reject_unused(const sw::Cli& cli, const Options& o, bool verify_only) {
  const auto none_of = [&](std::initializer_list<const char*> names, const char* why) {
    for (const char* name : names)
      if (cli.was_given(name)) cli.reject(std::string(name) + " " + why);
  };
  if (o.part != "3") none_of({"--bootstrap", "--timeout", "--loop"}, "applies to --part 3 only");
  if (o.part == "3") none_of({"--gpus", "--shard"}, "does not apply to --part 3 (a GPU per rank)");
  if (o.part == "1")
    none_of({"--slices", "--ring-reads"}, "applies to the all-reduce, not --part 1");
  if (o.part == "2") none_of({"--n", "--shard"}, "applies to the sharded sum, not --part 2");
  if (verify_only && o.part != "3")
    none_of({"--n", "--shard", "--slices", "--ring-reads"},
            "does not apply to --verify-only (it checks its own sizes)");
}
}  // namespace ch14

int main(int argc, char** argv) {
  // NVLink multicast (NVLS) off before NCCL starts: a program that uses it can put GPUs that
  // others share out of service. Forced, whatever the environment says.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  ch14::Options o;
  sw::Cli cli = ch14::make_cli(&o);
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  ch14::require_rank_options(o.ranks);  // exits 2 on a bad --bootstrap, whatever the part
  ch14::reject_unused(cli, o, opt.verify_only);
  if (o.part == "3") return ch14::run_ranks(opt, o.ranks, o.n, o.slices, o.ring_reads == "copy");
  const sw::Gpu gpu = sw::start_gpu(opt);
  int visible = 0;
  CUDA_CHECK(cudaGetDeviceCount(&visible));
  const int k = ch14::gpus_to_use(cli, o, visible);
  if (!opt.verify_only && o.part != "2") ch14::require_fits(gpu, o, k);

  ch14::Machine m;
  ch14::start_machine(m, k, std::max(o.slices, ch14::kSliceSweep.back()));
  sw::Report report(opt, gpu.copy_gbps, "14", "sharded-sum");
  report.note(ch14::describe(m, visible));
  const uint64_t seed = static_cast<uint64_t>(opt.seed);
  const bool part1 = o.part != "2", part2 = o.part != "1";
  if (opt.verify_only) {
    if (part1) ch14::verify_sharded_sum(m, report, seed);
    if (part2) ch14::verify_all_reduce(m, report, seed);
    return report.exit_code();
  }
  if (part1) ch14::bench_sharded_sum(m, report, opt, o.n, o.shard);
  if (!part2) return report.exit_code();
  report.note(
      "all-reduce rows: the GB/s column is the bus bandwidth, busbw = algbw x 2(K-1)/K "
      "(nccl-tests)");
  ch14::bench_all_reduce(m, report, opt, o.ring_reads == "copy", o.slices);
  return report.exit_code();
}
