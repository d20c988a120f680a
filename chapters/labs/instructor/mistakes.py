"""The common mistakes of each lab task, as mutations of the reference regions, and
the planted submissions that prove the grader. Instructor only: the export never
copies chapters/labs/instructor/, since `old` quotes the solution.

A Mistake replaces `old` by `new` once inside the task's region in `file`. `expect`
is the status the checker must give it and `says` a part of the line it must print
(its detail or its diagnosis); the repository's tests apply every one of them.
"""
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from labkit import regions  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Mistake:
    name: str
    file: str
    old: str
    new: str
    expect: str          # FAIL, CRASH, TIMEOUT, SANITIZER or PASS (a correct variant); a|b: either
    says: str = ""       # part of the detail or diagnosis the checker must print; a|b: either
    point: str = ""      # the lab-design point it demonstrates (issue 18), for the handout
    static: str = ""     # the rule of labkit/static.py that must flag it without a GPU


def region_body(file, task_id, k=0):
    """The reference's body of the k-th region of task_id in `file`, as apply() matches
    it: a correct solution (corpus.py) replaces the whole of it."""
    lines = (ROOT / file).read_text().split("\n")
    b, e = [(b, e) for t, b, e, _ in regions.find_regions(lines) if t == task_id][k]
    return "\n".join(lines[b + 1:e]) + "\n"


CH02 = "chapters/02_reduce_global/02_reduce_global.cu"
CH03 = "chapters/03_reduce_shared/03_reduce_shared.cu"
CH05 = "chapters/05_reduce_unrolled/05_reduce_unrolled.cu"
CH06 = "chapters/06_reduce_thread_overload/reduce_overload.cuh"
CH07 = "chapters/07_histogram_atomic_naive/07_histogram_atomic_naive.cu"
CH08 = "chapters/08_histogram_privatized/08_histogram_privatized.cu"
CH09 = "chapters/09_transpose_naive/09_transpose_naive.cu"
CH10 = "chapters/10_transpose_shared/shared_tile.cuh"
CH12 = "chapters/12_dot_product/dot_kernel.cuh"
CH13 = "chapters/13_top2/13_top2.cu"
STANDIN = "chapters/labs/standin/standin.cpp"

MISTAKES = {
    "global-tree": [
        Mistake("missing-barrier", CH02, "    __syncthreads();  // also makes this level's global writes visible to the block\n",
                "", "FAIL", "race", "5"),
        Mistake("dropped-tail", CH02, "if (tid < offset && tid + offset < count)", "if (tid < offset)", "FAIL", "", "6"),
        Mistake("stops-one-level-early", CH02, "offset > 0; offset /= 2", "offset > 1; offset /= 2", "FAIL",
                "fails at --n"),  # n = 1 needs no level: it passes
    ],
    "shared-tree": [
        Mistake("missing-barrier", CH03, "    __syncthreads();\n  }\n", "  }\n", "FAIL", "race", "5"),
        Mistake("off-by-one", CH03, "if (tid < stride)", "if (tid <= stride)", "FAIL", "shared-out-of-bounds",
                static="shared-out-of-bounds"),
        Mistake("barrier-inside-if", CH03, "if (tid < stride) s[tid] += s[tid + stride];\n    __syncthreads();",
                "if (tid < stride) {\n      s[tid] += s[tid + stride];\n      __syncthreads();\n    }", "FAIL",
                "barrier-in-branch", static="barrier-in-branch"),
        Mistake("stops-one-level-early", CH03, "stride > 0; stride /= 2", "stride > 1; stride /= 2", "FAIL",
                "fails at --n"),  # n = 1 needs no level: it passes
        Mistake("another-correct-order", CH03,
                "for (int stride = kBlock / 2; stride > 0; stride /= 2) {\n    if (tid < stride) s[tid] += s[tid + stride];",
                "for (int stride = 1; stride < kBlock; stride *= 2) {\n    if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];",
                "PASS", "", "12"),
    ],
    "warp-shuffle": [
        Mistake("offsets-start-at-8", CH05, "int offset = kWarp / 2;", "int offset = 8;", "FAIL", "", "5"),
        Mistake("assigns-instead-of-adding", CH05, "w += __shfl_down_sync", "w = __shfl_down_sync", "FAIL"),
        Mistake("ignores-the-partner", CH05, "w += __shfl_down_sync", "w += 0.0f * __shfl_down_sync",
                "FAIL"),
        Mistake("pre-cuda9-shuffle", CH05, "__shfl_down_sync(kFullMask, w, offset)", "__shfl_down(w, offset)",
                "FAIL", "removed-intrinsic", static="removed-intrinsic"),
        Mistake("lane-dependent-offset", CH05, "__shfl_down_sync(kFullMask, w, offset)",
                "__shfl_down_sync(kFullMask, w, offset + (tid & 1))", "FAIL", "", static="shuffle-not-uniform"),
        Mistake("endless-loop", CH05, "#pragma unroll\n", "  while (w == w || w != w) w += 0.0f;\n#pragma unroll\n",
                "TIMEOUT", "", "10"),
    ],
    "grid-stride": [
        Mistake("dropped-tail", CH06, "  if (first < n - kVec * n4) sum += x[kVec * n4 + first];  // the scalar tail: n % 4 floats\n",
                "", "FAIL", "", "6"),  # the second pass runs this code too: no clean tail class
        Mistake("one-block-stride", CH06, "const int64_t threads = static_cast<int64_t>(gridDim.x) * kBlock;",
                "const int64_t threads = kBlock;", "FAIL", "more than one block"),
        Mistake("writes-its-input", CH06, "  return sum;\n",
                "  if (first == 0 && n > 0) const_cast<float*>(x)[0] = 0.0f;\n  return sum;\n", "FAIL",
                "input changed", "8"),
        Mistake("reads-past-the-end", CH06, "  return sum;\n",
                "  if (first == 0 && x[n] == 1.2345e-30f) sum += 1.0f;  // never true; still a read past n\n  return sum;\n",
                "SANITIZER", "memcheck", "11"),
        Mistake("never-writes", CH06, "  const float4* x4", "  return 0.0f;\n  const float4* x4", "FAIL", "", "7"),
    ],
    "global-atomic": [
        Mistake("plain-add", CH07, "atomicAdd(&hist[in[i]], HistCount{1});", "hist[in[i]] += 1;", "FAIL", "", "5"),
        Mistake("one-block-stride", CH07, "const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;",
                "const int64_t stride = blockDim.x;", "FAIL|TIMEOUT"),
        Mistake("writes-its-input", CH07, "atomicAdd(&hist[in[i]], HistCount{1});",
                "atomicAdd(&hist[in[i]], HistCount{1}), const_cast<uint8_t*>(in)[i] = 0;", "FAIL", "input changed", "8"),
        Mistake("wild-write", CH07, "    atomicAdd(&hist[in[i]], HistCount{1});\n",
                "    atomicAdd(&hist[in[i] + (int64_t{1} << 40)], HistCount{1});\n", "CRASH", "CUDA error", "10"),
    ],
    "shared-privatized": [
        Mistake("not-zeroed", CH08, "  for (int c = 0; c < kCopies; ++c) sub[c][bin] = 0;\n", "", "FAIL"),
        Mistake("missing-first-barrier", CH08, "  __syncthreads();\n  const int64_t stride", "  const int64_t stride",
                "FAIL", "", "5"),
        Mistake("missing-second-barrier", CH08, "  __syncthreads();\n  uint32_t total", "  uint32_t total", "FAIL",
                "", "5"),
        Mistake("plain-add", CH08, "atomicAdd(&sub[copy][in[i]], 1u);", "sub[copy][in[i]] += 1;", "FAIL"),
    ],
    "naive": [
        Mistake("swapped-index", CH09, "out[c * rows + r] = in[r * cols + c];", "out[c * cols + r] = in[r * cols + c];",
                "FAIL|CRASH|SANITIZER", "", "6"),
        Mistake("no-edge-guard", CH09, "if (r < rows && c < cols) out", "out", "FAIL|CRASH|SANITIZER", "", "6",
                static="store-without-guard"),
        Mistake("writes-its-input", CH09, "out[c * rows + r] = in[r * cols + c];",
                "out[c * rows + r] = in[r * cols + c], const_cast<float*>(in)[r * cols + c] = 0.0f;", "FAIL",
                "input changed", "8"),
        Mistake("guards-one-side", CH09, "if (r < rows && c < cols) out", "if (r < rows) out", "FAIL|CRASH|SANITIZER"),
    ],
    "shared-tile": [
        Mistake("missing-barrier", CH10, "  __syncthreads();  // the whole tile is in shared memory before anyone reads it\n",
                "", "FAIL|SANITIZER", "", "5"),
        Mistake("untransposed-tile", CH10, "= tile[threadIdx.x][threadIdx.y];", "= tile[threadIdx.y][threadIdx.x];",
                "FAIL"),
        Mistake("swapped-output-guard", CH10, "if (out_r < cols && out_c < rows)", "if (out_r < rows && out_c < cols)",
                "FAIL|CRASH|SANITIZER", "", "6"),
    ],
    "dot-grid-stride": [
        Mistake("dropped-tail", CH12, "  for (int64_t i = n4 * kVec + first; i < n; i += threads) acc.x = fmaf(x[i], y[i], acc.x);\n",
                "", "FAIL", "", "6"),  # the checks also start at odd offsets: no clean tail class
        Mistake("one-block-stride", CH12, "for (int64_t i = first; i < n4; i += threads)",
                "for (int64_t i = first; i < n4; i += kBlock)", "FAIL"),
        Mistake("writes-its-input", CH12, "const float4 a = x4[i], b = y4[i];",
                "const float4 a = x4[i], b = y4[i];\n    const_cast<float4*>(x4)[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);",
                "FAIL", "input changed", "8"),
        Mistake("wrong-lane", CH12, "acc.y = fmaf(a.y, b.y, acc.y);", "acc.y = fmaf(a.y, b.x, acc.y);", "FAIL"),
    ],
    "top2-merge": [
        Mistake("mask-starts-at-8", CH13, "for (int m = sw::kWarp / 2; m > 0; m >>= 1)", "for (int m = 8; m > 0; m >>= 1)",
                "FAIL", "", "5"),
        Mistake("missing-barrier", CH13, "    __syncthreads();  // outside the if: the seed synchronizes inside it, which is undefined\n",
                "", "FAIL|SANITIZER", "", "5"),
        Mistake("off-by-one", CH13, "if (threadIdx.x < h)", "if (threadIdx.x <= h)", "FAIL", "shared-out-of-bounds",
                static="shared-out-of-bounds"),
        Mistake("barrier-inside-if", CH13,
                "if (threadIdx.x < h) s[threadIdx.x] = merge(s[threadIdx.x], s[threadIdx.x + h]);\n    __syncthreads();"
                "  // outside the if: the seed synchronizes inside it, which is undefined\n",
                "if (threadIdx.x < h) {\n      s[threadIdx.x] = merge(s[threadIdx.x], s[threadIdx.x + h]);\n"
                "      __syncthreads();\n    }\n", "FAIL", "barrier-in-branch", static="barrier-in-branch"),
    ],
    "standin-sum": [
        Mistake("off-by-one", STANDIN, "i < n; ++i", "i < n - 1; ++i", "FAIL"),
        Mistake("does-not-compile", STANDIN, "return s;", "return s", "BUILD_FAIL"),
        Mistake("endless-loop", STANDIN, "  return s;\n", "  while (s == s) s += 0;\n  return s;\n", "TIMEOUT"),
        Mistake("crashes", STANDIN, "  return s;\n", "  *(volatile int*)nullptr = 1;\n  return s;\n", "CRASH"),
        Mistake("prints-megabytes", STANDIN, "  return s;\n",
                "  for (int k = 0; k < (1 << 20); ++k) std::fputs(\"garbage garbage garbage\\n\", stdout);\n  return s;\n",
                "FAIL", "dropped"),
        Mistake("exits-early", STANDIN, "  return s;\n", "  std::exit(0);\n  return s;\n", "FAIL",
                "calls exit|ended early"),  # the grader's audit names the call; `check` says the run ended early
        Mistake("uses-a-library", STANDIN, "  return s;\n", "  return thrust::reduce(x, x + n);\n", "FAIL", "library"),
        Mistake("includes-a-header", STANDIN, "  int64_t s = 0;\n", "#include <numeric>\n  int64_t s = 0;\n", "FAIL",
                "directive"),
    ],
}


# --- scan (chapters 16-18), appended with its track --------------------------------------------
CH16H = "chapters/16_scan/scan_lookback.cuh"
CH18 = "chapters/18_radix_sort/18_radix_sort.cu"

MISTAKES.update({
    "warp-scan": [
        Mistake("no-lane-guard", CH16H, "    if (lane >= d) v += up;\n", "    v += up;\n", "FAIL", "", "5"),
        Mistake("shuffles-down", CH16H, "__shfl_up_sync(sw::kFullMask, v, d)", "__shfl_down_sync(sw::kFullMask, v, d)",
                "FAIL"),
        Mistake("stops-at-16", CH16H, "d < sw::kWarp; d *= 2", "d < sw::kWarp / 2; d *= 2", "FAIL"),
        Mistake("assigns-instead-of-adding", CH16H, "if (lane >= d) v += up;", "if (lane >= d) v = up;", "FAIL"),
        # Undefined behaviour that the GPU may or may not show (the compiler can predicate the
        # shuffle); the checker's hint must name it with or without a GPU.
        Mistake("shuffle-in-branch", CH16H,
                "    const T up = __shfl_up_sync(sw::kFullMask, v, d);\n    if (lane >= d) v += up;\n",
                "    if (lane >= d) v += __shfl_up_sync(sw::kFullMask, v, d);\n",
                "PASS|FAIL|SANITIZER|TIMEOUT|CRASH", "shuffle-in-branch", static="shuffle-in-branch"),
    ],
    "lookback": [
        Mistake("two-loads", CH16H,
                "  const Count s = w.load(cuda::memory_order_relaxed);\n"
                "  return {static_cast<unsigned>(s >> kFlagShift), s & kValueMask};\n",
                "  const unsigned flag = static_cast<unsigned>(w.load(cuda::memory_order_relaxed) >> kFlagShift);\n"
                "  const Count s = w.load(cuda::memory_order_relaxed);\n"
                "  return {flag, s & kValueMask};\n",
                "FAIL", "torn|a race", "5"),
        Mistake("block-index-order", CH16H, "tile = static_cast<int64_t>(atomicAdd(counter, Count{1}));",
                "tile = blockIdx.x;", "FAIL", "ticket"),
        Mistake("flag-dropped", CH16H, "w.store((Count{flag} << kFlagShift) | (bits & kValueMask),",
                "w.store(bits & kValueMask,", "TIMEOUT", "", "10"),
    ],
    "digit-scatter": [
        Mistake("lanes-backwards", CH18, "const unsigned below = __popc(same & ((1u << lane) - 1));",
                "const unsigned below = __popc(same >> lane) - 1;", "FAIL", "", "5"),
        Mistake("forgets-earlier-rows", CH18, "  return base + below;\n", "  return below;\n", "FAIL|CRASH"),
        Mistake("seven-bit-match", CH18, "for (int b = 0; b < kDigitBits; ++b)", "for (int b = 0; b < kDigitBits - 1; ++b)",
                "FAIL|CRASH"),
    ],
})


# --- GEMM (chapters 19-20), appended with its track --------------------------------------------
CH19 = "chapters/19_sgemm/19_sgemm.cu"
CH19R = "chapters/19_sgemm/register_blocking.cu"
CH19V = "chapters/19_sgemm/vector_tiles.cu"
CH20S = "chapters/20_tensor_cores/mma_sync.cu"


def untransposed_a_tile():
    """vector-transposed written with the A tile NOT transposed (as's 1024 floats read as
    the 128 x 8 tile, row by row), in both regions: correct, and slower, which only the
    timing shows: the tile's stores hit 4 banks per warp (an 8-way conflict), and a thread
    reads its 4 rows of A with 4 scalar loads where one float4 did."""
    stores = ("    as[a_k + 0][a_row] = a4.x;\n    as[a_k + 1][a_row] = a4.y;\n"
              "    as[a_k + 2][a_row] = a4.z;\n    as[a_k + 3][a_row] = a4.w;\n")
    reads = "        a[h] = *reinterpret_cast<const float4*>(&as[p][h * kHalf + thread_row * 4]);\n"
    return ((stores, reads),
            ("    // The A tile as it is in A: float f = 8 r + c of the tile (row r, column c) is\n"
             "    // as[f / kTileM][f % kTileM].\n"
             "    const float av[4] = {a4.x, a4.y, a4.z, a4.w};\n"
             "#pragma unroll\n"
             "    for (int q = 0; q < 4; ++q) {\n"
             "      const int f = a_row * kTileK + a_k + q;\n"
             "      as[f / kTileM][f % kTileM] = av[q];\n"
             "    }\n",
             "        float column[4];  // this thread's 4 rows of A at k = p, one load each\n"
             "#pragma unroll\n"
             "        for (int q = 0; q < 4; ++q) {\n"
             "          const int f = (h * kHalf + thread_row * 4 + q) * kTileK + p;\n"
             "          column[q] = as[f / kTileM][f % kTileM];\n"
             "        }\n"
             "        a[h] = make_float4(column[0], column[1], column[2], column[3]);\n"))


MISTAKES.update({
    "smem-tiles": [
        Mistake("missing-first-barrier", CH19, "    __syncthreads();\n#pragma unroll\n", "#pragma unroll\n",
                "FAIL|SANITIZER", "", "5"),
        Mistake("missing-second-barrier", CH19, "    __syncthreads();  // before the next tile overwrites these\n", "",
                "FAIL|SANITIZER", "", "5"),
        Mistake("skips-the-zero-fill", CH19,
                "    as[ty][tx] = row < m && p0 + tx < k ? A[static_cast<int64_t>(row) * k + p0 + tx] : 0.0f;\n"
                "    bs[ty][tx] = p0 + ty < k && col < n ? B[static_cast<int64_t>(p0 + ty) * n + col] : 0.0f;\n",
                "    if (row < m && p0 + tx < k) as[ty][tx] = A[static_cast<int64_t>(row) * k + p0 + tx];\n"
                "    if (p0 + ty < k && col < n) bs[ty][tx] = B[static_cast<int64_t>(p0 + ty) * n + col];\n",
                "FAIL", "", "6"),
        Mistake("drops-the-partial-tile", CH19, "p0 < k; p0 += kSide", "p0 + kSide <= k; p0 += kSide", "FAIL",
                "the tail", "6"),
        Mistake("reads-b-transposed", CH19, "acc += as[ty][p] * bs[p][tx];", "acc += as[ty][p] * bs[tx][p];", "FAIL"),
        # Correct, and slow: the B tile stored and read down its columns, 32 threads of a warp in
        # one bank. It must PASS; the graded timing shows the conflicts.
        Mistake("b-tile-transposed", CH19,
                "    bs[ty][tx] = p0 + ty < k && col < n ? B[static_cast<int64_t>(p0 + ty) * n + col] : 0.0f;\n"
                "    __syncthreads();\n"
                "#pragma unroll\n"
                "    for (int p = 0; p < kSide; ++p) acc += as[ty][p] * bs[p][tx];  // as: broadcast; bs: a row\n",
                "    bs[tx][ty] = p0 + ty < k && col < n ? B[static_cast<int64_t>(p0 + ty) * n + col] : 0.0f;\n"
                "    __syncthreads();\n"
                "#pragma unroll\n"
                "    for (int p = 0; p < kSide; ++p) acc += as[ty][p] * bs[tx][p];  // bs: a column, one bank\n",
                "PASS", "", "12"),
    ],
    "register-2d": [
        Mistake("swapped-accumulator", CH19R, "acc[i][j] += a_reg[i] * b_reg[j];", "acc[j][i] += a_reg[i] * b_reg[j];",
                "FAIL"),
        Mistake("interleaved-rows", CH19R, "a_reg[i] = as[thread_row * kRows + i][p];",
                "a_reg[i] = as[thread_row + i * kThreadsAcross][p];", "FAIL"),
        Mistake("one-k-short", CH19R, "for (int p = 0; p < kTileK; ++p) {", "for (int p = 0; p < kTileK - 1; ++p) {",
                "FAIL"),
        Mistake("b-from-the-first-row", CH19R, "b_reg[j] = bs[p][thread_col * kCols + j];",
                "b_reg[j] = bs[0][thread_col * kCols + j];", "FAIL"),
    ],
    "vector-transposed": [
        Mistake("missing-barrier", CH19V,
                "        load4<kVec>(b_start, p0 + b_row < k, b_col, n - col0);\n    __syncthreads();\n",
                "        load4<kVec>(b_start, p0 + b_row < k, b_col, n - col0);\n", "FAIL|SANITIZER", "", "5"),
        Mistake("quad-out-of-order", CH19V, "    as[a_k + 1][a_row] = a4.y;\n    as[a_k + 2][a_row] = a4.z;\n",
                "    as[a_k + 1][a_row] = a4.z;\n    as[a_k + 2][a_row] = a4.y;\n", "FAIL"),
        Mistake("halves-adjacent", CH19V, "&bs[p][h * kHalf + thread_col * 4]", "&bs[p][thread_col * 8 + h * 4]",
                "FAIL"),
        Mistake("b-past-the-last-column", CH19V, "load4<kVec>(b_start, p0 + b_row < k, b_col, n - col0)",
                "load4<kVec>(b_start, p0 + b_row < k, b_col, n)", "FAIL|CRASH|SANITIZER", "", "6"),
        Mistake("untransposed-a-tile", CH19V, *untransposed_a_tile(), "PASS", "", "12"),
    ],
    "mma-fragments": [
        Mistake("b-registers-swapped", CH20S, "b[j][1] = r[1], b[j + 1][0] = r[2]", "b[j][1] = r[2], b[j + 1][0] = r[1]",
                "FAIL", "", "5"),
        Mistake("c-lane-mapping-swapped", CH20S,
                "+ lane / 4,\n                 col0 + warp_col + j * kMmaN + 2 * (lane % 4)",
                "+ lane % 4,\n                 col0 + warp_col + j * kMmaN + 2 * (lane / 4)", "FAIL", "", "5"),
        # with an even n the pair is stored as one 8-byte word at an odd column: misaligned
        Mistake("c-column-not-doubled", CH20S, "j * kMmaN + 2 * (lane % 4)", "j * kMmaN + (lane % 4)", "CRASH",
                "misaligned address"),
        Mistake("c-rows-by-eight", CH20S, "i * kMmaM + lane / 4,", "i * kMmaM + lane / 8,", "FAIL"),
    ],
})
