"""Correct solutions of the reduce track's tasks, written differently from the reference
(see corpus.py).

Each entry replaces the whole body of one region. The sums are checked within
depth * 2^-24 * sum|x_i| (tasks.SUM_TOLERANCE), where depth is the reference's
number of float additions an element passes through: every variant here keeps an
element's additions at or below that depth (an addition of 0.0f is exact and adds
no rounding, which the predicated variants use), and adds in a fixed order, so
chapter 06's same-bits steps give the same bits on every run.
"""
from mistakes import CH02, CH03, CH05, CH06, Mistake, region_body  # noqa: F401

CH04 = "chapters/04_reduce_dynamic_shared/04_reduce_dynamic_shared.cu"

# --- the reference bodies (the `old` of every entry) ------------------------------------------

GLOBAL_TREE = region_body(CH02, "global-tree")  # the reference's whole region

SHARED_TREE_03 = region_body(CH03, "shared-tree")  # the reference's whole region

SHARED_TREE_04 = region_body(CH04, "shared-tree")  # the reference's whole region

WARP_05 = region_body(CH05, "warp-shuffle")  # the reference's whole region

WARP_06 = region_body(CH06, "warp-shuffle")  # the reference's whole region

GRID_STRIDE = region_body(CH06, "grid-stride")  # the reference's whole region

# The common start of the grid-stride variants: the reference's names.
GS_PRELUDE = """\
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const int64_t n4 = n / kVec;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kBlock;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
"""

CORRECT = {
    # --- global-tree: chapter 02, blockDim.x a power of two from 32 to 1024 ----------------------
    "global-tree": [
        Mistake("interleaved-modulo", CH02, GLOBAL_TREE, """\
  const int tid = threadIdx.x;
  const int width = blockDim.x;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * width;
  float* block = x + base;
  const int64_t count = n - base < width ? n - base : width;
  // Pairs of neighbours first: after the level of `stride`, block[t] (t a multiple of
  // 2 * stride, t < count) holds the sum of block[t .. min(t + 2 * stride, count)).
  for (int stride = 1; stride < width; stride *= 2) {
    if (tid % (2 * stride) == 0 && tid + stride < count) block[tid] += block[tid + stride];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = block[0];
""", "PASS", "", point="interleaved addressing (t % (2*stride) == 0, stride doubling) in global memory; the "
                         "guard t + stride < count keeps every read below n; same log2(block) levels"),
        Mistake("interleaved-strided", CH02, GLOBAL_TREE, """\
  const int width = blockDim.x;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * width;
  const int64_t left = n - base;
  const int count = left < width ? static_cast<int>(left) : width;  // 1 .. width: base < n
  float* block = x + base;
  for (int stride = 1; stride < width; stride *= 2) {
    const int index = 2 * stride * static_cast<int>(threadIdx.x);  // packed threads, spread addresses
    if (index + stride < count) block[index] += block[index + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = block[0];
""", "PASS", "", point="the strided interleaved tree (thread t works on 2*stride*t): the working threads "
                         "packed, the index tested against count alone (index + stride < count implies both "
                         "are in the block and below n); index <= 1024 * 1023 fits an int"),
        Mistake("register-accumulator", CH02, GLOBAL_TREE, """\
  const int tid = threadIdx.x;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + tid;  // this thread's element
  float v = i < n ? x[i] : 0.0f;  // its running sum, kept in a register
  for (int offset = blockDim.x >> 1; offset != 0; offset >>= 1) {
    if (tid < offset && i + offset < n) {
      v += x[i + offset];
      x[i] = v;  // x[j] == v of thread j for every j < n of the block, after every level
    }
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = v;
""", "PASS", "", point="each thread keeps its partial sum in a register and stores it after each add (one "
                         "global read per level instead of two); the guard is against n through the global "
                         "index, not a per-block count; thread 0 writes its register"),
        Mistake("radix-4-tree", CH02, GLOBAL_TREE, """\
  const int tid = threadIdx.x;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x;
  float* block = x + base;
  const int count = n - base < blockDim.x ? static_cast<int>(n - base) : static_cast<int>(blockDim.x);
  // Four elements into one per level while the width divides by four, else two: half
  // the barriers of the binary tree, the same depth ((a + b) + (c + d) is two levels).
  for (int width = blockDim.x; width > 1;) {
    const int ways = width % 4 == 0 ? 4 : 2;
    const int part = width / ways;
    if (tid < part && tid < count) {
      const float a = block[tid];
      const float b = tid + part < count ? block[tid + part] : 0.0f;
      if (ways == 4) {
        const float c = tid + 2 * part < count ? block[tid + 2 * part] : 0.0f;
        const float d = tid + 3 * part < count ? block[tid + 3 * part] : 0.0f;
        block[tid] = (a + b) + (c + d);
      } else {
        block[tid] = a + b;
      }
    }
    width = part;
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = block[0];
""", "PASS", "", point="a radix-4 tree: thread t < width/4 adds t + width/4, t + width/2 and t + 3*width/4 as "
                         "(a + b) + (c + d), a binary level when log2(block) is odd; a missing partner is a "
                         "0.0f (exact); log2(block) levels of additions, half the __syncthreads"),
        Mistake("fold-from-count", CH02, GLOBAL_TREE, """\
  const int t = threadIdx.x;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x;
  float* block = x + base;
  // The tree spans this block's elements only (fewer in the last block), so no read
  // needs a guard: the width is the same for the whole block, as the barrier needs.
  int width = n - base < blockDim.x ? static_cast<int>(n - base) : static_cast<int>(blockDim.x);
  while (width > 1) {
    const int half = width / 2;  // element width - 1 - t folds onto t, for t < half
    if (t < half) block[t] += block[width - 1 - t];
    width -= half;  // ceil(width / 2): an odd middle element stays where it is
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = block[0];
""", "PASS", "", point="a folding tree over exactly count elements (any count, not a power of two): the far "
                         "end folds onto the near end, width -> ceil(width/2); ceil(log2 count) <= log2(block) "
                         "levels; the loop bound is per block (uniform), so the barrier is reached by all"),
        Mistake("last-warp-syncwarp", CH02, GLOBAL_TREE, """\
  const int tid = threadIdx.x;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x;
  float* block = x + base;
  const int64_t count = n - base < blockDim.x ? n - base : int64_t{blockDim.x};
  // The levels that span several warps need the whole block at the barrier ...
  for (int offset = blockDim.x / 2; offset >= 32; offset /= 2) {
    if (tid < offset && tid + offset < count) block[tid] += block[tid + offset];
    __syncthreads();
  }
  // ... the last five (offsets 16 .. 1) live in warp 0: __syncwarp orders its lanes' memory.
  if (tid < 32) {
    for (int offset = 16; offset > 0; offset /= 2) {
      if (tid < offset && tid + offset < count) block[tid] += block[tid + offset];
      __syncwarp();
    }
  }
  if (tid == 0) partial[blockIdx.x] = block[0];
""", "PASS", "", point="the levels below 32 use __syncwarp in warp 0 (which orders global memory among its "
                         "lanes) instead of a block barrier; all 32 lanes reach each __syncwarp (the lane "
                         "test is inside it); blocks are >= 32 threads"),
    ],
    # --- shared-tree: chapter 03 (kBlock = 256) and chapter 04 (size threads) ---------------------
    "shared-tree": [
        Mistake("register-accumulator", CH03, SHARED_TREE_03, """\
  float v = s[tid];  // this thread's partial sum, kept in a register
#pragma unroll 1
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (tid < stride) {
      v += s[tid + stride];
      s[tid] = v;  // publish it for the thread that adds it at a later level
    }
    __syncthreads();
  }
""", "PASS", "", point="the running sum lives in a register, one shared read and one write per level; "
                         "thread t's s[t] equals its register after every barrier, and thread 0's s[0] "
                         "is the sum"),
        Mistake("last-warp-syncwarp", CH03, SHARED_TREE_03, """\
  constexpr int kLanes = 32;  // warp 0 adds the last 64 values
#pragma unroll 1
  for (int stride = kBlock / 2; stride > kLanes; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < kLanes) {
    float w = s[tid] + s[tid + kLanes];
#pragma unroll 1
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
      s[tid] = w;    // publish this lane's value
      __syncwarp();  // ... before any lane reads it
      w += s[tid + offset];
      __syncwarp();  // every read done before the next write
    }
    if (tid == 0) s[0] = w;
  }
""", "PASS", "", point="block barriers down to 64 values, then warp 0 with __syncwarp between each write "
                         "and read (chapter 05's syncwarp finish) in chapter 03's kernel; lane 0 leaves the "
                         "sum in s[0]; 8 levels as before"),
        Mistake("last-warp-shuffle", CH03, SHARED_TREE_03, """\
#pragma unroll 1
  for (int stride = kBlock / 2; stride > 32; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) {  // the whole of warp 0: every lane of the full mask takes part
    float w = s[tid] + s[tid + 32];
    for (int offset = 16; offset > 0; offset /= 2) w += __shfl_down_sync(0xffffffffu, w, offset);
    if (tid == 0) s[0] = w;
  }
""", "PASS", "", point="shared memory down to 64 values, then warp 0 finishes in registers with "
                         "__shfl_down_sync (a warp-uniform branch) and lane 0 writes s[0]; 8 levels"),
        Mistake("radix-4", CH03, SHARED_TREE_03, """\
  static_assert((kBlock & (kBlock - 1)) == 0 && (kBlock & 0x55555555) != 0, "kBlock: a power of four");
#pragma unroll 1
  for (int quarter = kBlock / 4; quarter > 0; quarter /= 4) {
    if (tid < quarter)
      s[tid] = (s[tid] + s[tid + quarter]) + (s[tid + 2 * quarter] + s[tid + 3 * quarter]);
    __syncthreads();
  }
""", "PASS", "", point="four values into one per level (256 = 4^4: quarters 64, 16, 4, 1), (a + b) + (c + d) "
                         "so the depth stays 8; the readers' indices t + k*quarter >= quarter never meet a "
                         "writer's t < quarter; 4 barriers instead of 8"),
        Mistake("mirror-fold", CH03, SHARED_TREE_03, """\
#pragma unroll 1
  for (int width = kBlock; width > 1; width /= 2) {
    if (tid < width / 2) s[tid] += s[width - 1 - tid];  // the far end folds onto the near end
    __syncthreads();
  }
""", "PASS", "", point="thread t adds its mirror s[width - 1 - t] instead of s[t + stride]: the pairs "
                         "(t, width-1-t) still cover [0, width) once, the addresses stay consecutive "
                         "(descending), conflict-free"),
        Mistake("register-while-dynamic", CH04, SHARED_TREE_04, """\
  float v = s[tid];  // this thread's partial sum, kept in a register
  unsigned stride = size;
  while (stride > 1) {
    stride /= 2;
    if (tid < static_cast<int>(stride)) {
      v += s[tid + stride];
      s[tid] = v;
    }
    __syncthreads();
  }
""", "PASS", "", point="chapter 04's region: a while loop that halves first, and the sum kept in a "
                         "register (s[t] updated with it); `size` is the same for the whole block"),
        Mistake("mirror-fold-dynamic", CH04, SHARED_TREE_04, """\
#pragma unroll 1
  for (unsigned width = size; width > 1; width /= 2) {
    const unsigned t = tid;
    if (t < width / 2) s[t] += s[width - 1 - t];  // the far end folds onto the near end
    __syncthreads();
  }
""", "PASS", "", point="chapter 04's region with the mirror partner and unsigned arithmetic, as `size` is"),
    ],
    # --- warp-shuffle: chapter 05's last warp (w, tid < 32) and chapter 06's warp_sum(v) -------------
    "warp-shuffle": [
        Mistake("butterfly-xor", CH05, WARP_05, """\
#pragma unroll
  for (int mask = kWarp / 2; mask > 0; mask /= 2) w += __shfl_xor_sync(kFullMask, w, mask);
""", "PASS", "", point="a butterfly (__shfl_xor_sync): every lane ends with the sum, lane 0 included; "
                         "5 levels"),
        Mistake("source-lane", CH05, WARP_05, """\
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) w += __shfl_sync(kFullMask, w, tid + offset);
""", "PASS", "", point="__shfl_sync from lane tid + offset (a source lane may differ per lane, unlike a "
                         "shfl_down offset); past lane 31 it wraps modulo 32, garbage only in lanes >= offset, "
                         "which lane 0 never reads"),
        Mistake("shuffle-up-then-broadcast", CH05, WARP_05, """\
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    const float below = __shfl_up_sync(kFullMask, w, offset);  // every lane shuffles
    if (tid >= offset) w += below;                             // lanes below offset got their own w
  }
  w = __shfl_sync(kFullMask, w, kWarp - 1);  // the sum is in lane 31: bring it to lane 0
""", "PASS", "", point="the mirror tree with __shfl_up_sync gathers the sum in lane 31, then one "
                         "__shfl_sync broadcasts it; the add (not the shuffle) is under the lane test"),
        Mistake("ascending-offsets", CH05, WARP_05, """\
#pragma unroll
  for (int offset = 1; offset < kWarp; offset *= 2) w += __shfl_down_sync(kFullMask, w, offset);
""", "PASS", "", point="offsets 1, 2, 4, 8, 16: neighbours first; lane t holds the sum of [t, t + 2*offset) "
                         "while t + 2*offset <= 32, so lane 0 ends with all 32; still 5 levels"),
        Mistake("butterfly-by-hand", CH06, WARP_06, """\
  // a butterfly written out: every lane ends with the warp's sum, lane 0 included
  v += __shfl_xor_sync(sw::kFullMask, v, 16);
  v += __shfl_xor_sync(sw::kFullMask, v, 8);
  v += __shfl_xor_sync(sw::kFullMask, v, 4);
  v += __shfl_xor_sync(sw::kFullMask, v, 2);
  v += __shfl_xor_sync(sw::kFullMask, v, 1);
  return v;
""", "PASS", "", point="chapter 06's warp_sum as five written-out xor shuffles, no loop"),
        Mistake("half-warps-then-halves", CH06, WARP_06, """\
#pragma unroll
  for (int mask = sw::kWarp / 4; mask > 0; mask /= 2)
    v += __shfl_xor_sync(sw::kFullMask, v, mask, sw::kWarp / 2);  // a butterfly in each half-warp
  return v + __shfl_down_sync(sw::kFullMask, v, sw::kWarp / 2);   // lane 0: its half plus lane 16's
""", "PASS", "", point="the width argument: a 16-lane butterfly in each half-warp (masks 8 .. 1 stay in the "
                         "half), then lane 0 adds lane 16's half; 4 + 1 levels"),
    ],
    # --- grid-stride: chapter 06's thread_sum (kUnroll 4 and 1, blocks 32 .. 1024) ---------------
    "grid-stride": [
        Mistake("float4-accumulator", CH06, GRID_STRIDE, GS_PRELUDE + """\
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // four chains, one per lane of the float4
  int64_t i = first;
  for (; i + (kUnroll - 1) * threads < n4; i += kUnroll * threads) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x4 + i + u * threads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      acc.x += v[u].x;
      acc.y += v[u].y;
      acc.z += v[u].z;
      acc.w += v[u].w;
    }
  }
  for (; i < n4; i += threads) {
    const float4 v = __ldg(x4 + i);
    acc.x += v.x;
    acc.y += v.y;
    acc.z += v.z;
    acc.w += v.w;
  }
  float sum = (acc.x + acc.y) + (acc.z + acc.w);  // the lanes meet once, at the end
  if (first < n % kVec) sum += x[n4 * kVec + first];
  return sum;
""", "PASS", "", point="a float4 accumulator (four lane-wise chains, as in the dot product) combined once at "
                         "the end: an element passes its chain, 2 adds and the tail, the reference's depth"),
        Mistake("predicated-loads-tail-first", CH06, GRID_STRIDE, GS_PRELUDE + """\
  // The scalar tail first: threads 0 .. n % 4 - 1 start from one of the last floats.
  float sum = first < n - kVec * n4 ? x[kVec * n4 + first] : 0.0f;
  // One loop: kUnroll predicated loads per iteration; a float4 past the end reads as zeros.
  for (int64_t i = first; i < n4; i += kUnroll * threads) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      v[u] = i + u * threads < n4 ? __ldg(x4 + i + u * threads) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  return sum;
""", "PASS", "", point="one loop instead of a main loop and a remainder: each load predicated, zeros past "
                         "the end (adding 0.0f is exact); the tail starts the chain instead of ending it"),
        Mistake("counted-iterations", CH06, GRID_STRIDE, GS_PRELUDE + """\
  // How many float4s this thread owns: first, first + threads, ... below n4.
  const int64_t mine = first < n4 ? (n4 - 1 - first) / threads + 1 : 0;
  float sum = 0.0f;
  int64_t k = 0;
  for (; k + kUnroll <= mine; k += kUnroll) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x4 + first + (k + u) * threads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; k < mine; ++k) {
    const float4 v = __ldg(x4 + first + k * threads);
    sum += (v.x + v.y) + (v.z + v.w);
  }
  const int64_t tail = n % kVec;
  if (first < tail) sum += x[n - tail + first];
  return sum;
""", "PASS", "", point="the loops count this thread's float4s (computed once) instead of comparing "
                         "indices with n4; the same float4s in the same order"),
        Mistake("tree-per-group", CH06, GRID_STRIDE, GS_PRELUDE + """\
  float sum = 0.0f;
  int64_t i = first;
  for (; i + (kUnroll - 1) * threads < n4; i += kUnroll * threads) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x4 + i + u * threads);
    float part[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) part[u] = (v[u].x + v[u].y) + (v[u].z + v[u].w);
#pragma unroll
    for (int h = 1; h < kUnroll; h *= 2) {  // a pairwise tree over the group: part[0] ends with it
#pragma unroll
      for (int u = 0; u + h < kUnroll; u += 2 * h) part[u] += part[u + h];
    }
    sum += part[0];
  }
  for (; i < n4; i += threads) {
    const float4 v = __ldg(x4 + i);
    sum += (v.x + v.y) + (v.z + v.w);
  }
  if (first < n - kVec * n4) sum += x[kVec * n4 + first];
  return sum;
""", "PASS", "", point="the kUnroll float4s of an iteration are summed as a tree (ceil(log2 kUnroll) levels) "
                         "before one add into the chain: shallower than the reference's chain for M >= 1 "
                         "iterations (M + 2 <= 4M)"),
        Mistake("uniform-rounds", CH06, GRID_STRIDE, GS_PRELUDE + """\
  const int64_t span = kUnroll * threads;  // float4s the whole grid reads in one round
  const int64_t rounds = n4 / span;        // full rounds, the same count in every thread
  float sum = 0.0f;
  for (int64_t r = 0; r < rounds; ++r) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x4 + r * span + u * threads + first);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (int64_t i = rounds * span + first; i < n4; i += threads) {  // the last, partial round
    const float4 v = __ldg(x4 + i);
    sum += (v.x + v.y) + (v.z + v.w);
  }
  const int64_t done = kVec * n4;  // the floats the float4s covered; fewer than 4 remain
  if (done + first < n) sum += x[done + first];
  return sum;
""", "PASS", "", point="rounds of the whole grid: n4 / (kUnroll * threads) full rounds, the same trip count "
                         "in every thread, then one grid-stride pass over the partial round; each float4 "
                         "index first + m * threads exactly once"),
        Mistake("accumulator-per-slot", CH06, GRID_STRIDE, GS_PRELUDE + """\
  float acc[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u] = 0.0f;
  int64_t i = first;
  for (; i + (kUnroll - 1) * threads < n4; i += kUnroll * threads) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(x4 + i + u * threads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);  // kUnroll chains
  }
  for (; i < n4; i += threads) {
    const float4 v = __ldg(x4 + i);
    acc[0] += (v.x + v.y) + (v.z + v.w);
  }
#pragma unroll
  for (int h = 1; h < kUnroll; h *= 2) {  // the chains meet in a pairwise tree
#pragma unroll
    for (int u = 0; u + h < kUnroll; u += 2 * h) acc[u] += acc[u + h];
  }
  float sum = acc[0];
  if (first < n - kVec * n4) sum += x[kVec * n4 + first];
  return sum;
""", "PASS", "", point="one accumulator per unroll slot (independent add chains), joined by a pairwise tree: "
                         "depth M + r + log2(kUnroll) + 3 <= 4M + r + 3 for M >= 1 full iterations; with "
                         "M = 0 the other slots are 0.0f and adding them is exact"),
    ],
}
