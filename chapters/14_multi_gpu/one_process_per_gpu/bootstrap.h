// Chapter 14, Part 3: which rank this process is, and the journey of NCCL's unique id.
// Host code only (no CUDA, no NCCL: the id is 128 opaque bytes here), so that a unit
// test (test_bootstrap.cpp) runs every bootstrap between threads on any machine.
//
//   RankEnv env;                                         // RANK / OMPI_COMM_WORLD_* / SLURM_*
//   std::string bad = read_rank_env(ProcessEnv(), &env);  // "" or one line (exit 2)
//   std::unique_ptr<Bootstrap> boot;
//   BootStatus st = start_bootstrap({"tcp", ""}, env, 30.0, &boot);
//   st = boot->broadcast(&id_bytes);                      // rank 0's bytes reach every rank
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace ch14 {

// Part 3's exit codes beyond common/cli.h's 0 (ok), 1 (a check failed), 2 (bad input or
// environment) and 77 (skipped: no GPU for this rank).
constexpr int kExitBootstrap = 3;  // the bootstrap gave up: a rank never came, or left
constexpr int kExitNccl = 4;       // NCCL reported an error: the communicator was aborted
constexpr int kExitTimedOut = 5;   // work waited on other ranks past --timeout: aborted

constexpr int kDefaultPort = 29500;  // MASTER_PORT when unset (torchrun's default)
constexpr int kMaxRanks = 1024;      // WORLD_SIZE range

// This process's place among the ranks, from the launcher's environment variables.
struct RankEnv {
  int rank = 0, size = 1, local_rank = 0;  // local_rank: its place on this host (its GPU)
  std::string addr = "127.0.0.1";          // MASTER_ADDR: where rank 0 listens (tcp)
  int port = kDefaultPort;                 // MASTER_PORT
  std::string style = "none";              // whose names: "torchrun", "Open MPI", "Slurm", "none"
};

// Where read_rank_env looks the variables up: get(name) is the value, or nullptr when the
// variable is not set. ProcessEnv reads this process's environment; the unit test gives its own.
class EnvVars {
 public:
  virtual ~EnvVars() = default;
  virtual const char* get(const char* name) const = 0;
};
class ProcessEnv : public EnvVars {
 public:
  const char* get(const char* name) const override { return std::getenv(name); }
};

// Reads the variables of the first launcher style present, in this order:
//   torchrun (and launch.py): RANK, WORLD_SIZE, LOCAL_RANK
//   Open MPI (mpirun):        OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK
//   Slurm (srun):             SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID
// plus MASTER_ADDR and MASTER_PORT in every style. None present: one rank. Returns "" or
// the one-line message (a missing or non-numeric variable, a rank outside the world size).
std::string read_rank_env(const EnvVars& vars, RankEnv* env);

// --bootstrap: "tcp", "file:PATH" or "mpi" (only in a build that found MPI).
struct BootSpec {
  std::string kind;  // "tcp", "file" or "mpi"
  std::string path;  // file: the prefix of the files the ranks write
};
std::string parse_bootstrap(const std::string& text, BootSpec* spec);  // "" or one line
bool mpi_built();                                                      // the build found MPI

// The outcome of a bootstrap step: code 0 (done), kExitBadInput (a setting is wrong: an
// address, a port in use, a stale file, ranks that disagree), kExitBootstrap (gave up).
struct BootStatus {
  int code = 0;
  std::string message;  // one line, for stderr
};

// Moves bytes between the ranks before NCCL exists: the unique id, then the CUDA IPC handles.
class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  // Rank 0's *bytes replace every other rank's.
  virtual BootStatus broadcast(std::string* bytes) = 0;
  // Every rank's `mine`, in rank order, on every rank.
  virtual BootStatus allgather(const std::string& mine, std::vector<std::string>* all) = 0;
  virtual std::string describe() const = 0;  // "tcp 127.0.0.1:29500", "file /tmp/id", "mpi"
};

// tcp: rank 0 listens on MASTER_ADDR:MASTER_PORT, the others connect (retrying until rank 0
// listens); every step goes through rank 0.
// file: rank r writes PATH.<step>.<r> under a temporary name and renames it (a reader never
// sees half a file); the others poll until it appears. The files stay: give every run a fresh
// PATH (rank 0 refuses one whose first file exists).
// mpi: MPI_Bcast and MPI_Allgather (MPI_Init first; rank and size must match the variables).
// tcp and file give up after timeout_s seconds per step; mpi waits as MPI does.
BootStatus start_bootstrap(const BootSpec& spec, const RankEnv& env, double timeout_s,
                           std::unique_ptr<Bootstrap>* out);

// --- shared by bootstrap.cpp, bootstrap_tcp.cpp and bootstrap_mpi.cpp ----------------------

BootStatus start_tcp_bootstrap(const RankEnv& env, double timeout_s,
                               std::unique_ptr<Bootstrap>* out);
#ifdef SW_HAVE_MPI
BootStatus start_mpi_bootstrap(const RankEnv& env, std::unique_ptr<Bootstrap>* out);
#endif

namespace boot {
using Clock = std::chrono::steady_clock;
constexpr int kRetryMs = 20;  // the pause between two connects, between two looks for a file
// A message: its length in 8 little-endian bytes, then its bytes.
std::string le64(uint64_t v);
uint64_t read_le64(const char* p);
inline std::string frame(const std::string& bytes) { return le64(bytes.size()) + bytes; }
Clock::time_point deadline_after(double seconds);
// kExitBootstrap, "bootstrap: gave up after <timeout_s> s (--timeout): <what>"
BootStatus gave_up(double timeout_s, const std::string& what);
}  // namespace boot

}  // namespace ch14
