"""Correct solutions of the transpose track's tasks, written differently from the reference
(see corpus.py)."""
from mistakes import CH09, CH10, Mistake, region_body

# The reference bodies, whole: each variant replaces one whole region, so it reads alone.
# Chapter 09 has two regions of the task naive; a variant rewrites one of them.
REF_READ_COALESCED = region_body(CH09, "naive")  # the reference's whole region

REF_WRITE_COALESCED = region_body(CH09, "naive", 1)  # the reference's whole region

REF_SHARED_TILE = region_body(CH10, "shared-tile")  # the reference's whole region

# --- naive ------------------------------------------------------------------------------

NV_EARLY_RETURN = """\
  const int64_t r = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  if (r >= rows || c >= cols) return;  // past either edge: nothing to move
  out[c * rows + r] = in[r * cols + c];
"""

NV_TILE_POINTERS = """\
  // The tile's corner once, then offsets inside it: in(row0 + y, col0 + x) goes to
  // out(col0 + x, row0 + y). A block's corner lies inside the matrix.
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTile, col0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const float* src = in + row0 * cols + col0;
  float* dst = out + col0 * rows + row0;
  if (row0 + threadIdx.y < rows && col0 + threadIdx.x < cols)
    dst[threadIdx.x * rows + threadIdx.y] = src[threadIdx.y * cols + threadIdx.x];
"""

NV_ROWS_LOOP = """\
  // A loop over the tile's rows, blockDim.y apart: one pass with the 32 x 32 block, and
  // still the whole tile with a shorter one.
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  const int64_t r_end = (static_cast<int64_t>(blockIdx.y) + 1) * kTile;
  for (int64_t r = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y; r < r_end && r < rows; r += blockDim.y)
    if (c < cols) out[c * rows + r] = in[r * cols + c];
"""

NV_OUTPUT_ROW = """\
  // Nested guards, the outer one per output row (c), whose start is taken once.
  const int64_t c = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  if (c < cols) {
    float* out_row = out + c * rows;  // output row c: `rows` floats
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
    if (r < rows) out_row[r] = in[r * cols + c];
  }
"""

NV_COLUMNS_LOOP = """\
  // A loop over the tile's output rows (our columns), blockDim.y apart: one pass with the
  // 32 x 32 block.
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  const int64_t c_end = (static_cast<int64_t>(blockIdx.y) + 1) * kTile;
  for (int64_t c = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y; c < c_end && c < cols; c += blockDim.y)
    if (r < rows) out[c * rows + r] = in[r * cols + c];
"""

NV_FLAT_INDEX = """\
  // One number per thread of the 32 x 32 block, split back into the tile's row and column.
  const int t = threadIdx.y * kTile + threadIdx.x;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kTile + t % kTile;
  const int64_t c = static_cast<int64_t>(blockIdx.y) * kTile + t / kTile;
  if (c < cols && r < rows) out[c * rows + r] = in[r * cols + c];
"""

# --- shared-tile ------------------------------------------------------------------------

ST_TRANSPOSED_STORE = """\
  // The transpose happens on the way INTO the tile: tile[x][y] holds in(row0 + y, col0 + x),
  // so out(col0 + y, row0 + x) = in(row0 + x, col0 + y) = tile[y][x]: the write reads a tile row.
  const int64_t r = row0 + threadIdx.y, c = col0 + threadIdx.x;
  if (r < rows && c < cols) tile[threadIdx.x][threadIdx.y] = in[r * cols + c];
  __syncthreads();  // the whole tile is in shared memory before anyone reads it
  const int64_t out_r = col0 + threadIdx.y, out_c = row0 + threadIdx.x;
  if (out_r < cols && out_c < rows) out[out_r * rows + out_c] = tile[threadIdx.y][threadIdx.x];
"""

ST_ROW_LOOPS = """\
  // Loops over the tile's rows, blockDim.y apart: one pass with 32 x 32 threads, and the
  // whole tile with a shorter block too (NVIDIA's 32 x 8 blocks). The barrier is outside both.
  const int64_t c = col0 + threadIdx.x;
  for (int y = threadIdx.y; y < kTile; y += blockDim.y)
    if (row0 + y < rows && c < cols) tile[y][threadIdx.x] = in[(row0 + y) * cols + c];
  __syncthreads();
  const int64_t out_c = row0 + threadIdx.x;
  for (int y = threadIdx.y; y < kTile; y += blockDim.y)
    if (col0 + y < cols && out_c < rows) out[(col0 + y) * rows + out_c] = tile[threadIdx.x][y];
"""

ST_EXTENT_GUARDS = """\
  // The part of the tile inside the matrix: h rows and w columns (kTile but at the edges).
  const int h = rows - row0 < kTile ? static_cast<int>(rows - row0) : kTile;
  const int w = cols - col0 < kTile ? static_cast<int>(cols - col0) : kTile;
  const int x = threadIdx.x, y = threadIdx.y;
  if (y < h && x < w) tile[y][x] = in[(row0 + y) * cols + col0 + x];
  __syncthreads();
  if (y < w && x < h) out[(col0 + y) * rows + row0 + x] = tile[x][y];  // the output tile: w x h
"""

ST_TILE_POINTERS = """\
  // Pointers to the tile's corners in the input and the output, and what is left of the
  // matrix past them; the threads index inside the tile only.
  const float* src = in + row0 * cols + col0;
  float* dst = out + col0 * rows + row0;
  const int64_t rows_left = rows - row0, cols_left = cols - col0;
  if (threadIdx.y < rows_left && threadIdx.x < cols_left)
    tile[threadIdx.y][threadIdx.x] = src[threadIdx.y * cols + threadIdx.x];
  __syncthreads();
  if (threadIdx.y < cols_left && threadIdx.x < rows_left)
    dst[threadIdx.y * rows + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
"""

ST_WHOLE_TILE = """\
  // Most tiles lie wholly inside the matrix (a block-uniform test): they skip the edge tests.
  const bool whole = row0 + kTile <= rows && col0 + kTile <= cols;
  const int64_t r = row0 + threadIdx.y, c = col0 + threadIdx.x;
  if (whole || (r < rows && c < cols)) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
  __syncthreads();
  const int64_t out_r = col0 + threadIdx.y, out_c = row0 + threadIdx.x;
  if (whole || (out_r < cols && out_c < rows)) out[out_r * rows + out_c] = tile[threadIdx.x][threadIdx.y];
"""

ST_ZERO_FILL = """\
  // Every tile entry is written, 0 past the edges (never read back); the write still
  // skips what lies outside the output.
  const int64_t r = row0 + threadIdx.y, c = col0 + threadIdx.x;
  tile[threadIdx.y][threadIdx.x] = r < rows && c < cols ? in[r * cols + c] : 0.0f;
  __syncthreads();
  const int64_t out_r = col0 + threadIdx.y, out_c = row0 + threadIdx.x;
  if (out_r < cols && out_c < rows) out[out_r * rows + out_c] = tile[threadIdx.x][threadIdx.y];
"""

CORRECT = {
    "naive": [
        Mistake("early-return", CH09, REF_READ_COALESCED, NV_EARLY_RETURN, "PASS", "",
                point="read-coalesced: the edge test as an early return (no barrier follows), the store "
                      "unconditional after it"),
        Mistake("tile-pointers", CH09, REF_READ_COALESCED, NV_TILE_POINTERS, "PASS", "",
                point="read-coalesced: pointers to the tile's corners in input and output, offsets "
                      "threadIdx.y * cols + threadIdx.x and threadIdx.x * rows + threadIdx.y inside it"),
        Mistake("rows-loop", CH09, REF_READ_COALESCED, NV_ROWS_LOOP, "PASS", "",
                point="read-coalesced: a loop over the tile's rows, blockDim.y apart, bounded by the tile and "
                      "the matrix (one iteration with 32 x 32 threads)"),
        Mistake("output-row-pointer", CH09, REF_WRITE_COALESCED, NV_OUTPUT_ROW, "PASS", "",
                point="write-coalesced: nested guards, the outer per output row, whose start out + c * rows "
                      "is taken once"),
        Mistake("columns-loop", CH09, REF_WRITE_COALESCED, NV_COLUMNS_LOOP, "PASS", "",
                point="write-coalesced: a loop over the tile's output rows, blockDim.y apart (one iteration "
                      "with 32 x 32 threads)"),
        Mistake("flat-thread-index", CH09, REF_WRITE_COALESCED, NV_FLAT_INDEX, "PASS", "",
                point="write-coalesced: one linear thread number split by % and / kTile into the tile's "
                      "row and column (the same mapping for 32 x 32 threads)"),
    ],
    "shared-tile": [
        Mistake("transposed-store", CH10, REF_SHARED_TILE, ST_TRANSPOSED_STORE, "PASS", "",
                point="the transpose on the way into shared memory (tile[x][y]) and a row read on the way "
                      "out: the bank conflicts move to the stores, the result is the same"),
        Mistake("row-loops", CH10, REF_SHARED_TILE, ST_ROW_LOOPS, "PASS", "",
                point="both phases loop over tile rows blockDim.y apart (NVIDIA's 32 x 8 shape works too), "
                      "the barrier between the loops, reached by every thread"),
        Mistake("extent-guards", CH10, REF_SHARED_TILE, ST_EXTENT_GUARDS, "PASS", "",
                point="the tile's extent inside the matrix (h x w, clipped at the edges) computed once; "
                      "guards y < h && x < w on read, y < w && x < h on write"),
        Mistake("tile-pointers", CH10, REF_SHARED_TILE, ST_TILE_POINTERS, "PASS", "",
                point="pointers to the tile's corner in input and output, and guards against what is left "
                      "of the matrix past the corner"),
        Mistake("whole-tile-fast-path", CH10, REF_SHARED_TILE, ST_WHOLE_TILE, "PASS", "",
                point="a block-uniform test for a tile wholly inside the matrix short-circuits the edge "
                      "tests; the barrier is outside every branch"),
        Mistake("zero-fill", CH10, REF_SHARED_TILE, ST_ZERO_FILL, "PASS", "",
                point="every tile entry written (0 past the edges, never read back), only the global "
                      "store guarded"),
    ],
}
