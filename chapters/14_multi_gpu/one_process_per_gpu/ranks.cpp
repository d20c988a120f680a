// Chapter 14, Part 3 (see ranks.h): a rank's life. Its place from the launcher's variables,
// its GPU, the unique id's journey through the bootstrap, a nonblocking communicator, and the
// wait loop that turns a dead or stuck rank into ncclCommAbort and an exit code of its own.
#include "ranks.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/check.h"
#include "common/nccl_check.h"

namespace ch14 {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kVerifySlices = 8;                    // the sweep's ring runs 1, 3 and 8 slices
constexpr double kWorkingBytes = 64.0 * (1 << 20);  // device memory kept for NCCL and the context

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// FNV-1a of the id's bytes: the notes show that every rank holds the same 128 bytes.
uint64_t digest(const std::string& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Local rank L takes GPU L of this host. Exits 77 when this host shows fewer GPUs, or none.
int take_gpu(const RankEnv& env) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaSuccess && count > 0 && env.local_rank >= count) {
    std::fprintf(stderr,
                 "skipped: rank %d has local rank %d, which needs %d GPUs, but %d %s visible\n",
                 env.rank, env.local_rank, env.local_rank + 1, count, count == 1 ? "is" : "are");
    std::exit(sw::kExitSkip);
  }
  if (err == cudaSuccess && count > 0) CUDA_CHECK(cudaSetDevice(env.local_rank));
  sw::require_gpu();  // one line and 77 without a usable GPU
  return env.local_rank;
}

}  // namespace

void add_rank_options(sw::Cli& cli, RankOptions* o) {
  cli.add_string(
      "--bootstrap", &o->bootstrap,
      "Part 3: how the unique id travels: tcp (rank 0 listens on MASTER_ADDR:MASTER_PORT),"
      " file:PATH, or mpi where the build found MPI; default tcp");
  cli.add_int("--timeout", &o->timeout_s, 1, 3600,
              "Part 3: seconds a rank waits for the others, at the bootstrap (then exit 3) or in a "
              "collective (then exit 5); default 30");
  cli.add_int("--loop", &o->loop, 0, sw::kMaxElements,
              "Part 3: only this many all-reduces of 64 MiB, each waited for (the fault trials)");
}

void require_rank_options(const RankOptions& o) {
  BootSpec spec;
  const std::string bad = parse_bootstrap(o.bootstrap, &spec);
  if (bad.empty()) return;
  std::fprintf(stderr, "error: %s\n", bad.c_str());
  std::exit(sw::kExitBadInput);
}

Rank::Rank(const RankEnv& e, const RankOptions& o, int stream_count)
    : env(e), timeout_s(o.timeout_s) {
  device = take_gpu(env);
  char name[256] = {}, bus[32] = {};
  gethostname(name, sizeof name - 1);
  host = name;
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  bus_id = bus;
  for (int j = 0; j < stream_count; ++j) {
    cudaStream_t s;  // an ordinary stream: ordered with the fills and poisons of stream 0
    CUDA_CHECK(cudaStreamCreate(&s));
    streams.push_back(s);
  }
  value_.allocate(1);
  host_ = std::make_unique<sw::PinnedBuffer<double>>(1);
  parse_bootstrap(o.bootstrap, &spec);  // main() checked it
}

Rank::~Rank() {
  for (cudaStream_t s : streams) cudaStreamDestroy(s);
}

void Rank::require(const BootStatus& st) {
  if (st.code == 0) return;
  std::fprintf(stderr, "rank %d: %s\n", env.rank, st.message.c_str());
  std::exit(st.code);
}

void Rank::abort(int code, const std::string& why) {
  std::fprintf(stderr, "rank %d: %s; ncclCommAbort, exit %d\n", env.rank, why.c_str(), code);
  std::fflush(stderr);
  if (comm) ncclCommAbort(comm);
  std::exit(code);
}

std::vector<std::string> Rank::join(bool* same_id) {
  require(start_bootstrap(spec, env, timeout_s, &boot));
  ncclUniqueId id{};
  if (env.rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));  // rank 0's address, in 128 bytes
  std::string bytes(id.internal, sizeof id.internal);
  require(boot->broadcast(&bytes));
  if (bytes.size() != sizeof id.internal)
    require({kExitBootstrap, "bootstrap: the unique id arrived with " +
                                 std::to_string(bytes.size()) + " bytes, not 128"});
  std::memcpy(id.internal, bytes.data(), sizeof id.internal);
  char line[320];
  std::snprintf(line, sizeof line, "rank %d: host %s, GPU %d (%s), local rank %d, id %016llx",
                env.rank, host.c_str(), device, bus_id.c_str(), env.local_rank,
                static_cast<unsigned long long>(digest(bytes)));
  std::vector<std::string> lines;
  require(boot->allgather(line, &lines));
  *same_id = true;
  for (const std::string& l : lines)
    *same_id = *same_id && l.substr(l.size() - 16) == line + std::strlen(line) - 16;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // no NCCL call blocks: it answers ncclInProgress while it works
  nccl(ncclCommInitRankConfig(&comm, env.size, id, env.rank, &config), "ncclCommInitRankConfig");
  return lines;
}

void Rank::nccl(ncclResult_t r, const std::string& what) {
  const auto start = Clock::now();
  while (r == ncclInProgress) {
    if (seconds_since(start) > timeout_s)
      abort(kExitTimedOut, what + ": still in progress after " + std::to_string(int(timeout_s)) +
                               " s (--timeout)");
    const ncclResult_t asked = ncclCommGetAsyncError(comm, &r);
    if (asked != ncclSuccess) r = asked;
  }
  if (r != ncclSuccess)
    abort(kExitNccl, what + ": " + ncclGetErrorString(r) + " (" + ncclGetLastError(comm) + ")");
}

void Rank::wait(const std::string& what) {
  const auto start = Clock::now();
  for (cudaStream_t s : streams)
    for (cudaError_t q; (q = cudaStreamQuery(s)) != cudaSuccess;) {
      if (q != cudaErrorNotReady) abort(sw::kExitFailed, what + ": " + cudaGetErrorName(q));
      ncclResult_t state = ncclSuccess;
      const ncclResult_t asked = ncclCommGetAsyncError(comm, &state);
      if (asked != ncclSuccess) state = asked;
      if (state != ncclSuccess && state != ncclInProgress)  // e.g. a peer's socket closed
        abort(kExitNccl, what + ": NCCL reports " + ncclGetErrorString(state) + " (" +
                             ncclGetLastError(comm) + ")");
      if (seconds_since(start) > timeout_s)  // e.g. a peer died: NCCL's kernel waits for it
        abort(kExitTimedOut, what + ": not finished after " + std::to_string(int(timeout_s)) +
                                 " s (--timeout): a rank died or hangs");
    }
}

double Rank::all_ranks(double x, ncclRedOp_t op) {
  (*host_)[0] = x;
  CUDA_CHECK(
      cudaMemcpyAsync(value_.get(), host_->get(), sizeof x, cudaMemcpyHostToDevice, streams[0]));
  nccl(ncclAllReduce(value_.get(), value_.get(), 1, ncclFloat64, op, comm, streams[0]),
       "ncclAllReduce of one value");
  CUDA_CHECK(
      cudaMemcpyAsync(host_->get(), value_.get(), sizeof x, cudaMemcpyDeviceToHost, streams[0]));
  wait("an all-reduce of one value");
  return (*host_)[0];
}

void Rank::finish() {
  all_ranks(0, ncclSum);  // every rank is done with every other rank's memory
  nccl(ncclCommFinalize(comm), "ncclCommFinalize");
  const ncclResult_t r = ncclCommDestroy(comm);  // local only, after the finalize
  comm = nullptr;
  if (r != ncclSuccess && r != ncclInProgress)
    abort(kExitNccl, std::string("ncclCommDestroy: ") + ncclGetErrorString(r));
}

int run_ranks(const sw::CommonOptions& opt, const RankOptions& o, int64_t n, int slices,
              bool force_copy) {
  RankEnv env;
  const std::string bad = read_rank_env(ProcessEnv(), &env);
  if (!bad.empty()) {
    std::fprintf(stderr, "error: %s\n", bad.c_str());
    return sw::kExitBadInput;
  }
  Rank rank(env, o, std::max(slices, kVerifySlices));
  sw::Gpu gpu;
  if (env.rank == 0 && !opt.verify_only && o.loop == 0)
    gpu = sw::start_gpu(opt);  // the banner and the measured copy, once
  else
    gpu.info = sw::device_info();
  const int64_t capacity = o.loop            ? kLoopFloats
                           : opt.verify_only ? kVerifyFloats
                                             : kAllReduceBytes.back() / int64_t{sizeof(float)};
  if (!opt.verify_only && o.loop == 0)  // a shard of --n, and three vectors
    sw::require_fits(gpu, "--n", sw::ceil_div(n, env.size), sizeof(float),
                     3.0 * capacity * sizeof(float) + kWorkingBytes);
  if (env.rank != 0) std::freopen("/dev/null", "w", stdout);  // rank 0 prints the report

  bool same_id = false;
  const std::vector<std::string> lines = rank.join(&same_id);
  int version = 0;
  NCCL_CHECK(ncclGetVersion(&version));
  sw::Report report(opt, gpu.copy_gbps, "14", "all-reduce");
  report.note("Part 3: " + std::to_string(env.size) + " rank(s), one process per GPU; ranks from " +
              env.style + " variables; unique id by " + rank.boot->describe() + "; NCCL " +
              std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
              std::to_string(version % 100) + ", nonblocking; NCCL_NVLS_ENABLE=0");
  for (const std::string& l : lines) report.note(l);
  report.check(same_id, "unique id: the same 128 bytes on every rank, by " + rank.spec.kind);

  IpcRing v;
  const std::string why = open_ipc_ring(rank, capacity, std::max(slices, kVerifySlices), &v);
  if (!why.empty()) std::fprintf(stderr, "rank %d: no ipc-ring: %s\n", env.rank, why.c_str());
  const bool ring_ok = rank.all_ranks(why.empty() ? 0 : 1, ncclSum) == 0;  // all ranks, or none
  if (!ring_ok)
    report.skip("ipc-ring", why.empty() ? "another rank cannot open its neighbour" : why);
  v.slices = std::max(slices, 1);
  v.peer_reads = !force_copy;
  const uint64_t seed = static_cast<uint64_t>(opt.seed);
  if (o.loop > 0)
    loop_ranks(rank, report, o.loop, seed, v);
  else if (opt.verify_only)
    verify_ranks(rank, report, seed, v, ring_ok);
  else
    bench_ranks(rank, report, opt, n, v, ring_ok);
  rank.all_ranks(0, ncclSum);  // every rank done with the others' memory
  v.close();
  rank.finish();
  return report.exit_code();
}

}  // namespace ch14
