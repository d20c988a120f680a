// Chapter 14, Part 3: one process per GPU. Each process is one rank: it reads its place
// from the launcher's variables (bootstrap.h), takes GPU LOCAL_RANK, receives NCCL's unique
// id through the bootstrap and joins a nonblocking communicator. Parts 1 and 2's problems
// then run across processes (ranks_problems.cu): the sharded sum with ncclAllReduce, the
// all-reduce with NCCL and with Part 2's ring over CUDA IPC handles (ipc_ring.cu).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap.h"
#include "chapters/14_multi_gpu/all_reduce.h"
#include "common/bench/step.h"
#include "common/cli.h"
#include "common/cuda_utils.cuh"
#include "common/device.h"
#include "common/report.h"

namespace ch14 {

// Part 3's options (the rest it shares with Parts 1 and 2: --n, --slices, --ring-reads).
struct RankOptions {
  std::string bootstrap = "tcp";
  int timeout_s = 30;  // how long a rank waits for the others, at the bootstrap or in a collective
  int64_t loop = 0;    // > 0: only that many all-reduces in a loop (the fault trials kill a rank)
};
void add_rank_options(sw::Cli& cli, RankOptions* o);
void require_rank_options(const RankOptions& o);  // one line and exit 2 where one is wrong

// This process's rank: its GPU, its streams (one per ring slice; streams[0] carries NCCL and
// everything else) and its communicator. Every wait goes through wait(), which polls: on an
// NCCL error or after --timeout it aborts the communicator and exits with a code of its own.
class Rank {
 public:
  Rank(const RankEnv& env, const RankOptions& o, int streams);
  ~Rank();
  RankEnv env;
  int device = 0;
  std::string host, bus_id;  // this rank's host name and its GPU's PCI bus id
  BootSpec spec;             // --bootstrap
  std::unique_ptr<Bootstrap> boot;
  ncclComm_t comm = nullptr;
  std::vector<cudaStream_t> streams;
  double timeout_s;

  // The bootstrap, rank 0's unique id through it to every rank, then the communicator
  // (nonblocking).
  // Returns the notes that show the id's journey, and whether every rank got the same bytes.
  std::vector<std::string> join(bool* same_id);
  // Waits for everything queued on this rank's streams, polling cudaStreamQuery and
  // ncclCommGetAsyncError instead of blocking in cudaStreamSynchronize.
  void wait(const std::string& what);
  // An NCCL call's result: ncclInProgress (a nonblocking communicator at work) is polled until
  // it settles; an error aborts.
  void nccl(ncclResult_t r, const std::string& what);
  double all_ranks(double x, ncclRedOp_t op);  // x summed (or max, min) over every rank
  // A failed bootstrap step: its line, and its exit code.
  void require(const BootStatus& st);
  // "rank R: <why>; ncclCommAbort; exit <code>" on stderr, the communicator aborted, exit.
  [[noreturn]] void abort(int code, const std::string& why);
  void finish();  // every rank done, then the communicator finalized and destroyed

 private:
  sw::DeviceBuffer<double> value_;                  // all_ranks' value on the GPU
  std::unique_ptr<sw::PinnedBuffer<double>> host_;  // and on the host
};

// Part 2's vectors on this rank's GPU, and the ring over CUDA IPC handles (ipc_ring.cu). The
// order of Part 2's events becomes counters in device memory: after each step a rank's GPU
// writes how many steps it has done, and before the next its GPU waits for its predecessor's.
struct IpcRing {
  int64_t n = 0;  // floats in use (of the capacity)
  int slices = 1;
  bool peer_reads = true;
  sw::DeviceBuffer<float> send, recv, staging;
  // [slice]: the steps this rank has finished, over every call; [max slices]: its calls.
  sw::DeviceBuffer<uint64_t> done;
  RingView view;  // this rank's place, the previous rank's buffers
  const uint64_t *prev_done = nullptr, *next_done = nullptr;  // the neighbours' counters
  uint64_t calls = 0;
  std::vector<cudaEvent_t> joined;  // [slice]: stream 0 waits for the others at a call's end
  std::vector<void*> opened;        // IPC mappings of the other ranks' memory
  void close();                     // the mappings closed (every rank done with them first)
};
// Allocates the vectors (`capacity` floats), exports them, exchanges the handles through the
// bootstrap and opens the previous rank's. Returns "" or why the ring cannot run (ranks on
// other hosts, GPUs without peer access): the vectors still serve NCCL.
std::string open_ipc_ring(Rank& rank, int64_t capacity, int max_slices, IpcRing* ring);
void launch_ipc_ring(Rank& rank, IpcRing& ring);

// Part 3's all-reduces of ring.n floats: ipc-ring (the step; kSameBits) and nccl-allreduce
// (the vendor row), in ranks_problems.cu.
using RankStep = sw::bench::Step<void (*)(Rank&, IpcRing&)>;
extern const std::vector<RankStep> kRankSteps;

// ranks_problems.cu: --verify-only's sweep, the measurements, the loop of the fault trials.
void verify_ranks(Rank& rank, sw::Report& report, uint64_t seed, IpcRing& v, bool ring_ok);
void bench_ranks(Rank& rank, sw::Report& report, const sw::CommonOptions& opt, int64_t n,
                 IpcRing& v, bool ring_ok);
void loop_ranks(Rank& rank, sw::Report& report, int64_t iterations, uint64_t seed, IpcRing& v);
constexpr int64_t kLoopFloats = int64_t{1} << 24;          // the loop's all-reduces: 64 MiB
constexpr int64_t kVerifyFloats = (int64_t{1} << 22) + 5;  // the sweep's largest all-reduce

// Part 3 from main(): --part 3. `slices` 0: 1; `force_copy`: --ring-reads copy.
int run_ranks(const sw::CommonOptions& opt, const RankOptions& o, int64_t n, int slices,
              bool force_copy);

}  // namespace ch14
