"""Correct solutions of the histogram track's tasks, written differently from the reference
(see corpus.py)."""
from mistakes import CH07, CH08, Mistake, region_body

# The reference bodies, whole: each variant replaces the whole region, so it reads alone.
REF_GLOBAL_ATOMIC = region_body(CH07, "global-atomic")  # the reference's whole region

REF_SHARED_PRIVATIZED = region_body(CH08, "shared-privatized")  # the reference's whole region

# --- global-atomic ----------------------------------------------------------------------

GA_WHILE = """\
  // A while loop: the grid's thread index, then one grid of threads further each time.
  const int64_t threads = int64_t{gridDim.x} * int64_t{blockDim.x};
  int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  while (i < n) {
    atomicAdd(&hist[in[i]], HistCount{1});
    i += threads;
  }
"""

GA_UNROLL4 = """\
  // Four independent byte loads in flight per iteration, then the bytes left one at a time.
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint8_t b0 = in[i], b1 = in[i + stride], b2 = in[i + 2 * stride], b3 = in[i + 3 * stride];
    atomicAdd(&hist[b0], HistCount{1});
    atomicAdd(&hist[b1], HistCount{1});
    atomicAdd(&hist[b2], HistCount{1});
    atomicAdd(&hist[b3], HistCount{1});
  }
  for (; i < n; i += stride) atomicAdd(&hist[in[i]], HistCount{1});
"""

GA_WARP_MATCH = """\
  // Warp aggregation: the lanes that hold the same byte find each other (__match_any_sync)
  // and the lowest of them adds how many they are, one atomic per distinct byte per warp.
  const unsigned lane = threadIdx.x & 31u;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  // base is the warp's first byte, the same in its 32 lanes: the whole warp runs every
  // iteration, so the full mask is right; a lane past the end holds 256 (no byte).
  for (int64_t base = int64_t{blockIdx.x} * blockDim.x + (threadIdx.x & ~31u); base < n; base += stride) {
    const int64_t i = base + lane;
    const unsigned byte = i < n ? unsigned{in[i]} : 256u;
    const unsigned peers = __match_any_sync(0xffffffffu, byte);
    if (byte < 256u && lane == static_cast<unsigned>(__ffs(peers) - 1))
      atomicAdd(&hist[byte], static_cast<HistCount>(__popc(peers)));
  }
"""

GA_RUNS = """\
  // Each thread counts a run of equal bytes in a 64-bit register and adds the run when
  // its byte changes, and once more at the end.
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  int run_byte = -1;
  HistCount run = 0;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int b = in[i];
    if (b != run_byte) {
      if (run > 0) atomicAdd(&hist[run_byte], run);
      run_byte = b;
      run = 0;
    }
    ++run;
  }
  if (run > 0) atomicAdd(&hist[run_byte], run);
"""

GA_WORDS = """\
  // Four bytes a load: the input may start at any offset, so first the bytes before its
  // first 4-byte boundary, then whole aligned words (grid-stride), then the last bytes.
  const int64_t tid = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const int64_t threads = int64_t{gridDim.x} * blockDim.x;
  const int64_t to_boundary = static_cast<int64_t>((4u - (reinterpret_cast<uintptr_t>(in) & 3u)) & 3u);
  const int64_t head = to_boundary < n ? to_boundary : n;
  const int64_t words = (n - head) / 4;
  const uint32_t* w = reinterpret_cast<const uint32_t*>(in + head);
  for (int64_t k = tid; k < words; k += threads) {
    const uint32_t v = w[k];
    atomicAdd(&hist[v & 0xffu], HistCount{1});
    atomicAdd(&hist[(v >> 8) & 0xffu], HistCount{1});
    atomicAdd(&hist[(v >> 16) & 0xffu], HistCount{1});
    atomicAdd(&hist[v >> 24], HistCount{1});
  }
  const int64_t tail = head + 4 * words;  // bytes [0, head) and [tail, n): at most 3 each
  if (tid < head) atomicAdd(&hist[in[tid]], HistCount{1});
  if (tid < n - tail) atomicAdd(&hist[in[tail + tid]], HistCount{1});
"""

GA_CHUNKS = """\
  // Blocked, not grid-stride: each block takes one contiguous chunk of ceil(n / grid)
  // bytes, and its threads stride through the chunk by the block size.
  const int64_t chunk = (n + gridDim.x - 1) / gridDim.x;
  const int64_t first = int64_t{blockIdx.x} * chunk;
  const int64_t last = first + chunk < n ? first + chunk : n;
  for (int64_t i = first + threadIdx.x; i < last; i += blockDim.x)
    atomicAdd(&hist[in[i]], HistCount{1});
"""

# --- shared-privatized ------------------------------------------------------------------


# What every shared-privatized variant below begins and ends with: the block's copies zeroed,
# and their totals added into the histogram.
SP_ZERO = """\
  const int bin = threadIdx.x;
  for (int c = 0; c < kCopies; ++c) sub[c][bin] = 0;
  __syncthreads();
"""
SP_MERGE = """\
  __syncthreads();
  uint32_t total = 0;
  for (int c = 0; c < kCopies; ++c) total += sub[c][bin];
  if (total) atomicAdd(&hist[bin], HistCount{total});
"""

SP_BINS_LOOP = """\
  // No thread-per-bin assumption: thread t zeroes and merges bins t, t + 256, ...; the
  // count is a while loop.
  for (int b = threadIdx.x; b < kBins; b += kSeedThreads)
    for (int c = 0; c < kCopies; ++c) sub[c][b] = 0;
  __syncthreads();
  const int64_t stride = int64_t{gridDim.x} * kSeedThreads;
  int64_t i = int64_t{blockIdx.x} * kSeedThreads + threadIdx.x;
  while (i < n) {
    atomicAdd(&sub[copy][in[i]], 1u);
    i += stride;
  }
  __syncthreads();
  for (int b = threadIdx.x; b < kBins; b += kSeedThreads) {
    uint32_t total = 0;
    for (int c = 0; c < kCopies; ++c) total += sub[c][b];
    if (total > 0) atomicAdd(&hist[b], HistCount{total});
  }
"""

SP_UNROLL4 = SP_ZERO + """\
  // Four independent byte loads in flight per iteration, then the bytes left one at a time.
  const int64_t stride = int64_t{gridDim.x} * kSeedThreads;
  int64_t i = int64_t{blockIdx.x} * kSeedThreads + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint8_t b0 = in[i], b1 = in[i + stride], b2 = in[i + 2 * stride], b3 = in[i + 3 * stride];
    atomicAdd(&sub[copy][b0], 1u);
    atomicAdd(&sub[copy][b1], 1u);
    atomicAdd(&sub[copy][b2], 1u);
    atomicAdd(&sub[copy][b3], 1u);
  }
  for (; i < n; i += stride) atomicAdd(&sub[copy][in[i]], 1u);
""" + SP_MERGE

SP_WORDS = SP_ZERO + """\
  // Four bytes a load: the bytes before the input's first 4-byte boundary (it may start at
  // any offset), whole aligned words (grid-stride), then the last bytes.
  const int64_t tid = int64_t{blockIdx.x} * kSeedThreads + threadIdx.x;
  const int64_t threads = int64_t{gridDim.x} * kSeedThreads;
  const int64_t to_boundary = static_cast<int64_t>((4u - (reinterpret_cast<uintptr_t>(in) & 3u)) & 3u);
  const int64_t head = to_boundary < n ? to_boundary : n;
  const int64_t words = (n - head) / 4;
  const uint32_t* w = reinterpret_cast<const uint32_t*>(in + head);
  for (int64_t k = tid; k < words; k += threads) {
    const uint32_t v = w[k];
    atomicAdd(&sub[copy][v & 0xffu], 1u);
    atomicAdd(&sub[copy][(v >> 8) & 0xffu], 1u);
    atomicAdd(&sub[copy][(v >> 16) & 0xffu], 1u);
    atomicAdd(&sub[copy][v >> 24], 1u);
  }
  const int64_t tail = head + 4 * words;  // bytes [0, head) and [tail, n): at most 3 each
  if (tid < head) atomicAdd(&sub[copy][in[tid]], 1u);
  if (tid < n - tail) atomicAdd(&sub[copy][in[tail + tid]], 1u);
""" + SP_MERGE

SP_WARP_MATCH = SP_ZERO + """\
  // Warp aggregation: lanes with the same byte find each other and the lowest adds how many
  // they are. base is the warp's first byte, the same in its 32 lanes, so the whole warp
  // runs every iteration (the full mask is right); a lane past the end holds 256 (no byte).
  const unsigned lane = threadIdx.x & 31u;
  const int64_t stride = int64_t{gridDim.x} * kSeedThreads;
  for (int64_t base = int64_t{blockIdx.x} * kSeedThreads + (threadIdx.x & ~31u); base < n; base += stride) {
    const int64_t i = base + lane;
    const unsigned byte = i < n ? unsigned{in[i]} : 256u;
    const unsigned peers = __match_any_sync(0xffffffffu, byte);
    if (byte < 256u && lane == static_cast<unsigned>(__ffs(peers) - 1))
      atomicAdd(&sub[copy][byte], static_cast<uint32_t>(__popc(peers)));
  }
""" + SP_MERGE

SP_RUNS = SP_ZERO + """\
  // Each thread counts a run of equal bytes in a register and adds it to the shared copy
  // when its byte changes, and once more after the loop (a block sees < 2^32 bytes).
  const int64_t stride = int64_t{gridDim.x} * kSeedThreads;
  int run_byte = -1;
  uint32_t run = 0;
  for (int64_t i = int64_t{blockIdx.x} * kSeedThreads + threadIdx.x; i < n; i += stride) {
    const int b = in[i];
    if (b != run_byte) {
      if (run > 0) atomicAdd(&sub[copy][run_byte], run);
      run_byte = b;
      run = 0;
    }
    ++run;
  }
  if (run > 0) atomicAdd(&sub[copy][run_byte], run);
""" + SP_MERGE

SP_FOLD_CHUNKS = """\
  const int bin = threadIdx.x;
  for (int c = kCopies - 1; c >= 0; --c) sub[c][bin] = 0;
  __syncthreads();
  // Blocked, not grid-stride: the block takes one contiguous chunk of ceil(n / grid) bytes
  // (at most 2^31: the launcher's grid_for), its threads striding through it by 256.
  const int64_t chunk = (n + gridDim.x - 1) / gridDim.x;
  const int64_t first = int64_t{blockIdx.x} * chunk;
  const int64_t last = first + chunk < n ? first + chunk : n;
  for (int64_t i = first + threadIdx.x; i < last; i += kSeedThreads) atomicAdd(&sub[copy][in[i]], 1u);
  __syncthreads();
  // The merge folds the copies of this thread's bin into copy 0 (no other thread touches
  // column `bin`), then sends it.
  for (int c = 1; c < kCopies; ++c) sub[0][bin] += sub[c][bin];
  if (sub[0][bin] != 0) atomicAdd(&hist[bin], HistCount{sub[0][bin]});
"""

CORRECT = {
    "global-atomic": [
        Mistake("while-loop", CH07, REF_GLOBAL_ATOMIC, GA_WHILE, "PASS", "",
                point="a while loop with the grid's thread count as its step: the same bytes per thread"),
        Mistake("unrolled-by-4", CH07, REF_GLOBAL_ATOMIC, GA_UNROLL4, "PASS", "",
                point="4 grid-strided loads per iteration while i + 3 * stride < n, then a one-byte loop for "
                      "the rest: each index i, i + stride, ... is visited once"),
        Mistake("warp-match-any", CH07, REF_GLOBAL_ATOMIC, GA_WARP_MATCH, "PASS", "",
                point="warp aggregation with __match_any_sync: a warp-uniform loop (the full mask is right), "
                      "each group of equal bytes adds __popc(peers) from its lowest lane; lanes past n hold 256 "
                      "and add nothing"),
        Mistake("register-runs", CH07, REF_GLOBAL_ATOMIC, GA_RUNS, "PASS", "",
                point="runs of equal bytes counted in a 64-bit register and flushed on a change and at the end: "
                      "every byte lands in exactly one run"),
        Mistake("aligned-words", CH07, REF_GLOBAL_ATOMIC, GA_WORDS, "PASS", "",
                point="4-byte loads from the first 4-byte boundary (any --offset), grid-stride over whole words, "
                      "head (< 4 bytes) and tail (< 4 bytes) by threads 0..3: [0, head) + words + [tail, n) = n"),
        Mistake("block-chunks", CH07, REF_GLOBAL_ATOMIC, GA_CHUNKS, "PASS", "",
                point="blocked partition instead of grid-stride: block b owns [b * chunk, min(n, (b+1) * chunk)), "
                      "the chunks tile [0, n) once"),
    ],
    "shared-privatized": [
        Mistake("bins-loop", CH08, REF_SHARED_PRIVATIZED, SP_BINS_LOOP, "PASS", "",
                point="zero and merge in a loop over bins (b = threadIdx.x; b < kBins; b += 256), no "
                      "one-thread-per-bin assumption; the count is a while loop"),
        Mistake("unrolled-by-4", CH08, REF_SHARED_PRIVATIZED, SP_UNROLL4, "PASS", "",
                point="4 grid-strided loads per iteration, then a one-byte loop for the rest"),
        Mistake("aligned-words", CH08, REF_SHARED_PRIVATIZED, SP_WORDS, "PASS", "",
                point="4-byte loads from the first 4-byte boundary, head and tail bytes by threads 0..3"),
        Mistake("warp-match-any", CH08, REF_SHARED_PRIVATIZED, SP_WARP_MATCH, "PASS", "",
                point="__match_any_sync aggregation before the shared atomic, in a warp-uniform loop; the merge "
                      "sums every copy, so the leader's copy takes the group's count"),
        Mistake("register-runs", CH08, REF_SHARED_PRIVATIZED, SP_RUNS, "PASS", "",
                point="runs of equal bytes counted in a register, one shared atomic per run; a block counts "
                      "< 2^32 bytes, so the 32-bit run cannot wrap"),
        Mistake("chunks-and-fold", CH08, REF_SHARED_PRIVATIZED, SP_FOLD_CHUNKS, "PASS", "",
                point="a contiguous chunk per block (<= 2^31 bytes by grid_for), zeroing from the last copy, "
                      "and a merge that folds the copies of its own bin into copy 0 before the global atomic"),
    ],
}
