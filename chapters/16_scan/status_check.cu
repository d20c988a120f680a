// Chapter 16's check of the look-back's status protocol on its own (part of the
// program 16_scan, run by --verify-only): writers publish to a few status words as
// fast as they can, alternating the flag, while readers read the same words. Every
// publication carries its flag in its value too, so a reader that ever sees a flag
// from one publication with the value of another (a torn read: two loads where one
// belongs) is counted. The scans' own checks catch such a race only when it happens
// to change a prefix; this check provokes it.
// It must also see the readers' loads reach the L2: a reader reads at least kReads
// times and then on until it has seen kFreshWanted reads that returned a newer
// publication than its read before (at most kMaxReads reads); the check fails unless
// every reader saw them. A plain load (served by a stale L1 line, or hoisted out of the
// reader's loop by the compiler) sees none: `--verify-only --planted plain-load` runs
// this check with such a reader, and the test that runs it expects it to fail. How
// often a read is fresh depends on how fast the writers publish: a publication with a
// stronger order or scope (a fence per store) is slower but just as correct, so the
// check asks each reader for a number of fresh reads, not a share of its reads.
// The run is a sw::bench::check_once whose outputs are the counters, so that the lab
// grader's --check-outputs judges this check from a dump too.
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench/protocol.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/device.h"
#include "common/report.h"
#include "scan_lookback.cuh"

namespace status_check {
namespace {

using ch16::Count;

constexpr int kSlots = 64;  // status words shared by writers and readers
constexpr int kThreads = 256;
constexpr int kWriterBlocks = 2;  // 8 writers per word
constexpr int kReaderBlocks = 32;
constexpr int kReads = 1 << 11;      // reads per reader thread, at least
constexpr int kMaxReads = 1 << 18;   // ... and at most, while it waits for fresh ones
constexpr int kFreshWanted = 8;      // newer publications a reader must see
constexpr int kMaxWrites = 1 << 20;  // publications per writer thread, at most (readers stop them)
constexpr int kDoneCheckEvery = 64;  // publications between two looks at the readers' counter
constexpr int kMaxWait = 1 << 20;    // polls of a reader for the writers' start, at most

struct Counters {
  unsigned started, readers_done;
  Count reads, torn, fresh, readers_fresh;  // readers_fresh: readers that saw kFreshWanted
};

// A reader's look at a status word: read_status (one relaxed load at device scope), or,
// planted, a plain load that the L1 may serve and the compiler may hoist out of the loop.
template <bool kPlainLoad>
__device__ __forceinline__ ch16::TileStatus look(Count* word) {
  if constexpr (kPlainLoad) {
    const Count s = *word;
    return {static_cast<unsigned>(s >> ch16::kFlagShift), s & ch16::kValueMask};
  } else {
    return ch16::read_status(word);
  }
}

// Publication k of a writer: the flag alternates (aggregate, inclusive), and the
// value's low 2 bits repeat the flag.
template <bool kPlainLoad>
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
  Count torn = 0, fresh = 0, last = 0;  // last: the value of this reader's previous read
  unsigned last_flag = ch16::kInvalid;
  int k = 0;
  for (; k < kMaxReads && (k < kReads || fresh < kFreshWanted); ++k) {
    const ch16::TileStatus s = look<kPlainLoad>(words + slot);
    torn += s.flag != ch16::kInvalid && (s.bits & 3) != s.flag;
    fresh += last_flag != ch16::kInvalid && s.bits != last;  // not the first sight: a newer one
    last = s.bits;
    last_flag = s.flag;
  }
  atomicAdd(&c->reads, Count(k));
  atomicAdd(&c->torn, torn);
  atomicAdd(&c->fresh, fresh);
  if (fresh >= kFreshWanted) atomicAdd(&c->readers_fresh, Count{1});
  __syncthreads();
  if (threadIdx.x == 0) done.fetch_add(kThreads, cuda::memory_order_relaxed);
}

// The stress run as the protocol's check_once sees it (common/bench/protocol.h): the
// status words and counters zeroed before the run, the counters its verdict reads (every
// reader's reads counted, no torn read, every reader with its fresh ones).
struct StressData {
  Count* words;
  Counters* counters;
  void poison() const {
    CUDA_CHECK(cudaMemset(words, 0, kSlots * sizeof(Count)));
    CUDA_CHECK(cudaMemset(counters, 0, sizeof(Counters)));
  }
  sw::bench::Verdict check() const {
    const Counters c = sw::read(counters);
    constexpr Count kReaders = Count{kReaderBlocks} * kThreads;
    if (c.reads < kReaders * kReads || c.reads > kReaders * kMaxReads)
      return {false, "the readers made " + std::to_string(c.reads) + " reads, not " +
                         std::to_string(kReaders * kReads) + " to " +
                         std::to_string(kReaders * kMaxReads) +
                         ": the stress run did not end as it must"};
    if (c.torn)
      return {false, std::to_string(c.torn) +
                         " torn reads: a flag from one publication, a value from another"};
    if (c.readers_fresh != kReaders)
      return {false, std::to_string(kReaders - c.readers_fresh) + " of " +
                         std::to_string(kReaders) + " readers saw fewer than " +
                         std::to_string(kFreshWanted) + " newer publications in " +
                         std::to_string(kMaxReads) +
                         " reads: the readers' loads do not reach the L2 (a stale L1 line, or a "
                         "load hoisted out of the loop), or writers and readers did not overlap"};
    return {};
  }
  std::vector<sw::bench::Buffer> outputs() const { return {{counters, sizeof(Counters)}}; }
};

template <bool kPlainLoad>
void launch_stress(const StressData& d) {
  stress_status<kPlainLoad><<<kWriterBlocks + kReaderBlocks, kThreads>>>(d.words, d.counters);
  CHECK_LAUNCH();
}

}  // namespace
}  // namespace status_check

// plant: "none", or "plain-load" (the readers' planted plain load: the check must fail).
void check_status_protocol(sw::Report& report, const std::string& plant) {
  using namespace status_check;  // the portable build compiles 16_scan as one file
  sw::DeviceBuffer<Count> words(kSlots);
  sw::DeviceBuffer<Counters> counters(1);
  const StressData data{words.get(), counters.get()};
  const bool planted = plant == "plain-load";
  const sw::bench::Verdict v =
      sw::bench::check_once(data, planted ? launch_stress<true> : launch_stress<false>, data);
  const Counters c = sw::read(counters.get());
  report.check(v.ok,
               std::string("status-protocol stress") + (planted ? " (planted: a plain load)" : "") +
                   ": " + std::to_string(c.reads) + " reads of " + std::to_string(kSlots) +
                   " words under " + std::to_string(kWriterBlocks * kThreads) + " writers, " +
                   std::to_string(c.fresh) + " saw a newer publication",
               v.detail);
}
