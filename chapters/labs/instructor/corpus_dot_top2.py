"""Correct solutions of the dot-top2 track's tasks, written differently from the reference
(see corpus.py)."""
from mistakes import CH12, CH13, Mistake, region_body

# --- dot-grid-stride: the whole region ------------------------------------------------------------
# The bound (12_dot_product.cu, first_pass_depth) allows each product ceil(n4 / threads) + 3
# roundings before the block sum: a thread's fmaf chain (at most ceil(n4 / threads) float4s),
# one for the tail, two for (acc.x + acc.y) + (acc.z + acc.w). Every variant stays within it.
DOT_REGION = region_body(CH12, "dot-grid-stride")  # the reference's whole region

DOT_TAIL_FIRST = """  // The n % 4 tail first (fewer than 4 floats, and the grid has at least 256 threads: one
  // product for each of the first n % 4 threads), into lane w; then the float4s.
  const int64_t tail = n - n4 * kVec;
  if (first < tail) acc.w = fmaf(x[n4 * kVec + first], y[n4 * kVec + first], acc.w);
  for (int64_t i = first; i < n4; i += threads) {
    const float4 a = x4[i];
    const float4 b = y4[i];
    acc.x = fmaf(a.x, b.x, acc.x);
    acc.y = fmaf(a.y, b.y, acc.y);
    acc.z = fmaf(a.z, b.z, acc.z);
    acc.w = fmaf(a.w, b.w, acc.w);
  }
"""

DOT_UNROLL_TWO = """  // Two float4s of each input in flight per iteration (i and i + threads), then at most
  // one left over; each lane's chain adds them in the same order as a plain loop.
  int64_t i = first;
  for (; i + threads < n4; i += 2 * threads) {
    const float4 a0 = x4[i], b0 = y4[i];
    const float4 a1 = x4[i + threads], b1 = y4[i + threads];
    acc.x = fmaf(a0.x, b0.x, acc.x);
    acc.y = fmaf(a0.y, b0.y, acc.y);
    acc.z = fmaf(a0.z, b0.z, acc.z);
    acc.w = fmaf(a0.w, b0.w, acc.w);
    acc.x = fmaf(a1.x, b1.x, acc.x);
    acc.y = fmaf(a1.y, b1.y, acc.y);
    acc.z = fmaf(a1.z, b1.z, acc.z);
    acc.w = fmaf(a1.w, b1.w, acc.w);
  }
  if (i < n4) {
    const float4 a = x4[i], b = y4[i];
    acc.x = fmaf(a.x, b.x, acc.x);
    acc.y = fmaf(a.y, b.y, acc.y);
    acc.z = fmaf(a.z, b.z, acc.z);
    acc.w = fmaf(a.w, b.w, acc.w);
  }
  const int64_t e = n4 * kVec + first;
  if (e < n) acc.y = fmaf(x[e], y[e], acc.y);
"""

DOT_EIGHT_CHAINS = """  // Eight chains: even iterations into acc, odd ones into odd, added lane by lane at the
  // end. A thread with k float4s: ceil(k / 2) fmafs in a chain plus one addition, never
  // more than k for k >= 2; for k <= 1, odd is 0 and adding it is exact.
  float4 odd = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  int64_t k = 0;
  for (int64_t i = first; i < n4; i += threads, ++k) {
    const float4 a = x4[i], b = y4[i];
    if (k % 2 == 0) {
      acc.x = fmaf(a.x, b.x, acc.x);
      acc.y = fmaf(a.y, b.y, acc.y);
      acc.z = fmaf(a.z, b.z, acc.z);
      acc.w = fmaf(a.w, b.w, acc.w);
    } else {
      odd.x = fmaf(a.x, b.x, odd.x);
      odd.y = fmaf(a.y, b.y, odd.y);
      odd.z = fmaf(a.z, b.z, odd.z);
      odd.w = fmaf(a.w, b.w, odd.w);
    }
  }
  acc.x += odd.x;
  acc.y += odd.y;
  acc.z += odd.z;
  acc.w += odd.w;
  for (int64_t i = n4 * kVec + first; i < n; i += threads) acc.z = fmaf(x[i], y[i], acc.z);
"""

DOT_SCALAR_LOADS = """  // The same chains from 4-byte loads: float 4 * i + j goes to lane j.
  for (int64_t i = first; i < n4; i += threads) {
    const int64_t e = i * kVec;
    acc.x = fmaf(x[e], y[e], acc.x);
    acc.y = fmaf(x[e + 1], y[e + 1], acc.y);
    acc.z = fmaf(x[e + 2], y[e + 2], acc.z);
    acc.w = fmaf(x[e + 3], y[e + 3], acc.w);
  }
  if (n4 * kVec + first < n) acc.x = fmaf(x[n4 * kVec + first], y[n4 * kVec + first], acc.x);
"""

DOT_COUNTED = """  // How many float4s this thread owns, counted first; the loop runs that many times.
  const int64_t mine = first < n4 ? (n4 - 1 - first) / threads + 1 : 0;
  for (int64_t k = 0; k < mine; ++k) {
    const int64_t i = first + k * threads;
    const float4 a = x4[i], b = y4[i];
    acc = make_float4(fmaf(a.x, b.x, acc.x), fmaf(a.y, b.y, acc.y), fmaf(a.z, b.z, acc.z),
                      fmaf(a.w, b.w, acc.w));
  }
  // The tail from the grid's last threads: thread threads - 1 - t takes tail float t.
  const int64_t t = threads - 1 - first;
  if (t < n % kVec) acc.x = fmaf(x[n4 * kVec + t], y[n4 * kVec + t], acc.x);
"""

DOT_WHILE_DOWN = """  // Walk the owned float4s from the last one down (the order within a chain is free: the
  // bound counts roundings, not positions), then the tail.
  if (first < n4) {
    int64_t i = first + (n4 - 1 - first) / threads * threads;
    while (true) {
      const float4 a = x4[i], b = y4[i];
      acc.x = fmaf(a.x, b.x, acc.x);
      acc.y = fmaf(a.y, b.y, acc.y);
      acc.z = fmaf(a.z, b.z, acc.z);
      acc.w = fmaf(a.w, b.w, acc.w);
      if (i < first + threads) break;
      i -= threads;
    }
  }
  for (int64_t i = n4 * kVec + first; i < n; i += threads) acc.x = fmaf(x[i], y[i], acc.x);
"""

# --- top2-merge: warp_merge's region and block_merge_shared's region ---------------------------------
WARP_REGION = region_body(CH13, "top2-merge")  # the reference's whole region

WARP_ASCENDING = """  // The butterfly in the other order, lane masks 1, 2, 4, 8, 16: after mask m every lane
  // holds the top-2 of its aligned group of 2m lanes, the partner's group disjoint from its own.
#pragma unroll
  for (int m = 1; m < sw::kWarp; m <<= 1) t = merge(shfl_xor(t, m), t);
  return t;
"""

WARP_ROTATE = """  // A rotation instead of a butterfly: at distance d every lane merges the pair of lane
  // (lane + d) % 32. After distances 1..d lane l holds lanes l .. l + 2d - 1 (mod 32), so the
  // two sets merged are disjoint while 2d <= 32; after d = 16 every lane holds the warp.
  const int lane = threadIdx.x % sw::kWarp;
#pragma unroll
  for (int d = 1; d < sw::kWarp; d *= 2) {
    const int src = (lane + d) % sw::kWarp;
    Top2 o;
    o.k1 = __shfl_sync(sw::kFullMask, t.k1, src);
    o.k2 = __shfl_sync(sw::kFullMask, t.k2, src);
    o.i1 = __shfl_sync(sw::kFullMask, static_cast<long long>(t.i1), src);
    o.i2 = __shfl_sync(sw::kFullMask, static_cast<long long>(t.i2), src);
    t = merge(t, o);
  }
  return t;
"""

WARP_DOWN_BROADCAST = """  // A tree toward lane 0 with __shfl_down_sync (a lane whose partner is past the warp keeps
  // its pair: merging a pair with itself would count an element twice), then lane 0's
  // top-2 to every lane.
  const int lane = threadIdx.x % sw::kWarp;
  auto down = [](const Top2& a, int d) {
    Top2 o;
    o.k1 = __shfl_down_sync(sw::kFullMask, a.k1, d);
    o.k2 = __shfl_down_sync(sw::kFullMask, a.k2, d);
    o.i1 = __shfl_down_sync(sw::kFullMask, static_cast<long long>(a.i1), d);
    o.i2 = __shfl_down_sync(sw::kFullMask, static_cast<long long>(a.i2), d);
    return o;
  };
  for (int d = sw::kWarp / 2; d > 0; d /= 2) {
    const Top2 o = down(t, d);
    if (lane + d < sw::kWarp) t = merge(t, o);
  }
  Top2 r;
  r.k1 = __shfl_sync(sw::kFullMask, t.k1, 0);
  r.k2 = __shfl_sync(sw::kFullMask, t.k2, 0);
  r.i1 = __shfl_sync(sw::kFullMask, static_cast<long long>(t.i1), 0);
  r.i2 = __shfl_sync(sw::kFullMask, static_cast<long long>(t.i2), 0);
  return r;
"""

WARP_XOR_LANE = """  // The butterfly with __shfl_sync and the partner's lane written out (lane ^ m), masks
  // unrolled by hand.
  const int lane = threadIdx.x % sw::kWarp;
  auto from = [&](int src) {
    Top2 o;
    o.k1 = __shfl_sync(sw::kFullMask, t.k1, src);
    o.k2 = __shfl_sync(sw::kFullMask, t.k2, src);
    o.i1 = __shfl_sync(sw::kFullMask, static_cast<long long>(t.i1), src);
    o.i2 = __shfl_sync(sw::kFullMask, static_cast<long long>(t.i2), src);
    return o;
  };
  t = merge(t, from(lane ^ 16));
  t = merge(t, from(lane ^ 8));
  t = merge(t, from(lane ^ 4));
  t = merge(t, from(lane ^ 2));
  t = merge(t, from(lane ^ 1));
  return t;
"""

SHARED_REGION = region_body(CH13, "top2-merge", 1)  # the reference's whole region

SHARED_INTERLEAVED = """  // Interleaved pairs: at stride d, thread t (a multiple of 2d) merges s[t + d] into s[t];
  // s[t] then holds threads t .. t + 2d - 1.
  for (int d = 1; d < kThreads; d *= 2) {
    if ((threadIdx.x & (2 * d - 1)) == 0) s[threadIdx.x] = merge(s[threadIdx.x], s[threadIdx.x + d]);
    __syncthreads();
  }
"""

SHARED_MIRROR = """  // A fold: with 2h pairs left, thread t < h merges the mirror pair s[2h - 1 - t] into s[t].
  for (int h = kThreads / 2; h >= 1; h /= 2) {
    if (threadIdx.x < h) s[threadIdx.x] = merge(s[threadIdx.x], s[2 * h - 1 - threadIdx.x]);
    __syncthreads();
  }
"""

SHARED_REGISTER = """  // The running pair stays in a register: thread t < h merges s[t + h] into it and
  // writes it to s[t], which no thread reads in this round (they read s[t' + h], t' + h >= h)
  // and thread t - h / 2 reads in the next.
  Top2 mine = s[threadIdx.x];
  for (int h = kThreads / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) {
      mine = merge(mine, s[threadIdx.x + h]);
      s[threadIdx.x] = mine;
    }
    __syncthreads();
  }
"""

SHARED_RADIX4 = """  // Four pairs into one per round (rounds of 64, 16, 4, 1 threads for 256); an odd power
  // of two leaves s[0] and s[1], merged last.
  for (int q = kThreads / 4; q > 0; q /= 4) {
    if (threadIdx.x < q)
      s[threadIdx.x] = merge(merge(s[threadIdx.x], s[threadIdx.x + q]),
                             merge(s[threadIdx.x + 2 * q], s[threadIdx.x + 3 * q]));
    __syncthreads();
  }
  if ((kThreads & 0x55555555) == 0 && threadIdx.x == 0) s[0] = merge(s[0], s[1]);
  __syncthreads();
"""

SHARED_THEN_WARP = """  // The tree down to 32 pairs, then warp 0 merges them with warp_merge (its shuffles):
  // a barrier for each of the first rounds only.
  for (int h = kThreads / 2; h >= sw::kWarp; h /= 2) {
    if (threadIdx.x < h) s[threadIdx.x] = merge(s[threadIdx.x], s[threadIdx.x + h]);
    __syncthreads();
  }
  if (threadIdx.x < sw::kWarp) {
    const Top2 w = warp_merge(threadIdx.x < kThreads ? s[threadIdx.x] : empty_top2());
    if (threadIdx.x == 0) s[0] = w;
  }
  __syncthreads();
"""

CORRECT = {
    "dot-grid-stride": [
        Mistake("tail-first", CH12, DOT_REGION, DOT_TAIL_FIRST, "PASS", "",
                point="the n % 4 tail before the loop, with an if (the grid has >= 256 threads), into lane w; "
                      "every chain still k + 1 roundings at most"),
        Mistake("unroll-two", CH12, DOT_REGION, DOT_UNROLL_TWO, "PASS", "",
                point="two float4s of each input in flight per iteration, a leftover if, the tail by an if into "
                      "lane y; the chains add in the same order as the plain loop"),
        Mistake("eight-chains", CH12, DOT_REGION, DOT_EIGHT_CHAINS, "PASS", "",
                point="two float4 accumulators (8 chains) added at the end: ceil(k/2) + 1 <= k roundings for "
                      "k >= 2, an exact + 0 for k <= 1; within the bound"),
        Mistake("scalar-loads", CH12, DOT_REGION, DOT_SCALAR_LOADS, "PASS", "",
                point="4-byte loads x[4i + j] instead of float4s: the same four chains, the same depth"),
        Mistake("counted-loop-tail-from-the-end", CH12, DOT_REGION, DOT_COUNTED, "PASS", "",
                point="the thread's float4 count computed first, a counted loop, make_float4 of four fmafs; the "
                      "tail taken by the grid's last n % 4 threads"),
        Mistake("backwards", CH12, DOT_REGION, DOT_WHILE_DOWN, "PASS", "",
                point="each thread walks its float4s from the last one down (a while loop with a break): another "
                      "order of the same chain, same length"),
    ],
    "top2-merge": [
        Mistake("butterfly-ascending", CH13, WARP_REGION, WARP_ASCENDING, "PASS", "",
                point="warp_merge: lane masks 1, 2, 4, 8, 16 and merge(partner, mine): any order of the five "
                      "masks merges disjoint groups"),
        Mistake("rotation", CH13, WARP_REGION, WARP_ROTATE, "PASS", "",
                point="warp_merge: __shfl_sync from lane (l + d) % 32, d = 1..16: lane l holds lanes l..l+2d-1, "
                      "disjoint halves while 2d <= 32"),
        Mistake("tree-then-broadcast", CH13, WARP_REGION, WARP_DOWN_BROADCAST, "PASS", "",
                point="warp_merge: __shfl_down_sync tree (lanes whose partner is past 31 keep their pair, never "
                      "merging it with itself), then lane 0's pair broadcast with __shfl_sync"),
        Mistake("explicit-partner-lane", CH13, WARP_REGION, WARP_XOR_LANE, "PASS", "",
                point="warp_merge: __shfl_sync with srcLane lane ^ m in a lambda, five merges written out"),
        Mistake("interleaved-pairs", CH13, SHARED_REGION, SHARED_INTERLEAVED, "PASS", "",
                point="block_merge_shared: stride 1, 2, 4, ...; threads with t % 2d == 0 (a bit mask) merge s[t + d]"),
        Mistake("mirror-fold", CH13, SHARED_REGION, SHARED_MIRROR, "PASS", "",
                point="block_merge_shared: s[t] merges s[2h - 1 - t] (a fold instead of a shift)"),
        Mistake("register-carried", CH13, SHARED_REGION, SHARED_REGISTER, "PASS", "",
                point="block_merge_shared: the pair kept in a register, written to s[t] each round for the "
                      "next; the barrier outside the if"),
        Mistake("four-way-rounds", CH13, SHARED_REGION, SHARED_RADIX4, "PASS", "",
                point="block_merge_shared: four pairs into one per round (half the barriers), a last merge "
                      "for an odd power of two"),
        Mistake("tree-then-warp", CH13, SHARED_REGION, SHARED_THEN_WARP, "PASS", "",
                point="block_merge_shared: the shared tree down to 32 pairs, then warp 0's warp_merge; the "
                      "last barrier outside the if"),
    ],
}
