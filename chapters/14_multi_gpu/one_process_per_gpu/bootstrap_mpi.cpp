// Chapter 14, Part 3: --bootstrap mpi (see bootstrap.h), built only where meson found MPI.
// MPI_Bcast carries the unique id, MPI_Allgather(v) the IPC handles; MPI's own launcher
// (mpirun) started the ranks, and its rank and size must be the ones the variables say.
#define OMPI_SKIP_MPICXX 1  // MPI's C interface only: no C++ bindings (deprecated, and noisy)
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdint>

#include "bootstrap.h"
#include "common/cli.h"

namespace ch14 {
namespace {

class MpiBootstrap : public Bootstrap {
 public:
  MpiBootstrap() {
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) MPI_Init(nullptr, nullptr);
    started_here_ = !ready;
  }
  ~MpiBootstrap() override {
    if (started_here_) MPI_Finalize();
  }
  std::string describe() const override { return "mpi"; }

  BootStatus broadcast(std::string* bytes) override {
    uint64_t n = bytes->size();
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    bytes->resize(n);
    MPI_Bcast(bytes->data(), static_cast<int>(n), MPI_BYTE, 0, MPI_COMM_WORLD);
    return {};
  }

  BootStatus allgather(const std::string& mine, std::vector<std::string>* all) override {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int n = static_cast<int>(mine.size());
    std::vector<int> counts(size), offsets(size);
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < size; ++r) offsets[r] = total, total += counts[r];
    std::string joined(total, '\0');
    MPI_Allgatherv(mine.data(), n, MPI_BYTE, joined.data(), counts.data(), offsets.data(), MPI_BYTE,
                   MPI_COMM_WORLD);
    all->clear();
    for (int r = 0; r < size; ++r) all->push_back(joined.substr(offsets[r], counts[r]));
    return {};
  }

  // MPI's view of this process, against the variables'.
  BootStatus agree(const RankEnv& env) const {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == env.rank && size == env.size) return {};
    return {sw::kExitBadInput, "--bootstrap mpi: MPI says rank " + std::to_string(rank) + " of " +
                                   std::to_string(size) + ", the " + env.style +
                                   " variables say rank " + std::to_string(env.rank) + " of " +
                                   std::to_string(env.size) + " (start it with mpirun)"};
  }

 private:
  bool started_here_ = false;
};

}  // namespace

BootStatus start_mpi_bootstrap(const RankEnv& env, std::unique_ptr<Bootstrap>* out) {
  auto b = std::make_unique<MpiBootstrap>();
  const BootStatus st = b->agree(env);
  if (st.code == 0) *out = std::move(b);
  return st;
}

}  // namespace ch14
