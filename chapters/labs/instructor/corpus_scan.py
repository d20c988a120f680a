"""Correct solutions of the scan track's tasks, written differently from the reference
(see corpus.py)."""
from mistakes import Mistake, region_body

SCAN_H = "chapters/16_scan/scan_lookback.cuh"
CH18 = "chapters/18_radix_sort/18_radix_sort.cu"

# --- warp-scan: the whole body of warp_inclusive_scan ---------------------------------------------
# The float bound (16_scan.cu, tile_depth) counts 5 additions for the warp scan: every variant
# below adds at most one value into each lane's running value per step, in 5 steps (the
# two-halves variant: 4 steps and one addition), so no element passes more than 5 additions.
WARP_SCAN = region_body(SCAN_H, "warp-scan")  # the reference's whole region

WARP_SCAN_DESCENDING = """  // The shift scan with the distances in the other order, 16, 8, 4, 2, 1: the sums of
  // distinct distances are still every s in 0..31 once, and the guard (the lane where each
  // step adds is at least its distance) holds for every term with s <= lane.
  const int lane = threadIdx.x % sw::kWarp;
#pragma unroll
  for (int d = sw::kWarp / 2; d >= 1; d /= 2) {
    const T up = __shfl_up_sync(sw::kFullMask, v, d);
    if (lane >= d) v += up;
  }
  return v;
"""

WARP_SCAN_SELECT = """  // No branch: a lane below the distance adds the identity T{} (exact, in float too).
  const int lane = threadIdx.x % sw::kWarp;
  int d = 1;
  while (d < sw::kWarp) {
    const T up = __shfl_up_sync(sw::kFullMask, v, d);
    v += lane >= d ? up : T{};
    d *= 2;
  }
  return v;
"""

WARP_SCAN_SOURCE_LANE = """  // __shfl_sync with the source lane written out: lane - d, or the lane itself below d
  // (whose own value it then ignores).
  const int lane = threadIdx.x % sw::kWarp;
#pragma unroll
  for (int d = 1; d < sw::kWarp; d <<= 1) {
    const int src = lane >= d ? lane - d : lane;
    const T got = __shfl_sync(sw::kFullMask, v, src);
    if (src != lane) v += got;
  }
  return v;
"""

WARP_SCAN_SKLANSKY = """  // Sklansky: before step d, v is the scan within the aligned group of d lanes; a lane in
  // the upper half of its group of 2d adds the lower half's total, the value of that half's
  // last lane, (lane & ~(2d - 1)) + d - 1.
  const int lane = threadIdx.x % sw::kWarp;
#pragma unroll
  for (int d = 1; d < sw::kWarp; d *= 2) {
    const T lower = __shfl_sync(sw::kFullMask, v, (lane & ~(2 * d - 1)) + d - 1);
    if (lane & d) v += lower;
  }
  return v;
"""

WARP_SCAN_BUTTERFLY = """  // A butterfly: total is the sum of my aligned group of m lanes, v my scan within it; the
  // partner lane ^ m holds the sibling group's total, which the upper half adds to v.
  const int lane = threadIdx.x % sw::kWarp;
  T total = v;
#pragma unroll
  for (int m = 1; m < sw::kWarp; m *= 2) {
    const T other = __shfl_xor_sync(sw::kFullMask, total, m);
    if (lane & m) v += other;
    total += other;
  }
  return v;
"""

WARP_SCAN_HALVES = """  // Two half-warp scans at once (__shfl_up_sync's width 16: a lane never reads across its
  // half), then the upper half adds lane 15's total: 4 steps and 1 addition.
  const int lane = threadIdx.x % sw::kWarp;
  constexpr int kHalf = sw::kWarp / 2;
#pragma unroll
  for (int d = 1; d < kHalf; d *= 2) {
    const T up = __shfl_up_sync(sw::kFullMask, v, d, kHalf);
    if (lane % kHalf >= d) v += up;
  }
  const T lower_total = __shfl_sync(sw::kFullMask, v, kHalf - 1);
  if (lane >= kHalf) v += lower_total;
  return v;
"""

# --- lookback: draw_tile, publish, read_status (one region each) ---------------------------------------
DRAW = region_body(SCAN_H, "lookback")  # the reference's whole region
DRAW_ATOMIC_REF = """    cuda::atomic_ref<Count, cuda::thread_scope_device> next(*counter);
    tile = static_cast<int64_t>(next.fetch_add(Count{1}, cuda::memory_order_relaxed));
"""
DRAW_CAS = """    // Compare-and-swap until the counter moves from the value seen to one more: each failure
    // means another block took a ticket, and there are only as many tickets as blocks.
    Count seen = 0, want;
    do {
      want = seen;
      seen = atomicCAS(counter, want, want + 1);
    } while (seen != want);
    tile = static_cast<int64_t>(want);
"""

PUBLISH = region_body(SCAN_H, "lookback", 1)  # the reference's whole region
PUBLISH_RELEASE = """  // The word first (flag and value in disjoint bits: + is |), then one release store, a
  // stronger order than the protocol needs.
  const Count status = (static_cast<Count>(flag) << kFlagShift) + (bits & kValueMask);
  cuda::atomic_ref<Count, cuda::thread_scope_device>(*word).store(status, cuda::memory_order_release);
"""
PUBLISH_EXCH = """  // An atomic exchange is a store too: one 64-bit atomic at device scope.
  atomicExch(word, (Count{flag} << kFlagShift) | (bits & kValueMask));
"""
PUBLISH_SYSTEM = """  // A wider scope and the strongest order: still one 64-bit store.
  cuda::atomic_ref<Count, cuda::thread_scope_system> w(*word);
  w.store(Count{flag} << kFlagShift | (bits & kValueMask));
"""

READ = region_body(SCAN_H, "lookback", 2)  # the reference's whole region
READ_ACQUIRE = """  // One acquire load (stronger than needed); the value is the word without its flag bits.
  const Count s = cuda::atomic_ref<Count, cuda::thread_scope_device>(*word).load(cuda::memory_order_acquire);
  TileStatus out;
  out.flag = static_cast<unsigned>(s >> kFlagShift);
  out.bits = s ^ (Count{out.flag} << kFlagShift);
  return out;
"""
READ_CAS = """  // A compare-and-swap of 0 with 0 reads the word in one atomic and never changes it (it
  // writes 0 only where the word is 0).
  const Count s = atomicCAS(word, Count{0}, Count{0});
  return {static_cast<unsigned>(s >> kFlagShift), s & kValueMask};
"""

# --- digit-scatter: the whole body of rank_in_warp ----------------------------------------------------
RANK = region_body(CH18, "digit-scatter")  # the reference's whole region

RANK_MATCH = """  // The lanes with my digit in one instruction (sm_70 on).
  const int lane = threadIdx.x % sw::kWarp;
  const unsigned same = __match_any_sync(sw::kFullMask, digit);
  const int leader = __ffs(same) - 1;
  const unsigned below = __popc(same & ((1u << lane) - 1));
  unsigned base = 0;
  if (lane == leader) {
    base = counts[digit];
    counts[digit] = base + __popc(same);
  }
  base = __shfl_sync(sw::kFullMask, base, leader);
  __syncwarp();
  return base + below;
"""

RANK_READ_ALL = """  // Every lane reads its digit's count; after a __syncwarp (all reads done) the lowest lane
  // of each digit advances it, and a second __syncwarp orders that before the next row.
  const int lane = threadIdx.x % sw::kWarp;
  unsigned same = sw::kFullMask;
#pragma unroll
  for (int b = kDigitBits - 1; b >= 0; --b) {
    const unsigned bit = digit >> b & 1;
    const unsigned ones = __ballot_sync(sw::kFullMask, bit);
    same &= bit ? ones : ~ones;
  }
  const unsigned below = __popc(same & ~(sw::kFullMask << lane));
  const unsigned base = counts[digit];
  __syncwarp();
  if (below == 0) counts[digit] = base + __popc(same);
  __syncwarp();
  return base + below;
"""

RANK_ATOMIC = """  // The leader takes the group's places with a shared-memory atomicAdd (it returns the count
  // before), branch-free masks: ~(ones ^ (0 - bit)) is ones where bit is 1, ~ones where 0.
  const int lane = threadIdx.x % sw::kWarp;
  unsigned same = sw::kFullMask;
#pragma unroll
  for (int b = 0; b < kDigitBits; ++b) {
    const unsigned bit = digit >> b & 1;
    same &= ~(__ballot_sync(sw::kFullMask, bit) ^ (0u - bit));
  }
  const int leader = __ffs(same) - 1;
  unsigned base = 0;
  if (lane == leader) base = atomicAdd(&counts[digit], static_cast<unsigned>(__popc(same)));
  base = __shfl_sync(sw::kFullMask, base, leader);
  __syncwarp();
  return base + __popc(same & ((1u << lane) - 1));
"""

RANK_SHUFFLE_COMPARE = """  // No ballots: each lane compares its digit with every lane's, one __shfl_sync per lane.
  const int lane = threadIdx.x % sw::kWarp;
  unsigned same = 0, below = 0;
  for (int j = 0; j < sw::kWarp; ++j) {
    const unsigned other = __shfl_sync(sw::kFullMask, digit, j);
    if (other == digit) {
      same |= 1u << j;
      if (j < lane) ++below;
    }
  }
  const int leader = __ffs(same) - 1;
  unsigned base = 0;
  if (below == 0) {
    base = counts[digit];
    counts[digit] = base + __popc(same);
  }
  base = __shfl_sync(sw::kFullMask, base, leader);
  __syncwarp();
  return base + below;
"""

RANK_HIGHEST = """  // The highest lane of each digit leads; the rank counts from the top: the lanes with my
  // digit at or above me are __popc(same >> lane).
  const int lane = threadIdx.x % sw::kWarp;
  unsigned same = sw::kFullMask;
#pragma unroll
  for (int b = 0; b < kDigitBits; ++b) {
    const unsigned ones = __ballot_sync(sw::kFullMask, (digit >> b) & 1u);
    same &= ((digit >> b) & 1u) ? ones : ~ones;
  }
  const int group = __popc(same);
  const unsigned below = group - __popc(same >> lane);
  const int leader = 31 - __clz(same);
  unsigned base = 0;
  if (lane == leader) {
    base = counts[digit];
    counts[digit] = base + group;
  }
  base = __shfl_sync(sw::kFullMask, base, leader);
  __syncwarp();
  return base + below;
"""

CORRECT = {
    "warp-scan": [
        Mistake("descending-distances", SCAN_H, WARP_SCAN, WARP_SCAN_DESCENDING, "PASS", "",
                point="the shift scan with distances 16, 8, 4, 2, 1: every s <= lane is a sum of distinct "
                      "distances once; 5 additions"),
        Mistake("select-identity", SCAN_H, WARP_SCAN, WARP_SCAN_SELECT, "PASS", "",
                point="a while loop and no branch: lanes below the distance add T{} (exact)"),
        Mistake("explicit-source-lane", SCAN_H, WARP_SCAN, WARP_SCAN_SOURCE_LANE, "PASS", "",
                point="__shfl_sync from lane - d (its own lane below d, then ignored) instead of __shfl_up_sync"),
        Mistake("sklansky", SCAN_H, WARP_SCAN, WARP_SCAN_SKLANSKY, "PASS", "",
                point="Sklansky: the upper half of each group of 2d lanes adds the lower half's last lane; "
                      "5 additions"),
        Mistake("butterfly", SCAN_H, WARP_SCAN, WARP_SCAN_BUTTERFLY, "PASS", "",
                point="a butterfly with __shfl_xor_sync carrying the group total beside the scan: 5 steps, one "
                      "addition into v each"),
        Mistake("two-halves", SCAN_H, WARP_SCAN, WARP_SCAN_HALVES, "PASS", "",
                point="__shfl_up_sync with width 16 scans both half-warps, then lane 15's total to the upper "
                      "half: 5 additions"),
    ],
    "lookback": [
        Mistake("ticket-atomic-ref", SCAN_H, DRAW, DRAW_ATOMIC_REF, "PASS", "",
                point="draw_tile: cuda::atomic_ref fetch_add, relaxed, device scope"),
        Mistake("ticket-cas-loop", SCAN_H, DRAW, DRAW_CAS, "PASS", "",
                point="draw_tile: an atomicCAS loop from a guess of 0; lock-free, at most one retry per "
                      "ticket taken by another block"),
        Mistake("publish-release", SCAN_H, PUBLISH, PUBLISH_RELEASE, "PASS", "",
                point="publish: the word built with + (disjoint bits), one release store: a stronger order"),
        Mistake("publish-exchange", SCAN_H, PUBLISH, PUBLISH_EXCH, "PASS", "",
                point="publish: atomicExch, one 64-bit atomic that writes the whole word"),
        Mistake("publish-system-seq-cst", SCAN_H, PUBLISH, PUBLISH_SYSTEM, "PASS", "",
                point="publish: system scope and the default seq_cst order; still one 64-bit store"),
        Mistake("read-acquire", SCAN_H, READ, READ_ACQUIRE, "PASS", "",
                point="read_status: one acquire load; the value split off by XOR of the flag bits"),
        Mistake("read-by-cas", SCAN_H, READ, READ_CAS, "PASS", "",
                point="read_status: atomicCAS(word, 0, 0), one atomic read-modify-write that never changes "
                      "the word"),
    ],
    "digit-scatter": [
        Mistake("match-any", CH18, RANK, RANK_MATCH, "PASS", "",
                point="the lanes with my digit by __match_any_sync instead of eight ballots"),
        Mistake("read-then-lowest-writes", CH18, RANK, RANK_READ_ALL, "PASS", "",
                point="bits from the top, the lane mask ~(full << lane); every lane reads counts, a __syncwarp, "
                      "the lowest (below == 0) writes, a __syncwarp; no shuffle of the base"),
        Mistake("leader-atomic", CH18, RANK, RANK_ATOMIC, "PASS", "",
                point="branch-free masks ~(ballot ^ (0 - bit)); the leader's atomicAdd on shared counts"),
        Mistake("shuffle-compare", CH18, RANK, RANK_SHUFFLE_COMPARE, "PASS", "",
                point="no ballots: 32 __shfl_sync compare every lane's digit with mine, counting those below"),
        Mistake("highest-leads", CH18, RANK, RANK_HIGHEST, "PASS", "",
                point="the highest lane of the group leads (31 - __clz); below = group - __popc(same >> lane)"),
    ],
}
