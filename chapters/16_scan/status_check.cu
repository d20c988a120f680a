// Chapter 16's check of the look-back's status protocol on its own (part of the
// program 16_scan, run by --verify-only): writers publish to a few status words as
// fast as they can, alternating the flag, while readers read the same words. Every
// publication carries its flag in its value too, so a reader that ever sees a flag
// from one publication with the value of another (a torn read: two loads where one
// belongs) is counted. The scans' own checks catch such a race only when it happens
// to change a prefix; this check provokes it. It also counts the reads that saw a
// new publication: without them (writers and readers not running together) it
// proves nothing, and says so.
#include <cstdint>
#include <string>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/device.h"
#include "common/report.h"
#include "scan_lookback.cuh"

namespace {

using ch16::Count;

constexpr int kSlots = 64;  // status words shared by writers and readers
constexpr int kThreads = 256;
constexpr int kWriterBlocks = 2;  // 8 writers per word
constexpr int kReaderBlocks = 32;
constexpr int kReads = 1 << 11;      // reads per reader thread
constexpr int kMaxWrites = 1 << 16;  // publications per writer thread, at most
constexpr int kDoneCheckEvery = 64;  // publications between two looks at the readers' counter
constexpr int kMaxWait = 1 << 20;    // polls of a reader for the writers' start, at most
constexpr Count kMinChanges = 1000;  // reads that saw a new publication: the check had teeth

struct Counters {
  unsigned started, readers_done;
  Count reads, torn, changes;
};

// Publication k of a writer: the flag alternates (aggregate, inclusive), and the
// value's low 2 bits repeat the flag.
__global__ void __launch_bounds__(kThreads) stress_status(Count* words, Counters* c) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> started(c->started), done(c->readers_done);
  const int slot = threadIdx.x % kSlots;
  if (blockIdx.x < kWriterBlocks) {
    started.store(1u, cuda::memory_order_relaxed);
    for (int k = 0; k < kMaxWrites; ++k) {
      const unsigned flag = k % 2 ? ch16::kInclusive : ch16::kAggregate;
      ch16::publish(words + slot, flag, (Count(k) << 2) | flag);
      if (k % kDoneCheckEvery == 0 &&
          done.load(cuda::memory_order_relaxed) == kReaderBlocks * kThreads)
        break;
    }
    return;
  }
  for (int w = 0; w < kMaxWait && started.load(cuda::memory_order_relaxed) == 0; ++w) {
  }
  Count torn = 0, changes = 0;
  unsigned last = ch16::kInvalid;
  for (int k = 0; k < kReads; ++k) {
    const ch16::TileStatus s = ch16::read_status(words + slot);
    torn += s.flag != ch16::kInvalid && (s.bits & 3) != s.flag;
    changes += s.flag != last;
    last = s.flag;
  }
  atomicAdd(&c->reads, Count{kReads});
  atomicAdd(&c->torn, torn);
  atomicAdd(&c->changes, changes);
  __syncthreads();
  if (threadIdx.x == 0) done.fetch_add(kThreads, cuda::memory_order_relaxed);
}

}  // namespace

void check_status_protocol(sw::Report& report) {
  sw::DeviceBuffer<Count> words(kSlots);
  sw::DeviceBuffer<Counters> counters(1);
  CUDA_CHECK(cudaMemset(words.get(), 0, words.bytes()));
  CUDA_CHECK(cudaMemset(counters.get(), 0, counters.bytes()));
  stress_status<<<kWriterBlocks + kReaderBlocks, kThreads>>>(words.get(), counters.get());
  CHECK_LAUNCH();
  const Counters c = sw::read(counters.get());
  const bool teeth = c.changes >= kMinChanges;
  const std::string what = "status-protocol stress: " + std::to_string(c.reads) + " reads of " +
                           std::to_string(kSlots) + " words under " +
                           std::to_string(kWriterBlocks * kThreads) + " writers, " +
                           std::to_string(c.changes) + " saw a new publication";
  const std::string detail =
      c.torn ? std::to_string(c.torn) +
                   " torn reads: a flag from one publication, a value from another"
      : teeth ? ""
              : "inconclusive: the readers saw fewer than " + std::to_string(kMinChanges) +
                    " new publications (writers and readers did not overlap)";
  report.check(c.torn == 0, what, detail);
}
