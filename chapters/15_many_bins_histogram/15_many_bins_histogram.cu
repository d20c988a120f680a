// Chapter 15: histograms with many bins: narrow counters, clusters, and which technique
// wins at which bin count.
//
// What changed:  chapter 08 had 256 bins, small enough for 32 private copies per block.
//                Here there are 256 to 2^20 bins (16-bit values up to 65,536 bins,
//                32-bit values below 2^20 beyond), and from about 58K bins not even one
//                32-bit copy fits in an SM's shared memory. One measured step at a time:
//                  global-atomic     every value adds 1 to its 64-bit counter in global memory
//                  global-match      lanes of a warp holding the same bin add once
//                                    (__match_any_sync)
//                  shared32          one 32-bit histogram per block in shared memory, up to
//                                    ~58K bins (227 KiB / 4 B); +1 atomics that return nothing
//                  packed16          two 16-bit counters per 32-bit word, twice the bins; each
//                                    atomic returns the old word, and the add that wraps a
//                                    counter hands 2^16 to global memory
//                  packed16-batch    + 16 atomics, then one test of all their returned words
//                                    (an OR), instead of a test and a branch after each
//                  packed16-hot      + each warp elects a hot bin, and its lanes count that bin
//                                    in a register: repeated values stop queuing on one word
//                  cluster-dsmem     the Programming Guide's design: a cluster of 2 to 16 blocks
//                                    splits the bins, and every value is an atomic add on its
//                                    owner block's shared memory (distributed shared memory)
//                  cluster-packed16  the same with packed 16-bit counters (2^20 bins fit in 16 SMs)
//                  partition         beyond one SM's bins: pass 1 sorts each tile's values by
//                                    slice of 65,536 bins into global memory, pass 2 counts each
//                                    slice in one block with packed16-hot's counting
//                  auto              what a library would ship: shared32 where 32-bit counters
//                                    fit in one block, packed16-hot where 16-bit ones do, else
//                                    partition
// Why faster:    a shared-memory atomic stays in the SM; a global one travels to L2, and
//                one L2 address takes one atomic at a time. 16-bit counters double the
//                bins an SM holds. A register holds a hot bin's count for free. A remote
//                (DSMEM) atomic crosses the SM-to-SM network for every value; the partition
//                pass moves 2 bytes per value through DRAM instead, in 16-byte stores.
// Bottleneck:    global atomics: the L2's atomic units; shared memory: the atomic unit (bank
//                conflicts on uniform values, one word on repeated values) and, for packed
//                counters, the instructions that test the returned words; clusters: the
//                remote atomics; partition: DRAM traffic (4 + 2 + 2 bytes per 32-bit value)
//                and the tile sort.
// Steps:         global-atomic, global-match, shared32, packed16, packed16-batch, packed16-hot,
//                cluster-dsmem, cluster-packed16, partition, auto
// Run:           build/chapters/15_many_bins_histogram [--n 2^28] [--bins B]
//                [--dist uniform|image | --dist equal --value V | --dist mix --value V --p P]
//                [--variant NAME] [--offset K] [--json]
//                build/chapters/15_many_bins_histogram --verify-only [--large]
//                Without --bins/--dist: the headline inputs at 65,536 and 2^20 bins, the
//                p-sweep at 65,536 bins, and the regime map from 256 to 2^20 bins.
// Files:         this file (steps 3 to 6, the shared-memory ones; auto; the step table;
//                main); counting.cuh (what every step shares); packed16.cuh (packed
//                counters, the carry proof); steps_1_global.cuh, steps_3_clusters.cuh,
//                steps_4_partition.cuh (the other kernels and launchers);
//                many_bins_harness.* (the problem: options, inputs, rows, a measured row);
//                many_bins_checks.cu (--verify-only); many_bins_data.* (the inputs on the
//                GPU, the CPU reference).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/bench/program.h"
#include "common/cuda_utils.cuh"
#include "counting.cuh"
#include "many_bins_harness.h"
#include "packed16.cuh"
#include "steps_1_global.cuh"
#include "steps_3_clusters.cuh"
#include "steps_4_partition.cuh"

namespace ch15 {

// Steps 3 to 6: one histogram per block in shared memory, with 32-bit counters
// (shared32) or two 16-bit counters per word (packed16, packed16-batch, packed16-hot).
// Each step is its counter; one kernel and one launcher, at the end, serve all four.

constexpr int kColdLanes = 8;  // packed16-hot: fewer lanes than this on the hot bin drop it

// =========================================================================================
// Step 3: shared32. One 32-bit histogram per block in shared memory: +1 atomics that
// stay in the SM (the hardware merges lanes adding 1 to the same word), then the
// block's row of counters goes to memory once.
// =========================================================================================

template <class T>
struct Shared32Counter {
  static constexpr bool kPacked = false;  // a word per bin
  uint32_t* counts;
  uint32_t bins;
  HistCount* hist;  // not used: no block counts 2^32 values (see launch_shared)
  __device__ void add(uint32_t key) { atomicAdd(&counts[bin_of_key(key, bins)], 1u); }
  __device__ void step(const uint4 (&v)[kUnroll]) { add_all<T>(*this, v); }
  __device__ void flush() {}
};

inline bool fits_shared32(const Job& j) { return int64_t{j.bins} * 4 <= smem_optin(); }

// =========================================================================================
// Step 4: packed16. Two 16-bit counters per word (see packed_add): 65,536 bins in
// 128 KiB, up to ~116K bins in 227 KiB. The atomic must now return the old word, and
// lanes adding to the same word are served one after another.
// =========================================================================================

template <class T>
struct Packed16Counter {
  static constexpr bool kPacked = true;  // bins 2w and 2w + 1 in word w
  uint32_t* words;
  uint32_t bins;
  HistCount* hist;
  __device__ void add(uint32_t key) {
    const uint32_t bin = bin_of_key(key, bins);
    packed_add(words, bin, bin, 1, bins, hist);
  }
  __device__ void step(const uint4 (&v)[kUnroll]) { add_all<T>(*this, v); }
  __device__ void flush() {}
};

inline bool fits_packed16(const Job& j) { return packed_words(j.bins) * 4 <= smem_optin(); }

// =========================================================================================
// Step 5: packed16-batch. The same counters; the main loop's values go through
// packed_add_batch: kBatchValues atomics, then one test of all their returned words,
// instead of a test and a branch after every atomic.
// =========================================================================================

template <class T>
struct Packed16BatchCounter : Packed16Counter<T> {
  __device__ void step(const uint4 (&v)[kUnroll]) {
    packed_add_batch<T, false>(this->words, this->bins, this->hist, v);
  }
};

// =========================================================================================
// Step 6: packed16-hot. Once per step of the main loop the warp votes: when at least
// kHotLanes lanes hold lane 0's first bin, that bin becomes the warp's hot bin (until
// another wins a vote, or fewer than kColdLanes lanes' first values hold it). Each
// lane then counts the hot bin in a register and sends only the other values to
// shared memory (packed_add_batch, as packed16-batch); the register count goes there
// in one add of up to kFlushAt + 31, when it grows large, when the hot bin changes,
// and at the end. Uniform values rarely elect anything: a warp without a hot bin
// takes packed16-batch's path, without a compare per value.
// =========================================================================================

template <class T>
struct PackedHotCounter {
  static constexpr bool kPacked = true;
  uint32_t* words;
  uint32_t bins;
  HistCount* hist;
  uint32_t hot = kNoBin;  // the same in every lane of the warp
  uint32_t count = 0;     // this lane's values of bin `hot` not yet in shared memory

  __device__ void flush() {
    if (count) packed_add(words, hot, hot, count, bins, hist);
    count = 0;
  }
  __device__ void add(uint32_t key) {
    const uint32_t bin = bin_of_key(key, bins);
    if (bin != hot) {
      packed_add(words, bin, bin, 1, bins, hist);
    } else if (++count >= kFlushAt) {
      flush();
    }
  }
  __device__ void elect(uint32_t mine) {  // the whole warp is here
    const uint32_t lead = __shfl_sync(kFullMask, mine, 0);
    const unsigned agree = __ballot_sync(kFullMask, mine == lead);
    if (lead != hot && __popc(agree) >= kHotLanes) {
      flush();
      hot = lead;
    } else if (hot != kNoBin && __popc(__ballot_sync(kFullMask, mine == hot)) < kColdLanes) {
      flush();  // the hot bin has cooled: its compare per value no longer pays
      hot = kNoBin;
    }
  }
  __device__ void step(const uint4 (&v)[kUnroll]) {
    elect(bin_of_key(key_at<T>(v[0], 0), bins));
    if (hot == kNoBin) {  // the same in the whole warp: no compare per value while nothing is hot
      packed_add_batch<T, false>(words, bins, hist, v);
      return;
    }
    count += packed_add_batch<T, true>(words, bins, hist, v, hot);
    if (count >= kFlushAt) flush();  // at most kFlushAt - 1 + kUnroll * 8 < 2^16
  }
};

// --- the four steps' kernel and launcher ------------------------------------------------

// The block's histogram in shared memory: zeroed, every value of the block's share
// counted by Counter, then stored as the block's row of `partials`.
template <class T, template <class> class Counter>
__global__ void __launch_bounds__(kBlockThreads)
    count_shared(const T* __restrict__ in, int64_t n, uint32_t bins, HistCount* __restrict__ hist,
                 uint32_t* __restrict__ partials, uint32_t* __restrict__ row_base) {
  extern __shared__ uint32_t words[];  // [bins], or [(bins + 1) / 2] packed
  const int64_t nwords = Counter<T>::kPacked ? (int64_t{bins} + 1) / 2 : bins;
  for (int64_t i = threadIdx.x; i < nwords; i += kBlockThreads) words[i] = 0;
  __syncthreads();
  Counter<T> counter{words, bins, hist};
  count_input<T, kBlockThreads>(in, n, counter);
  counter.flush();
  __syncthreads();
  store_row(words, nwords, partials, row_base, 0);
}

// A full wave of blocks; with 32-bit counters also enough blocks that none counts
// kMaxValuesPerBlock values or more (packed counters hand their wraps over).
template <class T, template <class> class Counter>
void launch_shared(const Job& j) {
  constexpr bool kPacked = Counter<T>::kPacked;
  const int64_t nwords = kPacked ? packed_words(j.bins) : j.bins;
  const size_t smem = sizeof(uint32_t) * nwords;
  const int64_t resident = wave(count_shared<T, Counter>, kBlockThreads, smem);
  const int64_t grid =
      kPacked ? resident : std::max(resident, sw::ceil_div(j.n, kMaxValuesPerBlock));
  uint32_t* partials = Workspace::grow(j.ws->partials, grid * nwords);
  uint32_t* row_base = Workspace::grow(j.ws->row_base, grid);
  zero_hist(j);
  count_shared<T, Counter>
      <<<grid, kBlockThreads, smem>>>(j.values<T>(), j.n, j.bins, j.hist, partials, row_base);
  CHECK_LAUNCH();
  add_partials<kPacked><<<add_grid<kPacked>(j.bins, grid), kAddThreads>>>(partials, row_base, grid,
                                                                          nwords, j.bins, j.hist);
  CHECK_LAUNCH();
}

// =========================================================================================
// Step 10: auto, the choice a library would make from the bin count and the GPU alone:
// shared32 while 32-bit counters fit in one block's shared memory (its +1 atomics need
// no answer), packed16-hot while 16-bit ones do, partition beyond.
// =========================================================================================

bool fits_auto(const Job& j) { return fits_shared32(j) || fits_packed16(j) || fits_partition(j); }

template <class T>
Launch pick_auto(const Job& j) {
  if (fits_shared32(j)) return launch_shared<T, Shared32Counter>;
  if (fits_packed16(j)) return launch_shared<T, PackedHotCounter>;
  return launch_partition<T>;
}

// --- the steps ----------------------------------------------------------------------------

// One table per value type: the same steps, their kernels compiled for T.
template <class T>
const std::vector<Step> kSteps = {
    {"global-atomic", launch_global<T, GlobalCounter>, {always}},
    {"global-match", launch_global<T, MatchCounter>, {always}},
    {"shared32", launch_shared<T, Shared32Counter>, {fits_shared32}},
    {"packed16", launch_shared<T, Packed16Counter>, {fits_packed16}},
    {"packed16-batch", launch_shared<T, Packed16BatchCounter>, {fits_packed16}},
    {"packed16-hot", launch_shared<T, PackedHotCounter>, {fits_packed16}},
    {"cluster-dsmem", launch_cluster<T, false>, {fits_cluster<T, false>, clusters_for<T, false>}},
    {"cluster-packed16", launch_cluster<T, true>, {fits_cluster<T, true>, clusters_for<T, true>}},
    {"partition", launch_partition<T>, {fits_partition}},
    {"auto", nullptr, {fits_auto, nullptr, pick_auto<T>}},
};

const std::vector<Step>& steps_for(int value_bits) {
  return dispatch_bits(value_bits,
                       [](auto t) -> const std::vector<Step>& { return kSteps<decltype(t)>; });
}

}  // namespace ch15

// The program: its step table is the 16-bit one (the names are the same at both widths).
int main(int argc, char** argv) {
  const sw::bench::Program<ch15::Step> program{
      "15_many_bins_histogram",
      "Histograms of 256 to 2^20 bins: global atomics, shared memory, packed 16-bit counters, "
      "clusters.",
      "15",
      ch15::kSteps<uint16_t>,
      {"cub"}};
  return sw::bench::run(argc, argv, program, ch15::ManyBins{});
}
