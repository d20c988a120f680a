"""The labs' tasks: which marked regions of the chapter sources a student writes,
and how the checker tests them. This file travels with every student copy.

A region is a run of lines in a chapter source between two marks:

    // lab <task>: begin
    ...the reference code...
    // lab <task>: end

The export replaces each region of a track's tasks with a stub made from the
Region's text and hint below (plus `stub`, code that keeps the stub compiling).
A task can have regions in several files: the student writes all of them, and
the task passes when every check below passes. The common mistakes of each task
live with the instructor (chapters/labs/instructor/mistakes.py), not here.
"""
from dataclasses import dataclass, field


@dataclass
class Region:
    file: str          # path from the repository root
    text: str          # what to write, two or three sentences
    hint: str
    stub: str = ""     # code the stub keeps so that it compiles (e.g. a return)
    # The launch the static checks assume (labkit/static.py): thread index ranges
    # ("threadIdx.x": 256), values of names the file does not define (template
    # parameters), and "array:NAME" extents of arrays passed in by pointer.
    shape: dict = field(default_factory=dict)


@dataclass
class Check:
    chapter: str                # the chapter folder; its program is the checker
    steps: list                 # the step names whose checks belong to this task
    args: list = field(default_factory=list)   # extra arguments, e.g. ["--variant", "sequential"]
    time_args: list = field(default_factory=list)  # extra arguments of the timed run: --variant steps[0] (one step)
    # The grader times a smaller input than the chapter's default, still 5x the L2 or
    # more, so that the rounds of the reference and the submission stay short.
    grade_size: list = field(default_factory=list)


@dataclass
class Task:
    id: str
    track: str
    title: str
    regions: list
    checks: list
    size: str                   # the size option(s): "--n", "--bytes", "shape" (--rows, --cols) or
                                # "gemm" (--m, --n, --k: a matrix product)
    unit: int                   # elements one block handles: n % unit != 0 leaves a tail
    small: list                 # arguments of the small run under compute-sanitizer
    races: bool = False         # shared memory or atomics: 10 repeats, racecheck and synccheck
    initcheck: bool = False     # outputs that must be zeroed by the kernel's launcher: initcheck too
    requires: list = field(default_factory=list)  # tasks whose code these checks also run
    tolerance: str = ""         # how the check decides, for the handout
    min_size: int = 1           # the smallest size the task's checks take (top-2 needs two elements)


# The tracks, in the order the chapters teach them. "standin" is the CPU-only
# stand-in that the repository's own tests grade without a GPU.
TRACKS = {
    "reduce": ["02_reduce_global", "03_reduce_shared", "04_reduce_dynamic_shared", "05_reduce_unrolled",
               "06_reduce_thread_overload"],
    "histogram": ["07_histogram_atomic_naive", "08_histogram_privatized"],
    "transpose": ["09_transpose_naive", "10_transpose_shared", "11_transpose_padded"],
    "dot-top2": ["12_dot_product", "13_top2"],
    "standin": ["labs/standin"],
}

SUM_TOLERANCE = ("|got - exact| <= depth * 2^-24 * sum|x_i| + 2^-24 * |exact|, where depth is the most "
                 "float additions any element passes through (the tree's levels, passes and loop "
                 "trip counts) and exact is the sum in double; float rounding, never an arbitrary epsilon")
EXACT = "exact: every bin (or every element, or the value and index of both winners) equal to the CPU reference"

TASKS = [
    # --- reduce --------------------------------------------------------------------------
    Task("global-tree", "reduce", "A tree in global memory",
         [Region("chapters/02_reduce_global/02_reduce_global.cu",
                 "Block b sums its blockDim.x floats x[b*blockDim.x ...] in place, as a tree: at each level "
                 "thread t < offset adds the element `offset` places ahead, halving offset each level. "
                 "The last block may hold fewer elements (count). Thread 0 writes the block's sum to partial[b].",
                 "Every level must finish before the next one reads it; an element of `x` at index `n` or "
                 "past it belongs to nobody.")],
         [Check("02_reduce_global", ["global-in-place"], grade_size=["--n", "2^26"])],
         size="--n", unit=256, small=["--n", "1000", "--block", "256"], races=True, tolerance=SUM_TOLERANCE),
    Task("shared-tree", "reduce", "A tree in shared memory, sequential addressing",
         [Region("chapters/03_reduce_shared/03_reduce_shared.cu",
                 "s holds the block's kBlock values (zeros past n). Sum them into s[0] with sequential "
                 "addressing: at each level thread t < stride adds s[t + stride], stride halving from kBlock / 2.",
                 "Compare the two interleaved kernels above: keep the working threads packed and their "
                 "addresses consecutive. Synchronize the block between levels.",
                 shape={"threadIdx.x": 256}),
          Region("chapters/04_reduce_dynamic_shared/04_reduce_dynamic_shared.cu",
                 "The same tree over `size` values in s (size = the block's thread count).",
                 "It is your chapter 03 loop, over `size` values instead of chapter 03's block constant.",
                 shape={"threadIdx.x": 256, "size": 256, "array:s": 256})],
         [Check("03_reduce_shared", ["sequential"], ["--variant", "sequential"], grade_size=["--n", "2^26"]),
          Check("04_reduce_dynamic_shared", ["static-shared", "dynamic-shared"])],
         size="--n", unit=256, small=["--n", "1000"], races=True, tolerance=SUM_TOLERANCE),
    Task("warp-shuffle", "reduce", "The last warp with shuffles",
         [Region("chapters/05_reduce_unrolled/05_reduce_unrolled.cu",
                 "Warp 0 finishes the block: each of its lanes holds w = s[lane] + s[lane + 32], two of the "
                 "64 partial sums. Halve the distance with __shfl_down_sync until lane 0's w holds the sum "
                 "(the line after the region writes it to out[blockIdx.x]).",
                 "Offsets 16, 8, 4, 2, 1 with the full mask `sw::kFullMask`; no shared memory and no barrier."),
          Region("chapters/06_reduce_thread_overload/reduce_overload.cuh",
                 "warp_sum: return the sum of v over the 32 lanes of the warp, valid in lane 0.",
                 "The same shuffle loop as chapter 05; here the mask is `sw::kFullMask`.",
                 stub="return v;")],
         [Check("05_reduce_unrolled", ["shuffle"], ["--variant", "shuffle"], grade_size=["--n", "2^26"])],
         size="--n", unit=512, small=["--n", "1000", "--block", "256"], tolerance=SUM_TOLERANCE),
    Task("grid-stride", "reduce", "Thread overload: a grid-stride loop of float4 loads",
         [Region("chapters/06_reduce_thread_overload/reduce_overload.cuh",
                 "thread_sum: this thread's share of x[0, n) when gridDim.x * kBlock threads split it. Read "
                 "float4s in a grid-stride loop with kUnroll independent loads per iteration, finish the float4s "
                 "that remain, then add the scalar tail (n % 4 floats), one per thread.",
                 "Issue all `kUnroll` loads before using any; the stride is the whole grid, not one block.",
                 stub="return 0.0f;")],
         [Check("06_reduce_thread_overload", ["two-pass", "single-pass-atomic", "single-pass-last-block"],
                time_args=["--variant", "two-pass"], grade_size=["--n", "2^26"])],
         size="--n", unit=4, small=["--n", "1001", "--block", "256"], requires=["warp-shuffle"],
         tolerance=SUM_TOLERANCE),
    # --- histogram -----------------------------------------------------------------------
    Task("global-atomic", "histogram", "A histogram with global atomics",
         [Region("chapters/07_histogram_atomic_naive/07_histogram_atomic_naive.cu",
                 "Count the n bytes of `in` into the 256 global counters hist[] (zeroed by the launcher). "
                 "Every thread of the grid takes bytes in a grid-stride loop.",
                 "Many threads hit the same bin at once: an atomic add, of `HistCount{1}`.")],
         [Check("07_histogram_atomic_naive", ["global-atomic-2xsm", "global-atomic-full"],
                time_args=["--dist", "uniform", "--variant", "global-atomic-2xsm"], grade_size=["--bytes", "2^28"])],
         size="--bytes", unit=256, small=["--bytes", "4099"], races=True, initcheck=True, tolerance=EXACT),
    Task("shared-privatized", "histogram", "A private histogram per block in shared memory",
         [Region("chapters/08_histogram_privatized/08_histogram_privatized.cu",
                 "Each of the block's 256 threads owns one bin. Zero the block's kCopies sub-histograms, count "
                 "this thread's bytes (grid-stride) into sub[copy] with shared-memory atomics, then add bin "
                 "`bin` over the copies and send the block's total to hist[] with one global atomic.",
                 "Shared memory is not zero at launch, and counting must not start before every bin is "
                 "zeroed, nor the totals be read before every thread has counted.",
                 shape={"threadIdx.x": 256, "kCopies": 8, "array:sub": [8, 256]})],
         [Check("08_histogram_privatized", ["seed-2xsm", "shared-full-grid", "per-warp"],
                time_args=["--dist", "uniform", "--variant", "seed-2xsm"],
                grade_size=["--bytes", "2^28"])],
         size="--bytes", unit=256, small=["--bytes", "4099"], races=True, initcheck=True, tolerance=EXACT),
    # --- transpose -----------------------------------------------------------------------
    Task("naive", "transpose", "Naive transposes: which side to coalesce",
         [Region("chapters/09_transpose_naive/09_transpose_naive.cu",
                 "naive-read-coalesced: thread (x, y) of the block moves element (r, c) of the rows x cols "
                 "input to (c, r) of the output, with threadIdx.x walking along an input row.",
                 "Row-major: element (r, c) of the input is `in[r * cols + c]`; the output has `rows` columns. "
                 "The last tiles may hang over the edges."),
          Region("chapters/09_transpose_naive/09_transpose_naive.cu",
                 "naive-write-coalesced: the same move with threadIdx.x walking along an OUTPUT row.",
                 "The grid is laid over the output: x over its columns (our rows).")],
         [Check("09_transpose_naive", ["naive-read-coalesced", "naive-write-coalesced"],
                time_args=["--variant", "naive-read-coalesced"], grade_size=["--rows", "8192", "--cols", "8192"])],
         size="shape", unit=32, small=["--rows", "33", "--cols", "65"], tolerance=EXACT),
    Task("shared-tile", "transpose", "A transpose through a shared-memory tile",
         [Region("chapters/10_transpose_shared/shared_tile.cuh",
                 "Stage the block's 32 x 32 tile in shared memory: read it with coalesced input rows, then "
                 "write coalesced output rows, i.e. columns of the tile. Chapter 10's kernel passes an "
                 "unpadded tile, chapter 11's padded kernel a tile of kTile + kPad columns.",
                 "Reads and writes both guard the matrix edges; the tile must be complete before anyone "
                 "reads it back. Why does one column of padding remove the bank conflicts?",
                 shape={"threadIdx.x": 32, "threadIdx.y": 32})],
         [Check("10_transpose_shared", ["shared-tile"], grade_size=["--rows", "8192", "--cols", "8192"]), Check("11_transpose_padded", ["padded"])],
         size="shape", unit=32, small=["--rows", "33", "--cols", "65"], races=True, tolerance=EXACT),
    # --- dot product and top-2 ------------------------------------------------------------
    Task("dot-grid-stride", "dot-top2", "The dot product's first pass",
         [Region("chapters/12_dot_product/dot_kernel.cuh",
                 "Accumulate x[i] * y[i] over this thread's grid-stride range of float4s into acc (four "
                 "fmaf chains, one per lane of the float4), then the n % 4 tail floats.",
                 "The stride is the whole grid, `gridDim.x * kBlock` threads.")],
         [Check("12_dot_product", ["two-pass-float4"], time_args=["--variant", "two-pass-float4"],
                grade_size=["--n", "2^26"])],
         size="--n", unit=4, small=["--n", "1001"],
         tolerance="|got - exact| <= depth * 2^-24 * sum|x_i * y_i| (fp64 reference)"),
    Task("top2-merge", "dot-top2", "Merging top-2 pairs across a block",
         [Region("chapters/13_top2/13_top2.cu",
                 "warp_merge: a butterfly over the warp with shfl_xor (given) and merge (given): after it every "
                 "lane holds the warp's top-2.",
                 "Lane masks 16, 8, 4, 2, 1.", stub="return t;"),
          Region("chapters/13_top2/13_top2.cu",
                 "block_merge_shared: the seed's tree over s[0..kThreads) of Top2: halve the active threads "
                 "each round, merging s[t] with s[t + h]; s[0] ends with the block's top-2.",
                 "The barrier goes outside the `if`.",
                 shape={"threadIdx.x": 256, "kThreads": 256})],
         [Check("13_top2", ["thread-pairs", "shared-tree", "warp-shuffle", "shuffle-int4"],
                time_args=["--variant", "thread-pairs"], grade_size=["--n", "2^26"])],
         size="--n", unit=256, small=["--n", "1001"], races=True, tolerance=EXACT, min_size=2),
    # --- the stand-in: a CPU program with the same protocol, for the tests without a GPU ------
    Task("standin-sum", "standin", "Stand-in: the sum of a range of integers (CPU)",
         [Region("chapters/labs/standin/standin.cpp",
                 "Return the sum of x[0, n).",
                 "A plain loop; 64-bit.", stub="return -1;")],
         [Check("labs/standin", ["sum"])],
         size="--n", unit=1, small=["--n", "10"], tolerance=EXACT),
]


def track_tasks(track):
    return [t for t in TASKS if t.track == track]


def task(task_id):
    for t in TASKS:
        if t.id == task_id:
            return t
    raise KeyError(task_id)


# --- scan (chapters 16-18), appended with its track --------------------------------------------
TRACKS["scan"] = ["16_scan", "17_stream_compaction", "18_radix_sort"]

SCAN_TOLERANCE = ("u32: exact (the sums wrap modulo 2^32, as the GPU's do). f32: |got - exact| <= gamma_d * "
                  "sum|x_j| + terms * 2^-53 * sum|x_j| over the terms of the element, gamma_d = d * 2^-24 / "
                  "(1 - d * 2^-24), d the most float additions any element passes through (a look-back adds two "
                  "for every tile before it) and exact the prefix in double; an exclusive out[0] is exactly 0")
SCAN_LOOKBACK_H = "chapters/16_scan/scan_lookback.cuh"

TASKS += [
    Task("warp-scan", "scan", "An inclusive scan across a warp with __shfl_up_sync",
         [Region(SCAN_LOOKBACK_H,
                 "warp_inclusive_scan: lane l returns v_0 + ... + v_l, the values of lanes 0 to l. Every tile "
                 "scan of the track is built on it: the rows of chapter 16's tiles, the block scans, chapter "
                 "18's scans of its counts.",
                 "Five steps of distances 1, 2, 4, 8 and 16 with `__shfl_up_sync` and the full mask "
                 "`sw::kFullMask`; "
                 "a lane below the distance has nothing to add (the shuffle hands it back its own value).",
                 stub="return v;")],
         # Only the steps without a look-back: a wrong warp scan inside a look-back can spin
         # forever (TIMEOUT), and a look-back step would run the lookback task's code too.
         [Check("16_scan", ["warp-shuffle"], args=["--variant", "warp-shuffle"],
                time_args=["--type", "u32"], grade_size=["--n", "2^27"]),
          Check("16_scan", ["reduce-then-scan"], args=["--variant", "reduce-then-scan"])],
         size="--n", unit=1024, small=["--n", "1000"], races=True, tolerance=SCAN_TOLERANCE),
    Task("lookback", "scan", "The look-back: tickets and one-word status",
         [Region(SCAN_LOOKBACK_H,
                 "draw_tile: thread 0 sets `tile`, the index of the tile this block scans, to the next "
                 "ticket of the counter (zeroed by the launcher before every launch).",
                 "`atomicAdd` returns the value before the addition. Why not `blockIdx.x`? Nothing says block b "
                 "starts before block b + 1.", stub="tile = 0;"),
          Region(SCAN_LOOKBACK_H,
                 "publish: write the flag (kAggregate or kInclusive) and the value's 62 bits as one status "
                 "word: the flag in the top 2 bits (kFlagShift), the value in the rest (kValueMask), with one "
                 "relaxed atomic store at device scope.",
                 "`cuda::atomic_ref<Count, cuda::thread_scope_device>` on `*word`; a reader must see the flag and "
                 "the value of the same publication."),
          Region(SCAN_LOOKBACK_H,
                 "read_status: read a status word with one relaxed atomic load at device scope and split it "
                 "into its flag and its value.",
                 "One load: two would let a publication land between them.", stub="return {kInclusive, 0};")],
         # One step a run: a run of every step dumped 4 GB at 2^24 + 3 elements (chapter 17:
         # 2 GB), against 0.27 GB for one (measured on an H200: the repository's
         # docs/runs/evidence/labs_scan_run_costs.txt).
         [Check("16_scan", ["lookback-vec", "status-protocol"], args=["--variant", "lookback-vec"],
                time_args=["--type", "u32"], grade_size=["--n", "2^27"]),
          Check("16_scan", ["decoupled-lookback"], args=["--variant", "decoupled-lookback"]),
          Check("16_scan", ["chained"], args=["--variant", "chained"]),
          Check("17_stream_compaction", ["one-pass"], args=["--variant", "one-pass"])],
         size="--n", unit=2048, small=["--n", "1000", "--tile-rows", "1", "--block", "32"], races=True,
         requires=["warp-scan"], tolerance=SCAN_TOLERANCE),
    Task("digit-scatter", "scan", "A stable rank for the radix sort's scatter",
         [Region("chapters/18_radix_sort/18_radix_sort.cu",
                 "rank_in_warp: this lane's key among the warp's keys with the same digit, in index order: "
                 "the keys of the warp's earlier rows first (counts[digit], its running count, which the "
                 "lowest lane with the digit reads and advances by the group's size), then the lanes below "
                 "in this row.",
                 "The lanes with my digit: the AND over the 8 digit bits of (bit set ? ballot : ~ballot). "
                 "Then `__ffs`, `__popc`, `__shfl_sync`, and a `__syncwarp` before the next row reads `counts`.",
                 stub="return 0;")],
         # One step a run: every step's run dumped 10 GB at 2^24 + 3 keys and its racecheck at
         # 5,000 keys ran past 150 s; one step's dump is 1 GB.
         [Check("18_radix_sort", ["onesweep"], args=["--variant", "onesweep"], time_args=["--sort", "keys"],
                grade_size=["--n", "2^27"]),
          Check("18_radix_sort", ["three-kernel"], args=["--variant", "three-kernel"])],
         size="--n", unit=4096, small=["--n", "5000"], races=True, requires=["warp-scan", "lookback"],
         tolerance="exact: every key (and value, its index in the input) equal to a stable sort's on the CPU"),
]


# --- GEMM (chapters 19-20), appended with its track ----------------------------------------------
TRACKS["gemm"] = ["19_sgemm", "20_tensor_cores"]

SGEMM_TOLERANCE = ("|got - exact| <= gamma_{k+2} * sum_p |a_ip| |b_pj| (u = 2^-24), with exact the product in "
                   "double: the bound of k float products and sums in any order (common/problems/gemm_reference.h), "
                   "never an arbitrary epsilon; every entry of C checked at the awkward shapes, and the floats "
                   "after C (a guard) untouched")
MMA_TOLERANCE = ("|got - exact| <= gamma'_{3k+2} * sum_p |a_ip| |b_pj| with u' = 2^-23 (the tensor cores may "
                 "truncate), exact the product of the bf16-rounded inputs in double; every entry checked, and the "
                 "guard after C untouched")
GEMM_SIZE = ["--size", "4096"]  # the graded timing: the chapters' own size, 2 * 4096^3 flops per call

TASKS += [
    Task("smem-tiles", "gemm", "SGEMM through 32 x 32 shared-memory tiles",
         [Region("chapters/19_sgemm/19_sgemm.cu",
                 "Walk along k one kSide-wide tile at a time. Each thread loads one value of the A tile into "
                 "as[ty][tx] (row `row`, column p0 + tx) and one of the B tile into bs[ty][tx] (row p0 + ty, "
                 "column `col`), zero outside the matrices; then it adds the tile's kSide products of its row "
                 "of as and its column of bs into acc.",
                 "Every thread loads and reaches both barriers, even one past the edge of C (it only skips the "
                 "store below). A partial tile must add nothing: the zeros are what make it so.",
                 shape={"threadIdx.x": 32, "threadIdx.y": 32})],
         [Check("19_sgemm", ["shared-tiles"], ["--variant", "shared-tiles"], grade_size=GEMM_SIZE)],
         size="gemm", unit=32, small=["--m", "33", "--n", "65", "--k", "47"], races=True, tolerance=SGEMM_TOLERANCE),
    Task("register-2d", "gemm", "Register blocking: 8 x 8 entries of C per thread",
         [Region("chapters/19_sgemm/register_blocking.cu",
                 "The tiles are in shared memory (as: kTileM x kTileK, bs: kTileK x kTileN). For each p of the "
                 "tile, read this thread's kRows values of column p of as into a_reg and its kCols values of row "
                 "p of bs into b_reg, then add their kRows x kCols products into acc[i][j]: this thread's entries "
                 "are rows thread_row * kRows + i and columns thread_col * kCols + j of the block's tile (the "
                 "stores below write them there).",
                 "Each value read from shared memory into a register feeds eight FMAs: 16 shared loads for 64 "
                 "FMAs per p. The barriers around the region are given.",
                 shape={"threadIdx.x": 256})],
         [Check("19_sgemm", ["register-2d"], ["--variant", "register-2d"], grade_size=GEMM_SIZE)],
         size="gemm", unit=128, small=["--m", "129", "--n", "131", "--k", "17"], tolerance=SGEMM_TOLERANCE),
    Task("vector-transposed", "gemm", "float4 loads and a transposed A tile without bank conflicts",
         [Region("chapters/19_sgemm/vector_tiles.cu",
                 "One tile of k into shared memory: load this thread's float4 of A (row a_row, columns p0 + a_k "
                 "to + 3, with load4<kVec>) and store it TRANSPOSED, its four values into as[a_k + 0..3][a_row]; "
                 "load its float4 of B (row p0 + b_row, columns col0 + b_col to + 3) and store it into "
                 "bs[b_row][b_col] as it is; then synchronize the block.",
                 "Why transposed: a thread's 4 rows at one k become one float4 of shared memory. A warp's 32 "
                 "threads hold 32 neighbouring rows at one k quad: their stores fill 32 consecutive floats, "
                 "one per bank.",
                 shape={"threadIdx.x": 256}),
          Region("chapters/19_sgemm/vector_tiles.cu",
                 "One p of the tile: read the two float4s of A at as[p][h * kHalf + thread_row * 4] and the two "
                 "of B at bs[p][h * kHalf + thread_col * 4] (h = 0, 1) into a[h] and b[h], and add their 64 "
                 "products into acc[hm][hn][i][j]: rows hm * kHalf + thread_row * 4 + i, columns hn * kHalf + "
                 "thread_col * 4 + j of the block's tile (the stores below write them there).",
                 "Why the halves 64 apart: 8 threads that read B at once then read 8 consecutive float4s, 128 "
                 "bytes in 32 banks; with 8 consecutive columns per thread, threads 0, 4, 8 and 12 share banks.",
                 shape={"threadIdx.x": 256})],
         [Check("19_sgemm", ["vector-transposed"], ["--variant", "vector-transposed"], grade_size=GEMM_SIZE)],
         size="gemm", unit=128, small=["--m", "129", "--n", "132", "--k", "20"], races=True,
         tolerance=SGEMM_TOLERANCE),
    Task("mma-fragments", "gemm", "mma.sync's fragments: which lane holds which element",
         [Region("chapters/20_tensor_cores/mma_sync.cu",
                 "ldmatrix_x4_trans has put four 8 x 8 matrices of the B tile into r[0..3]: rows kk to kk + 7 "
                 "and kk + 8 to kk + 15 of k, for the columns of mma tile j, then the same rows for tile j + 1 "
                 "(lane l gave the address of row l % 16, columns 8 (l / 16) on). Put them into the B operands "
                 "b[j] and b[j + 1] of mma_16816 (two registers each: k 0-7, then k 8-15).",
                 "The comment above the instruction's wrapper in tc.cuh says what `b[j][0]` and `b[j][1]` must "
                 "hold; ldmatrix's matrix i comes from the addresses of lanes 8 i to 8 i + 7."),
          Region("chapters/20_tensor_cores/mma_sync.cu",
                 "Write the warp's accumulators to C: acc[i][j] holds mma tile (i, j) of the warp's 64 x 32 "
                 "tile, in mma's C layout. Call store_tile once per tile with the row and column of the FIRST "
                 "of the four entries this lane holds (vec: n even).",
                 "A lane holds the entries (g, 2t), (g, 2t + 1), (g + 8, 2t) and (g + 8, 2t + 1) of a 16 x 8 "
                 "tile, with g = lane / 4 and t = lane % 4: the comment above the instruction's wrapper in tc.cuh "
                 "says so."),
          Region("chapters/20_tensor_cores/pipeline.cuh",
                 "The same split of ldmatrix's four matrices into b[j] and b[j + 1] as in mma_sync.cu.",
                 "The swizzled addresses change where the rows are read, not which matrix lands in which "
                 "register."),
          Region("chapters/20_tensor_cores/pipeline.cuh",
                 "The same epilogue as in mma_sync.cu, for the pipeline's 64 x 64 warp tiles (kTilesM x kTilesN "
                 "mma tiles).",
                 "It is your epilogue of the other file: the fragment layout does not depend on the tile "
                 "sizes.")],
         [Check("20_tensor_cores", ["mma-sync", "mma-cp-async"], time_args=["--variant", "mma-sync"],
                grade_size=GEMM_SIZE)],
         size="gemm", unit=128, small=["--m", "136", "--n", "264", "--k", "40"], tolerance=MMA_TOLERANCE),
]
