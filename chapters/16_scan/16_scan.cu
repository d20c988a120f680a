// Chapter 16: the prefix sum (scan), from a block's tree to a single pass at copy speed.
//
// What changed:  a reduction keeps one sum; a scan keeps every partial sum:
//                out[i] = in[0] + ... + in[i] (inclusive) or up to in[i - 1]
//                (exclusive). u32 wraps modulo 2^32, so its check is exact; f32 is
//                checked against the bound of its order of additions. The steps:
//   hillis-steele       one element a thread, log2(1024) rounds in which every element
//                       adds the one d places back: n log n additions. Each block scans
//                       its 1024 elements and writes their sum; the sums are scanned the
//                       same way (recursively); a third kernel adds each block's offset.
//   blelloch            the same three phases; the block's scan is Blelloch's up-sweep
//                       and down-sweep in shared memory: 2n additions, two per thread.
//   blelloch-padded     + one padding word per 32, so the tree's strided accesses no
//                       longer fall into one bank (chapter 11's lesson, met again).
//   warp-shuffle        + the block's scan from __shfl_up_sync warp scans, no tree.
//   reduce-then-scan    tiles of 16-byte loads: each tile's sum, one block scans the sums,
//                       each tile scanned again from its offset: 3n traffic, not 4n.
//   chained             one pass: each tile, numbered by a ticket, waits for the
//                       inclusive prefix of the tile before it. 2n traffic, but the
//                       tiles finish one after another.
//   decoupled-lookback  each tile publishes its aggregate at once, and looks back over
//                       its predecessors' aggregates until an inclusive prefix (Merrill
//                       and Garland, 2016): flag and value share one 64-bit word.
//   lookback-vec        + 16-byte loads and more elements per thread; the default run
//                       sweeps its tile (--tile-rows x --block) and uses the fastest.
//                cub::DeviceScan runs in the same program; the f32 rows carry a census
//                of distinct outputs over repeated runs (the look-back's order varies).
// Bottleneck:    DRAM bandwidth once the scan reads and writes each element once.
// Steps:         hillis-steele, blelloch, blelloch-padded, warp-shuffle, reduce-then-scan,
//                chained, decoupled-lookback, lookback-vec
// Run:           build/chapters/16_scan [--n 2^28] [--type u32] [--variant lookback-vec]
//                [--tile-rows 4 --block 256] [--verify-only [--large]] [--json]
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/parallel.h"
#include "common/scan_harness.h"
#include "scan_lookback.cuh"  // the shared scan: warp scans, tiles, the look-back

namespace {

namespace sc = sw::scan;
using ch16::Count;
using ch16::Lookback;

constexpr int kClassicTile = 1024;    // elements a block scans in steps 2 to 4
constexpr int kBanks = 32;            // shared-memory banks of 4 bytes
constexpr int kPropagateBlock = 256;  // threads adding one block's offset to its 1024 elements
constexpr int kScalarRows = 8;        // chained and decoupled-lookback: 8 elements a thread
constexpr int kSumsBlock = 1024;      // the one block that scans the tile sums

// --- steps 2 to 4: scan each block, scan the block sums, add the offsets ---------------------

// Hillis-Steele: at round d every element adds the one d places back, reading one
// buffer and writing the other, so no element is read after it changed in a round.
template <class T>
__global__ void __launch_bounds__(kClassicTile)
    scan_hillis_steele(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive, T* sums) {
  __shared__ T buf[2][kClassicTile];
  const int t = threadIdx.x;
  const int64_t i = int64_t{blockIdx.x} * kClassicTile + t;
  buf[0][t] = i < n ? in[i] : T{};
  __syncthreads();
  int cur = 0;
  for (int d = 1; d < kClassicTile; d *= 2) {
    buf[1 - cur][t] = t >= d ? buf[cur][t - d] + buf[cur][t] : buf[cur][t];
    cur = 1 - cur;
    __syncthreads();
  }
  if (i < n) out[i] = inclusive ? buf[cur][t] : t > 0 ? buf[cur][t - 1] : T{};
  if (t == kClassicTile - 1) sums[blockIdx.x] = buf[cur][t];
}

// Blelloch: the up-sweep builds partial sums in place (a tree), the down-sweep
// pushes each prefix back down: an exclusive scan of 2 elements per thread.
// kPadded inserts a word after every 32, so the tree's strides spread over the banks.
template <class T, bool kPadded>
__global__ void __launch_bounds__(kClassicTile / 2)
    scan_blelloch(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive, T* sums) {
  __shared__ T s[kClassicTile + (kPadded ? kClassicTile / kBanks : 0)];
  const auto at = [](int k) { return kPadded ? k + k / kBanks : k; };
  const int t = threadIdx.x, a = t, b = t + kClassicTile / 2;
  const int64_t base = int64_t{blockIdx.x} * kClassicTile;
  const T xa = base + a < n ? in[base + a] : T{}, xb = base + b < n ? in[base + b] : T{};
  s[at(a)] = xa;
  s[at(b)] = xb;
  int stride = 1;
  for (int d = kClassicTile / 2; d > 0; d /= 2, stride *= 2) {  // up-sweep
    __syncthreads();
    if (t < d) s[at(stride * (2 * t + 2) - 1)] += s[at(stride * (2 * t + 1) - 1)];
  }
  __syncthreads();
  if (t == 0) {
    sums[blockIdx.x] = s[at(kClassicTile - 1)];
    s[at(kClassicTile - 1)] = T{};
  }
  for (int d = 1; d < kClassicTile; d *= 2) {  // down-sweep
    stride /= 2;
    __syncthreads();
    if (t < d) {
      const int left = at(stride * (2 * t + 1) - 1), right = at(stride * (2 * t + 2) - 1);
      const T l = s[left];
      s[left] = s[right];
      s[right] += l;
    }
  }
  __syncthreads();
  if (base + a < n) out[base + a] = inclusive ? s[at(a)] + xa : s[at(a)];
  if (base + b < n) out[base + b] = inclusive ? s[at(b)] + xb : s[at(b)];
}

// Warp shuffles: chapter 16's tile scan (scan_lookback.cuh) with one element a thread.
template <class T>
__global__ void __launch_bounds__(kClassicTile)
    scan_warp_shuffle(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive, T* sums) {
  ch16::scan_tile<T, 1, 1>(in, out, n, blockIdx.x, inclusive, [&](T aggregate) {
    if (threadIdx.x == 0) sums[blockIdx.x] = aggregate;
    return T{};
  });
}

// Adds block b's offset (the exclusive scan of the block sums) to its 1024 elements.
template <class T>
__global__ void __launch_bounds__(kPropagateBlock) add_offsets(T* out, int64_t n, const T* __restrict__ offsets) {
  const T offset = offsets[blockIdx.x];
  for (int k = threadIdx.x; k < kClassicTile; k += kPropagateBlock) {
    const int64_t i = int64_t{blockIdx.x} * kClassicTile + k;
    if (i < n) out[i] = offset + out[i];
  }
}

// Scratch grows in 16-byte steps, so every buffer carved from it stays aligned.
constexpr int64_t aligned(int64_t count) { return sw::ceil_div(count, 4) * 4; }

// Scan of in into out with a block-scan kernel: block sums into scratch, their
// exclusive scan (the same way, one level down), then the offsets added.
template <class T>
void scan_then_propagate(void (*kernel)(const T*, T*, int64_t, bool, T*), int threads, const T* in, T* out,
                         int64_t n, bool inclusive, T* scratch, cudaStream_t stream) {
  const unsigned blocks = ch16::tile_count(n, kClassicTile, 1, 1);
  T* sums = scratch;
  T* offsets = scratch + aligned(blocks);
  kernel<<<blocks, threads, 0, stream>>>(in, out, n, inclusive, sums);
  CHECK_LAUNCH();
  if (blocks == 1) return;
  scan_then_propagate(kernel, threads, sums, offsets, blocks, false, offsets + aligned(blocks), stream);
  add_offsets<<<blocks, kPropagateBlock, 0, stream>>>(out, n, offsets);
  CHECK_LAUNCH();
}

template <class T>
int64_t launch_hillis_steele(const sc::ScanCall<T>& c) {
  scan_then_propagate<T>(scan_hillis_steele<T>, kClassicTile, c.in, c.out, c.n, c.inclusive, c.partials, c.stream);
  return 0;
}
template <class T>
int64_t launch_blelloch(const sc::ScanCall<T>& c) {
  scan_then_propagate<T>(scan_blelloch<T, false>, kClassicTile / 2, c.in, c.out, c.n, c.inclusive, c.partials,
                         c.stream);
  return 0;
}
template <class T>
int64_t launch_blelloch_padded(const sc::ScanCall<T>& c) {
  scan_then_propagate<T>(scan_blelloch<T, true>, kClassicTile / 2, c.in, c.out, c.n, c.inclusive, c.partials,
                         c.stream);
  return 0;
}
template <class T>
int64_t launch_warp_shuffle(const sc::ScanCall<T>& c) {
  scan_then_propagate<T>(scan_warp_shuffle<T>, kClassicTile, c.in, c.out, c.n, c.inclusive, c.partials, c.stream);
  return 0;
}

// --- step 5: reduce, scan the tile sums, scan each tile from its offset -----------------------

template <class T, int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock) reduce_tiles(const T* __restrict__ in, int64_t n, T* sums) {
  constexpr int V = ch16::kVec16<T>;
  ch16::Vec<T, V> x[kRows];
  ch16::load_rows<T, V, kRows>(in, n, ch16::lane_first<V, kRows>(blockIdx.x), ch16::tile_whole<V, kRows>(blockIdx.x, n),
                               x);
  T s = T{};
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int k = 0; k < V; ++k) s += x[r].v[k];
  T aggregate;
  ch16::warps_before(ch16::warp_sum_all(s), &aggregate);
  if (threadIdx.x == 0) sums[blockIdx.x] = aggregate;
}

// One block: each thread sums a contiguous run of the tile sums, the block scans the
// runs' sums, each thread writes its run's exclusive scan.
template <class T>
__global__ void __launch_bounds__(kSumsBlock) scan_tile_sums(const T* __restrict__ sums, T* offsets, int64_t count) {
  const int64_t per = sw::ceil_div(count, kSumsBlock);
  const int64_t begin = std::min(count, threadIdx.x * per), end = std::min(count, begin + per);
  T s = T{}, total;
  for (int64_t i = begin; i < end; ++i) s += sums[i];
  T run = ch16::block_exclusive_scan(s, &total);
  for (int64_t i = begin; i < end; ++i) {
    offsets[i] = run;
    run += sums[i];
  }
}

template <class T, int kRows>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    scan_from_offsets(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive, const T* offsets) {
  ch16::scan_tile<T, ch16::kVec16<T>, kRows>(in, out, n, blockIdx.x, inclusive,
                                             [&](T) { return offsets[blockIdx.x]; });
}

// Its tile is fixed (16 elements a thread, 256 threads): --tile-rows and --block tune
// the single-pass steps.
template <class T>
int64_t launch_reduce_then_scan(const sc::ScanCall<T>& c) {
  constexpr int kRows = ch16::kDefaultRows, kBlock = ch16::kDefaultBlock;
  const unsigned tiles = ch16::tile_count(c.n, kBlock, kRows, ch16::kVec16<T>);
  T* sums = c.partials;
  T* offsets = c.partials + aligned(tiles);
  reduce_tiles<T, kRows><<<tiles, kBlock, 0, c.stream>>>(c.in, c.n, sums);
  CHECK_LAUNCH();
  scan_tile_sums<T><<<1, kSumsBlock, 0, c.stream>>>(sums, offsets, tiles);
  CHECK_LAUNCH();
  scan_from_offsets<T, kRows><<<tiles, kBlock, 0, c.stream>>>(c.in, c.out, c.n, c.inclusive, offsets);
  CHECK_LAUNCH();
  return 0;
}

// --- steps 6 to 8: one pass, tiles by ticket, a prefix from the predecessors -----------------

// chained and decoupled-lookback: one pass, a 4-byte load per lane and row; kMode
// says how the tile gets its prefix (chapter 16's lookback_prefix).
template <class T, int kRows, Lookback kMode>
__global__ void __launch_bounds__(ch16::kMaxLookbackBlock)
    scan_one_pass(const T* __restrict__ in, T* __restrict__ out, int64_t n, bool inclusive, Count* state) {
  ch16::single_pass<T, 1, kRows, kMode>(in, out, n, inclusive, state);
}
template <class T, Lookback kMode>
int64_t launch_one_pass(const sc::ScanCall<T>& c) {
  const auto pick = [](auto r) { return scan_one_pass<T, decltype(r)::value, kMode>; };
  return ch16::launch_single_pass<T, 1>(pick, c.in, c.out, c.n, c.inclusive, c.rows, c.block, c.state, c.stream);
}

// The kernel is the header's scan_lookback: chapters 17 and 18 call it too.
template <class T>
int64_t launch_lookback_vec(const sc::ScanCall<T>& c) {
  return ch16::launch_scan_lookback<T>(c.in, c.out, c.n, c.inclusive, c.rows, c.block, c.state, c.stream);
}

// --- error bounds: the most float additions an element passes through ------------------------

// Levels of scan-then-propagate over n elements: 1, plus those of the block sums.
int64_t levels(int64_t n) { return n <= kClassicTile ? 1 : 1 + levels(sw::ceil_div(n, kClassicTile)); }
int64_t depth_hillis_steele(int64_t n, int, int) { return levels(n) * (sw::ceil_log2(kClassicTile) + 2); }
int64_t depth_blelloch(int64_t n, int, int) { return levels(n) * (2 * sw::ceil_log2(kClassicTile) + 3); }
int64_t depth_warp_shuffle(int64_t n, int, int) { return levels(n) * (kClassicTile / sw::kWarp + 14); }
// A tile's own additions: its lane's V, the warp scan's 5, the rows and the warps before.
int64_t tile_depth(int rows, int block, int vec) { return 2 * (vec + rows + block / sw::kWarp) + 16; }
int64_t depth_reduce_then_scan(int64_t n, int, int) {
  constexpr int kRows = ch16::kDefaultRows, kBlock = ch16::kDefaultBlock;
  const int64_t tiles = sw::ceil_div(n, ch16::tile_items(kBlock, kRows, 4));
  return tile_depth(kRows * 4, kBlock, 4) + 2 * sw::ceil_div(tiles, kSumsBlock) + 24;
}
int64_t depth_chained(int64_t n, int rows, int block) {  // each tile adds one addition to the chain
  return sw::ceil_div(n, ch16::tile_items(block, rows, 1)) + tile_depth(rows, block, 1);
}
int64_t depth_lookback(int64_t n, int rows, int block, int vec) {  // two per tile: see warp_lookback
  return 3 * sw::ceil_div(n, ch16::tile_items(block, rows, vec)) + tile_depth(rows, block, vec) + 8;
}
int64_t depth_decoupled(int64_t n, int rows, int block) { return depth_lookback(n, rows, block, 1); }
int64_t depth_lookback_vec(int64_t n, int rows, int block) { return depth_lookback(n, rows, block, 4); }

// --- the CPU baselines ------------------------------------------------------------------------

template <class T>
void cpu_scan_1core(const T* in, T* out, int64_t n, bool inclusive) {
  T run = T{};
  for (int64_t i = 0; i < n; ++i) {
    const T next = run + in[i];
    out[i] = inclusive ? next : run;
    run = next;
  }
}

// Reduce-then-scan on the host: each core sums a slice, the slice sums are scanned,
// each core scans its slice from its offset.
template <class T>
void cpu_scan_all_cores(const T* in, T* out, int64_t n, bool inclusive) {
  const int64_t slices = sw::host_threads();
  std::vector<T> offset(slices + 1, T{});
  sw::parallel_for(slices, [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s)
      for (int64_t i = n * s / slices; i < n * (s + 1) / slices; ++i) offset[s + 1] += in[i];
  }, 1);
  for (int64_t s = 0; s < slices; ++s) offset[s + 1] += offset[s];
  sw::parallel_for(slices, [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s) {
      const int64_t lo = n * s / slices;
      cpu_scan_1core(in + lo, out + lo, n * (s + 1) / slices - lo, inclusive);
      for (int64_t i = lo; i < n * (s + 1) / slices; ++i) out[i] = offset[s] + out[i];
    }
  }, 1);
}

// The version table.
const std::vector<sc::ScanStep> kSteps = {
    {"hillis-steele", launch_hillis_steele<uint32_t>, launch_hillis_steele<float>, depth_hillis_steele},
    {"blelloch", launch_blelloch<uint32_t>, launch_blelloch<float>, depth_blelloch},
    {"blelloch-padded", launch_blelloch_padded<uint32_t>, launch_blelloch_padded<float>, depth_blelloch},
    {"warp-shuffle", launch_warp_shuffle<uint32_t>, launch_warp_shuffle<float>, depth_warp_shuffle},
    {"reduce-then-scan", launch_reduce_then_scan<uint32_t>, launch_reduce_then_scan<float>, depth_reduce_then_scan,
     sc::kGoal},
    {"chained", launch_one_pass<uint32_t, Lookback::kChained>, launch_one_pass<float, Lookback::kChained>,
     depth_chained, sc::kTile | sc::kSlow, kScalarRows},
    {"decoupled-lookback", launch_one_pass<uint32_t, Lookback::kDecoupled>, launch_one_pass<float, Lookback::kDecoupled>,
     depth_decoupled, sc::kTile | sc::kGoal, kScalarRows},
    {"lookback-vec", launch_lookback_vec<uint32_t>, launch_lookback_vec<float>, depth_lookback_vec,
     sc::kTile | sc::kVecTile | sc::kTuned | sc::kGoal, ch16::kDefaultRows},
};

}  // namespace

void check_status_protocol(sw::Report& report);  // status_check.cu

int main(int argc, char** argv) {
  sc::ScanChapter ch{"16_scan", "Prefix sums of u32 and f32: from Hillis-Steele to a single pass with look-back.",
                     "16", kSteps};
  ch.cpu_1core_u32 = cpu_scan_1core<uint32_t>;
  ch.cpu_all_u32 = cpu_scan_all_cores<uint32_t>;
  ch.cpu_1core_f32 = cpu_scan_1core<float>;
  ch.cpu_all_f32 = cpu_scan_all_cores<float>;
  ch.tiles = {ch16::ScanRows::list(),
              {std::begin(ch16::kBlockChoices), std::end(ch16::kBlockChoices)},
              ch16::kDefaultBlock,
              {2, 4, 8},
              {128, 256, 512}};
  ch.extra_checks = check_status_protocol;
  return sc::run_scan_chapter(argc, argv, ch);
}
