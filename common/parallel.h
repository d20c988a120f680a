// parallel_for: split [0, n) across the host's cores.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace sw {

// The host's cores (at least 1).
inline int64_t host_threads() { return std::max<int64_t>(1, std::thread::hardware_concurrency()); }

// Calls body(begin, end) on disjoint, contiguous pieces of [0, n), one thread per
// piece. `grain` is the fewest items worth a thread of their own: 65536 for
// elements (the default), 1 when each item is already a large chunk of work.
template <class Body>
void parallel_for(int64_t n, Body&& body, int64_t grain = 65536) {
  const int64_t threads = std::clamp<int64_t>(n / std::max<int64_t>(grain, 1), 1, host_threads());
  if (threads == 1) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    pool.emplace_back([&body, begin, end] { body(begin, end); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace sw
