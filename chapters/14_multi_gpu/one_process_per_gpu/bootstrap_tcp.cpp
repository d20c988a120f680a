// Chapter 14, Part 3 (see bootstrap.h): the tcp bootstrap, a star around rank 0. Rank 0
// listens on MASTER_ADDR:MASTER_PORT and accepts every other rank, which connects (retrying
// until rank 0 listens) and says who it is; each step then goes through rank 0. Every wait has
// a deadline.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "bootstrap.h"
#include "common/cli.h"

namespace ch14 {
namespace {

using boot::Clock;
using boot::frame;
using boot::read_le64;
constexpr uint64_t kHello = 0x5357313450617274;  // every rank's first 8 bytes to rank 0: "SW14Part"
constexpr uint64_t kMaxMessage = 1 << 20;        // the most bytes one rank sends in one step

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

bool send_all(int fd, const std::string& data) {
  for (size_t done = 0; done < data.size();) {
    const ssize_t w = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

enum class Got { kOk, kClosed, kTimedOut };
Got recv_all(int fd, char* p, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, ms_left(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return Got::kTimedOut;
    const ssize_t r = recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return Got::kClosed;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Got::kOk;
}
Got recv_frame(int fd, std::string* bytes, Clock::time_point deadline) {
  char head[8];
  Got g = recv_all(fd, head, 8, deadline);
  if (g != Got::kOk) return g;
  const uint64_t n = read_le64(head);
  if (n > kMaxMessage) return Got::kClosed;  // not one of ours
  bytes->assign(n, '\0');
  return recv_all(fd, bytes->data(), n, deadline);
}

// --- tcp: a star around rank 0 --------------------------------------------------------------

class TcpBootstrap : public Bootstrap {
 public:
  TcpBootstrap(const RankEnv& env, double timeout_s) : env_(env), timeout_s_(timeout_s) {}
  ~TcpBootstrap() override {
    for (int fd : peer_)
      if (fd >= 0) close(fd);
  }
  std::string describe() const override { return "tcp " + where(); }

  // Rank 0 listens and accepts every other rank; the others connect and say who they are.
  BootStatus start() {
    addrinfo hints{}, *ai = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    const int err = getaddrinfo(env_.addr.c_str(), std::to_string(env_.port).c_str(), &hints, &ai);
    if (err != 0) return {sw::kExitBadInput, "MASTER_ADDR=" + env_.addr + ": " + gai_strerror(err)};
    const BootStatus st = env_.rank == 0 ? listen_and_accept(ai) : connect_to_rank0(ai);
    freeaddrinfo(ai);
    return st;
  }

  BootStatus broadcast(std::string* bytes) override {
    const auto deadline = boot::deadline_after(timeout_s_);
    if (env_.rank != 0) return receive(0, bytes, deadline);
    for (int r = 1; r < env_.size; ++r)
      if (!send_all(peer_[r], frame(*bytes))) return lost(r);
    return {};
  }

  BootStatus allgather(const std::string& mine, std::vector<std::string>* all) override {
    const auto deadline = boot::deadline_after(timeout_s_);
    all->assign(env_.size, "");
    (*all)[env_.rank] = mine;
    if (env_.rank != 0) {
      if (!send_all(peer_[0], frame(mine))) return lost(0);
      for (int r = 0; r < env_.size; ++r)
        if (BootStatus st = receive(0, &(*all)[r], deadline); st.code != 0) return st;
      return {};
    }
    for (int r = 1; r < env_.size; ++r)
      if (BootStatus st = receive(r, &(*all)[r], deadline); st.code != 0) return st;
    std::string everything;
    for (const std::string& one : *all) everything += frame(one);
    for (int r = 1; r < env_.size; ++r)
      if (!send_all(peer_[r], everything)) return lost(r);
    return {};
  }

 private:
  std::string where() const { return env_.addr + ":" + std::to_string(env_.port); }
  BootStatus gave_up(const std::string& what) const { return boot::gave_up(timeout_s_, what); }
  BootStatus lost(int r) const {
    return {kExitBootstrap,
            "bootstrap: rank " + std::to_string(r) + " closed its connection (did it exit?)"};
  }
  // One message from rank `from` (rank 0's socket on every other rank).
  BootStatus receive(int from, std::string* bytes, Clock::time_point deadline) {
    const int fd = peer_[env_.rank == 0 ? from : 0];
    const Got g = recv_frame(fd, bytes, deadline);
    if (g == Got::kTimedOut)
      return gave_up("rank " + std::to_string(env_.rank == 0 ? from : 0) + " sent nothing");
    return g == Got::kOk ? BootStatus{} : lost(env_.rank == 0 ? from : 0);
  }

  BootStatus listen_and_accept(addrinfo* ai) {
    const int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, kMaxRanks) != 0) {
      const std::string why = std::strerror(errno);
      if (fd >= 0) close(fd);
      return {sw::kExitBadInput, "bootstrap: rank 0 cannot listen on " + where() + ": " + why +
                                     " (MASTER_ADDR must be this host's, MASTER_PORT free)"};
    }
    peer_.assign(env_.size, -1);
    const auto deadline = boot::deadline_after(timeout_s_);
    BootStatus st;
    for (int missing = env_.size - 1; missing > 0 && st.code == 0;) {
      pollfd pfd{fd, POLLIN, 0};
      if (poll(&pfd, 1, ms_left(deadline)) == 0) {
        std::string ranks;
        for (int r = 1; r < env_.size; ++r)
          if (peer_[r] < 0) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
        st = gave_up("rank(s) " + ranks + " never connected to " + where());
        break;
      }
      const int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      char hello[24];  // magic, rank, world size: 8 bytes each
      if (c < 0 || recv_all(c, hello, sizeof hello, deadline) != Got::kOk ||
          read_le64(hello) != kHello) {
        if (c >= 0) close(c);  // not one of our ranks: ignored
        continue;
      }
      const auto r = static_cast<int64_t>(read_le64(hello + 8));
      const auto size = static_cast<int64_t>(read_le64(hello + 16));
      if (size != env_.size || r < 1 || r >= env_.size || peer_[r] >= 0) {
        st = {sw::kExitBadInput, "bootstrap: a process says it is rank " + std::to_string(r) +
                                     " of " + std::to_string(size) +
                                     ", but rank 0 has WORLD_SIZE=" + std::to_string(env_.size) +
                                     " and that rank is taken or invalid"};
        close(c);
        break;
      }
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      peer_[r] = c;
      --missing;
    }
    close(fd);
    return st;
  }

  BootStatus connect_to_rank0(addrinfo* ai) {
    const auto deadline = boot::deadline_after(timeout_s_);
    for (;;) {
      const int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        const int on = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        const std::string hello =
            boot::le64(kHello) + boot::le64(env_.rank) + boot::le64(env_.size);
        peer_.assign(1, fd);
        return send_all(fd, hello) ? BootStatus{} : lost(0);
      }
      if (fd >= 0) close(fd);
      if (Clock::now() >= deadline) return gave_up("no rank 0 listening at " + where());
      std::this_thread::sleep_for(std::chrono::milliseconds(boot::kRetryMs));
    }
  }

  RankEnv env_;
  double timeout_s_;
  std::vector<int> peer_;  // rank 0: every rank's socket (peer_[0] unused); others: rank 0's
};

}  // namespace

BootStatus start_tcp_bootstrap(const RankEnv& env, double timeout_s,
                               std::unique_ptr<Bootstrap>* out) {
  auto b = std::make_unique<TcpBootstrap>(env, timeout_s);
  const BootStatus st = b->start();
  if (st.code == 0) *out = std::move(b);
  return st;
}

}  // namespace ch14
