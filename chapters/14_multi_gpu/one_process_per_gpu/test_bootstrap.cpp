// Chapter 14, Part 3's bootstrap (bootstrap.cpp) without a GPU: the ranks from each
// launcher's variables, and the tcp and file bootstraps between threads on 127.0.0.1,
// the time-outs included.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "chapters/14_multi_gpu/one_process_per_gpu/bootstrap.h"
#include "common/cli.h"

using namespace ch14;

namespace {

// A fake environment: the variables read_rank_env is given.
class FakeEnv : public EnvVars {
 public:
  explicit FakeEnv(const std::map<std::string, std::string>& vars) : vars_(vars) {}
  const char* get(const char* name) const override {
    auto it = vars_.find(name);
    return it == vars_.end() ? nullptr : it->second.c_str();
  }

 private:
  std::map<std::string, std::string> vars_;
};
FakeEnv env_of(const std::map<std::string, std::string>& vars) { return FakeEnv(vars); }

// A port nobody listens on now: the kernel picks one for a socket bound to port 0.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

RankEnv rank_env(int rank, int size, int port) {
  RankEnv e;
  e.rank = rank;
  e.size = size;
  e.port = port;
  return e;
}

// What one rank saw: the status of each step, and the bytes.
struct Seen {
  BootStatus start, bcast, gather;
  std::string id;
  std::vector<std::string> all;
  double seconds = 0;
};

// Ranks `present` of `size` run start, broadcast (rank 0 sends a 128-byte id) and allgather
// in threads of their own; a rank left out never comes.
std::vector<Seen> run_ranks(const BootSpec& spec, int size, const std::vector<int>& present,
                            int port, double timeout_s) {
  std::vector<Seen> seen(size);
  std::vector<std::thread> threads;
  for (int r : present)
    threads.emplace_back([&, r] {
      Seen& s = seen[r];
      const auto t0 = std::chrono::steady_clock::now();
      std::unique_ptr<Bootstrap> boot;
      s.start = start_bootstrap(spec, rank_env(r, size, port), timeout_s, &boot);
      if (s.start.code == 0) {
        if (r == 0)
          for (int i = 0; i < 128; ++i) s.id += static_cast<char>(i * 7);
        s.bcast = boot->broadcast(&s.id);
        if (s.bcast.code == 0) s.gather = boot->allgather("rank " + std::to_string(r), &s.all);
      }
      s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
  for (std::thread& t : threads) t.join();
  return seen;
}

void check_all_arrived(const std::vector<Seen>& seen) {
  for (size_t r = 0; r < seen.size(); ++r) {
    CAPTURE(r);
    CHECK(seen[r].start.message == "");
    CHECK(seen[r].bcast.message == "");
    CHECK(seen[r].gather.message == "");
    REQUIRE(seen[r].id.size() == 128);
    CHECK(seen[r].id == seen[0].id);
    REQUIRE(seen[r].all.size() == seen.size());
    for (size_t q = 0; q < seen.size(); ++q) CHECK(seen[r].all[q] == "rank " + std::to_string(q));
  }
}

std::string temp_prefix() {
  char folder[] = "/tmp/sw14-bootstrap-XXXXXX";
  REQUIRE(mkdtemp(folder) != nullptr);
  return std::string(folder) + "/id";
}

}  // namespace

TEST_CASE("the three launchers' variables") {
  RankEnv e;
  CHECK(read_rank_env(env_of({{"RANK", "1"},
                              {"WORLD_SIZE", "4"},
                              {"LOCAL_RANK", "1"},
                              {"MASTER_ADDR", "10.0.0.7"},
                              {"MASTER_PORT", "1234"}}),
                      &e) == "");
  CHECK((e.rank == 1 && e.size == 4 && e.local_rank == 1 && e.style == "torchrun"));
  CHECK((e.addr == "10.0.0.7" && e.port == 1234));
  CHECK(read_rank_env(env_of({{"OMPI_COMM_WORLD_RANK", "3"},
                              {"OMPI_COMM_WORLD_SIZE", "8"},
                              {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}),
                      &e) == "");
  CHECK((e.rank == 3 && e.size == 8 && e.local_rank == 3 && e.style == "Open MPI"));
  CHECK((e.addr == "127.0.0.1" && e.port == kDefaultPort));
  CHECK(read_rank_env(
            env_of({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}, {"SLURM_LOCALID", "1"}}), &e) ==
        "");
  CHECK((e.rank == 5 && e.size == 6 && e.local_rank == 1 && e.style == "Slurm"));
  // mpirun inside a Slurm allocation: Open MPI's names win over the allocation's.
  CHECK(read_rank_env(env_of({{"OMPI_COMM_WORLD_RANK", "1"},
                              {"OMPI_COMM_WORLD_SIZE", "2"},
                              {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                              {"SLURM_PROCID", "0"},
                              {"SLURM_NTASKS", "1"},
                              {"SLURM_LOCALID", "0"}}),
                      &e) == "");
  CHECK((e.rank == 1 && e.size == 2 && e.style == "Open MPI"));
  CHECK(read_rank_env(env_of({}), &e) == "");
  CHECK((e.rank == 0 && e.size == 1 && e.local_rank == 0 && e.style == "none"));
}

TEST_CASE("a bad or inconsistent environment is one line that names the variable") {
  RankEnv e;
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}}, "LOCAL_RANK is not set"},
      {{{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}}, "RANK=2: expected"},
      {{{"RANK", "x"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}}, "RANK=x"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "0"}, {"LOCAL_RANK", "0"}}, "WORLD_SIZE=0"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "-1"}}, "LOCAL_RANK=-1"},
      {{{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "0"}}, "SLURM_PROCID=4"},
      {{{"OMPI_COMM_WORLD_SIZE", "2"}}, "OMPI_COMM_WORLD_RANK is not set"},
      {{{"MASTER_PORT", "70000"}}, "MASTER_PORT=70000"},
      {{{"MASTER_PORT", ""}}, "MASTER_PORT="},
      {{{"MASTER_ADDR", ""}}, "MASTER_ADDR is empty"},
  };
  for (const auto& [vars, start] : cases) {
    const std::string msg = read_rank_env(env_of(vars), &e);
    CAPTURE(msg);
    CHECK(msg.rfind(start, 0) == 0);
    CHECK(msg.find('\n') == std::string::npos);
  }
}

TEST_CASE("--bootstrap's values") {
  BootSpec s;
  CHECK(parse_bootstrap("tcp", &s) == "");
  CHECK(s.kind == "tcp");
  CHECK(parse_bootstrap("file:/tmp/x", &s) == "");
  CHECK((s.kind == "file" && s.path == "/tmp/x"));
  CHECK(parse_bootstrap("mpi", &s).empty() == mpi_built());
  for (const char* bad : {"", "file:", "udp", "file"})
    CHECK(parse_bootstrap(bad, &s).rfind("--bootstrap", 0) == 0);
}

TEST_CASE("tcp: the id and an allgather reach every rank") {
  for (int size : {1, 2, 5}) {
    CAPTURE(size);
    std::vector<int> all(size);
    for (int r = 0; r < size; ++r) all[r] = r;
    check_all_arrived(run_ranks({"tcp", ""}, size, all, free_port(), 20.0));
  }
}

TEST_CASE("tcp: a rank that never comes, and no rank 0, end in a stated time-out") {
  const std::vector<Seen> seen = run_ranks({"tcp", ""}, 3, {0, 1}, free_port(), 0.5);
  CHECK(seen[0].start.code == kExitBootstrap);
  CHECK(seen[0].start.message.find("gave up after 0.5 s") != std::string::npos);
  CHECK(seen[0].start.message.find("rank(s) 2 never connected") != std::string::npos);
  CHECK(seen[0].seconds < 5);
  CHECK(seen[1].bcast.code == kExitBootstrap);  // rank 0 closed its connection when it gave up
  const std::vector<Seen> alone = run_ranks({"tcp", ""}, 2, {1}, free_port(), 0.3);
  CHECK(alone[1].start.code == kExitBootstrap);
  CHECK(alone[1].start.message.find("no rank 0 listening at 127.0.0.1:") != std::string::npos);
  CHECK((alone[1].seconds >= 0.3 && alone[1].seconds < 5));
}

TEST_CASE("tcp: a port in use and ranks that disagree on the world size are bad input") {
  const int port = free_port();
  const int busy = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(bind(busy, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(listen(busy, 1) == 0);
  std::unique_ptr<Bootstrap> boot;
  const BootStatus st = start_bootstrap({"tcp", ""}, rank_env(0, 2, port), 1.0, &boot);
  CHECK(st.code == sw::kExitBadInput);
  CHECK(st.message.find("cannot listen on 127.0.0.1:" + std::to_string(port)) != std::string::npos);
  close(busy);

  const int port2 = free_port();
  BootStatus zero, one;
  std::thread t0([&] {
    std::unique_ptr<Bootstrap> b;
    zero = start_bootstrap({"tcp", ""}, rank_env(0, 2, port2), 5.0, &b);
  });
  std::thread t1([&] {
    std::unique_ptr<Bootstrap> b;
    one = start_bootstrap({"tcp", ""}, rank_env(1, 3, port2), 5.0, &b);
  });
  t0.join();
  t1.join();
  CHECK(zero.code == sw::kExitBadInput);
  CHECK(zero.message.find("rank 0 has WORLD_SIZE=2") != std::string::npos);
}

TEST_CASE("file: the id and an allgather reach every rank, through files that stay") {
  for (int size : {1, 3}) {
    const std::string prefix = temp_prefix();
    std::vector<int> all(size);
    for (int r = 0; r < size; ++r) all[r] = r;
    check_all_arrived(run_ranks({"file", prefix}, size, all, 0, 20.0));
    for (int step = 0; step < 2; ++step)
      for (int r = 0; r < size; ++r) {
        const std::string name = prefix + "." + std::to_string(step) + "." + std::to_string(r);
        CHECK(access(name.c_str(), F_OK) == (step == 0 && r > 0 ? -1 : 0));  // the id: rank 0's
        std::remove(name.c_str());
      }
    CHECK(rmdir(prefix.substr(0, prefix.rfind('/')).c_str()) == 0);  // nothing else was left
  }
}

TEST_CASE("file: a rank that never comes ends in a stated time-out; a stale file is bad input") {
  const std::string prefix = temp_prefix();
  const std::vector<Seen> seen = run_ranks({"file", prefix}, 2, {1}, 0, 0.3);
  CHECK(seen[1].bcast.code == kExitBootstrap);
  CHECK(seen[1].bcast.message.find("gave up after 0.3 s") != std::string::npos);
  CHECK(seen[1].bcast.message.find(prefix + ".0.0 never appeared (rank 0 never came?)") !=
        std::string::npos);
  CHECK((seen[1].seconds >= 0.3 && seen[1].seconds < 5));

  std::FILE* stale = std::fopen((prefix + ".0.0").c_str(), "w");
  REQUIRE(stale != nullptr);
  std::fclose(stale);
  std::unique_ptr<Bootstrap> boot;
  const BootStatus st = start_bootstrap({"file", prefix}, rank_env(0, 2, 0), 1.0, &boot);
  CHECK(st.code == sw::kExitBadInput);
  CHECK(st.message.find("exists, left by an earlier run") != std::string::npos);
  std::remove((prefix + ".0.0").c_str());
  rmdir(prefix.substr(0, prefix.rfind('/')).c_str());
  CHECK(start_bootstrap({"file", prefix + "-none/id"}, rank_env(0, 1, 0), 1.0, &boot).code ==
        sw::kExitBadInput);
}
