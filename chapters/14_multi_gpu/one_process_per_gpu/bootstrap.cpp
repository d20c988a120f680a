// Chapter 14, Part 3 (see bootstrap.h): the ranks from the environment, the file bootstrap,
// and what every bootstrap shares (the tcp one is in bootstrap_tcp.cpp, the mpi one in
// bootstrap_mpi.cpp).
#include "bootstrap.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/cli.h"

namespace ch14 {

namespace boot {

std::string le64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (8 * i));
  return out;
}
uint64_t read_le64(const char* p) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return n;
}
Clock::time_point deadline_after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}
BootStatus gave_up(double timeout_s, const std::string& what) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", timeout_s);
  return {kExitBootstrap,
          std::string("bootstrap: gave up after ") + secs + " s (--timeout): " + what};
}

}  // namespace boot

namespace {

using boot::Clock;
using boot::deadline_after;
using boot::frame;
using boot::gave_up;
using boot::read_le64;

// --- the environment ---------------------------------------------------------------------

struct Style {
  const char *name, *rank, *size, *local;
};
constexpr Style kStyles[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

// Variable `name` as an integer in [lo, hi]: "" and *out, or the message.
std::string int_var(const EnvVars& vars, const char* name, int lo, int hi, const std::string& why,
                    int* out) {
  int64_t v = 0;
  if (!sw::parse_integer(vars.get(name), &v) || v < lo || v > hi)
    return std::string(name) + "=" + vars.get(name) + ": expected an integer from " +
           std::to_string(lo) + " to " + std::to_string(hi) + why;
  *out = static_cast<int>(v);
  return "";
}

// --- file: PATH.<step>.<rank>, written under a temporary name, then renamed ----------------
// The files stay when the run ends (a rank cannot know when the last reader is done): the
// launcher or the user gives every run a fresh PATH, in a folder it removes.

class FileBootstrap : public Bootstrap {
 public:
  FileBootstrap(std::string path, const RankEnv& env, double timeout_s)
      : path_(std::move(path)), env_(env), timeout_s_(timeout_s) {}
  std::string describe() const override { return "file " + path_; }

  BootStatus start() {
    const size_t slash = path_.rfind('/');
    const std::string folder = slash == std::string::npos ? "." : path_.substr(0, slash + 1);
    struct stat st {};
    if (stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return {sw::kExitBadInput, "--bootstrap file:" + path_ + ": no folder " + folder};
    if (env_.rank == 0 && stat(name(0, 0).c_str(), &st) == 0)
      return {sw::kExitBadInput,
              "--bootstrap file:" + path_ + ": " + name(0, 0) +
                  " exists, left by an earlier run: remove it or give a fresh PATH"};
    return {};
  }

  BootStatus broadcast(std::string* bytes) override {
    const int step = step_++;
    return env_.rank == 0 ? write(step, *bytes) : read(step, 0, bytes, deadline_after(timeout_s_));
  }

  BootStatus allgather(const std::string& mine, std::vector<std::string>* all) override {
    const int step = step_++;
    if (BootStatus st = write(step, mine); st.code != 0) return st;
    const auto until = deadline_after(timeout_s_);
    all->assign(env_.size, "");
    for (int r = 0; r < env_.size; ++r)
      if (BootStatus st = read(step, r, &(*all)[r], until); st.code != 0) return st;
    return {};
  }

 private:
  std::string name(int step, int rank) const {
    return path_ + "." + std::to_string(step) + "." + std::to_string(rank);
  }
  BootStatus write(int step, const std::string& bytes) {
    const std::string final_name = name(step, env_.rank), temp = final_name + ".tmp";
    std::ofstream(temp, std::ios::binary) << frame(bytes);
    if (std::rename(temp.c_str(), final_name.c_str()) != 0)
      return {sw::kExitBadInput,
              "--bootstrap file: cannot write " + final_name + ": " + std::strerror(errno)};
    return {};
  }
  // Polls until PATH.<step>.<rank> is there (whole: it appears by a rename), then reads it.
  BootStatus read(int step, int rank, std::string* bytes, Clock::time_point until) const {
    for (;;) {
      std::ifstream in(name(step, rank), std::ios::binary);
      if (in) {
        std::stringstream all;
        all << in.rdbuf();
        const std::string text = all.str();
        if (text.size() >= 8 && read_le64(text.data()) == text.size() - 8) {
          *bytes = text.substr(8);
          return {};
        }
      }
      if (Clock::now() >= until)
        return gave_up(timeout_s_, name(step, rank) + " never appeared (rank " +
                                       std::to_string(rank) + " never came?)");
      std::this_thread::sleep_for(std::chrono::milliseconds(boot::kRetryMs));
    }
  }

  std::string path_;
  RankEnv env_;
  double timeout_s_;
  int step_ = 0;
};

}  // namespace

std::string read_rank_env(const EnvVars& vars, RankEnv* env) {
  RankEnv e;
  for (const Style& s : kStyles) {
    if (!vars.get(s.rank) && !vars.get(s.size) && !vars.get(s.local)) continue;
    for (const char* name : {s.rank, s.size, s.local})
      if (!vars.get(name))
        return std::string(name) + " is not set, but other " + s.name + " variables are (" +
               s.rank + ", " + s.size + ", " + s.local + " go together)";
    const std::string why = std::string(" (") + s.size + "=" + vars.get(s.size) + ")";
    std::string bad = int_var(vars, s.size, 1, kMaxRanks, "", &e.size);
    if (bad.empty()) bad = int_var(vars, s.rank, 0, e.size - 1, why, &e.rank);
    if (bad.empty()) bad = int_var(vars, s.local, 0, e.size - 1, why, &e.local_rank);
    if (!bad.empty()) return bad;
    e.style = s.name;
    break;
  }
  if (vars.get("MASTER_ADDR")) {
    e.addr = vars.get("MASTER_ADDR");
    if (e.addr.empty()) return "MASTER_ADDR is empty: expected a host name or an address";
  }
  if (vars.get("MASTER_PORT")) {
    const std::string bad = int_var(vars, "MASTER_PORT", 1, 65535, "", &e.port);
    if (!bad.empty()) return bad;
  }
  *env = e;
  return "";
}

bool mpi_built() {
#ifdef SW_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::string parse_bootstrap(const std::string& text, BootSpec* spec) {
  if (text == "tcp" || text == "mpi")
    *spec = {text, ""};
  else if (text.rfind("file:", 0) == 0 && text.size() > 5)
    *spec = {"file", text.substr(5)};
  else
    return "--bootstrap expects tcp, file:PATH or mpi, got '" + text + "'";
  if (spec->kind == "mpi" && !mpi_built())
    return "--bootstrap mpi: this build found no MPI (apt-get install libopenmpi-dev, then "
           "configure again); use tcp or file:PATH";
  return "";
}

BootStatus start_bootstrap(const BootSpec& spec, const RankEnv& env, double timeout_s,
                           std::unique_ptr<Bootstrap>* out) {
#ifdef SW_HAVE_MPI
  if (spec.kind == "mpi") return start_mpi_bootstrap(env, out);
#endif
  if (spec.kind != "file") return start_tcp_bootstrap(env, timeout_s, out);
  auto b = std::make_unique<FileBootstrap>(spec.path, env, timeout_s);
  const BootStatus st = b->start();
  if (st.code == 0) *out = std::move(b);
  return st;
}

}  // namespace ch14
