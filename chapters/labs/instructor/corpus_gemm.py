"""Correct solutions of the gemm track's tasks, written differently from the reference
(see corpus.py)."""
from mistakes import CH19, CH19R, CH19V, CH20S, Mistake, region_body

CH20P = "chapters/20_tensor_cores/pipeline.cuh"

# The reference bodies, whole: each variant replaces one whole region, so it reads alone.
REF_SMEM = region_body(CH19, "smem-tiles")
REF_REG2D = region_body(CH19R, "register-2d")
REF_V_STORES = region_body(CH19V, "vector-transposed")  # the tile into shared memory
REF_V_PRODUCTS = region_body(CH19V, "vector-transposed", 1)  # one p: float4 reads, 64 products
REF_SPLIT_SYNC = region_body(CH20S, "mma-fragments", 0)
REF_STORE_SYNC = region_body(CH20S, "mma-fragments", 1)
REF_SPLIT_PIPE = region_body(CH20P, "mma-fragments", 0)
REF_STORE_PIPE = region_body(CH20P, "mma-fragments", 1)

# --- smem-tiles -------------------------------------------------------------------------

SM_TILE_COUNT = """\
  // The tiles counted, and fmaf: the same products, each rounded once.
  const int tiles = (k + kSide - 1) / kSide;
  for (int t = 0; t < tiles; ++t) {
    const int ka = t * kSide + tx, kb = t * kSide + ty;  // this thread's column of A, row of B
    as[ty][tx] = (row < m && ka < k) ? A[static_cast<int64_t>(row) * k + ka] : 0.0f;
    bs[ty][tx] = (kb < k && col < n) ? B[static_cast<int64_t>(kb) * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kSide; ++p) acc = fmaf(as[ty][p], bs[p][tx], acc);
    __syncthreads();
  }
"""

SM_IF_LOADS = """\
  for (int p0 = 0; p0 < k; p0 += kSide) {
    float a = 0.0f, b = 0.0f;  // zero outside the matrices: a partial tile adds nothing
    if (row < m && p0 + tx < k) a = A[static_cast<int64_t>(row) * k + p0 + tx];
    if (p0 + ty < k && col < n) b = B[static_cast<int64_t>(p0 + ty) * n + col];
    as[ty][tx] = a;
    bs[ty][tx] = b;
    __syncthreads();
    for (int p = 0; p < kSide; ++p) acc += as[ty][p] * bs[p][tx];
    __syncthreads();
  }
"""

SM_TWO_SUMS = """\
  // Two running sums, the even and the odd columns of each tile, added at the end.
  float even = 0.0f, odd = 0.0f;
  for (int p0 = 0; p0 < k; p0 += kSide) {
    as[ty][tx] = row < m && p0 + tx < k ? A[static_cast<int64_t>(row) * k + p0 + tx] : 0.0f;
    bs[ty][tx] = p0 + ty < k && col < n ? B[static_cast<int64_t>(p0 + ty) * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kSide; p += 2) {
      even += as[ty][p] * bs[p][tx];
      odd += as[ty][p + 1] * bs[p + 1][tx];
    }
    __syncthreads();
  }
  acc = even + odd;
"""

SM_WIDTH = """\
  for (int p0 = 0; p0 < k; p0 += kSide) {
    as[ty][tx] = row < m && p0 + tx < k ? A[static_cast<int64_t>(row) * k + p0 + tx] : 0.0f;
    bs[ty][tx] = p0 + ty < k && col < n ? B[static_cast<int64_t>(p0 + ty) * n + col] : 0.0f;
    __syncthreads();
    const int width = k - p0 < kSide ? k - p0 : kSide;  // the last tile may be partial: only its columns
    for (int p = 0; p < width; ++p) acc += as[ty][p] * bs[p][tx];
    __syncthreads();
  }
"""

SM_POINTERS = """\
  // Pointers that walk along k: A's one tile to the right, B's one tile down.
  const float* a_at = A + static_cast<int64_t>(row) * k + tx;
  const float* b_at = B + static_cast<int64_t>(ty) * n + col;
  for (int p0 = 0; p0 < k; p0 += kSide) {
    as[ty][tx] = row < m && p0 + tx < k ? *a_at : 0.0f;
    bs[ty][tx] = p0 + ty < k && col < n ? *b_at : 0.0f;
    a_at += kSide;
    b_at += static_cast<int64_t>(kSide) * n;
    __syncthreads();
#pragma unroll 8
    for (int p = 0; p < kSide; ++p) acc += as[ty][p] * bs[p][tx];
    __syncthreads();
  }
"""

# --- register-2d ------------------------------------------------------------------------

R2_COLUMN_AT_A_TIME = """\
#pragma unroll
    for (int p = 0; p < kTileK; ++p) {
#pragma unroll
      for (int i = 0; i < kRows; ++i) a_reg[i] = as[thread_row * kRows + i][p];
#pragma unroll
      for (int j = 0; j < kCols; ++j) {  // one B value at a time, used kRows times
        const float b = bs[p][thread_col * kCols + j];
#pragma unroll
        for (int i = 0; i < kRows; ++i) acc[i][j] += a_reg[i] * b;
      }
    }
"""

R2_FMAF = """\
    const int first_row = thread_row * kRows, first_col = thread_col * kCols;
#pragma unroll
    for (int p = 0; p < kTileK; ++p) {
#pragma unroll
      for (int i = 0; i < kRows; ++i) a_reg[i] = as[first_row + i][p];
#pragma unroll
      for (int j = 0; j < kCols; ++j) b_reg[j] = bs[p][first_col + j];
#pragma unroll
      for (int i = 0; i < kRows; ++i)
#pragma unroll
        for (int j = 0; j < kCols; ++j) acc[i][j] = fmaf(a_reg[i], b_reg[j], acc[i][j]);
    }
"""

R2_ROW_AT_A_TIME = """\
#pragma unroll
    for (int p = 0; p < kTileK; ++p) {
#pragma unroll
      for (int j = 0; j < kCols; ++j) b_reg[j] = bs[p][thread_col * kCols + j];
#pragma unroll
      for (int i = 0; i < kRows; ++i) {  // one A value at a time, used kCols times
        const float a = as[thread_row * kRows + i][p];
#pragma unroll
        for (int j = 0; j < kCols; ++j) acc[i][j] += a * b_reg[j];
      }
    }
"""

R2_TWO_P_AT_A_TIME = """\
    // Two values of k per pass (kTileK is even); each entry still adds them in order of p.
#pragma unroll
    for (int p = 0; p < kTileK; p += 2) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
#pragma unroll
        for (int i = 0; i < kRows; ++i) a_reg[i] = as[thread_row * kRows + i][p + half];
#pragma unroll
        for (int j = 0; j < kCols; ++j) b_reg[j] = bs[p + half][thread_col * kCols + j];
#pragma unroll
        for (int i = 0; i < kRows; ++i)
#pragma unroll
          for (int j = 0; j < kCols; ++j) acc[i][j] += a_reg[i] * b_reg[j];
      }
    }
"""

R2_FLAT_INDEX = """\
    // The 64 entries as one loop over e = 8 i + j.
    for (int p = 0; p < kTileK; ++p) {
      for (int i = 0; i < kRows; ++i) a_reg[i] = as[thread_row * kRows + i][p];
      for (int j = 0; j < kCols; ++j) b_reg[j] = bs[p][thread_col * kCols + j];
#pragma unroll
      for (int e = 0; e < kRows * kCols; ++e) acc[e / kCols][e % kCols] += a_reg[e / kCols] * b_reg[e % kCols];
    }
"""


# --- vector-transposed -------------------------------------------------------------------

BARRIER = "    __syncthreads();\n"

V_STORES = """\
    const float4 a4 = load4<kVec>(a_start, row0 + a_row < m, p0 + a_k, k);
    as[a_k + 0][a_row] = a4.x;
    as[a_k + 1][a_row] = a4.y;
    as[a_k + 2][a_row] = a4.z;
    as[a_k + 3][a_row] = a4.w;
    const float* b_start = B + static_cast<int64_t>(p0 + b_row) * n + col0;
    *reinterpret_cast<float4*>(&bs[b_row][b_col]) =
        load4<kVec>(b_start, p0 + b_row < k, b_col, n - col0);
"""
V_READS = """\
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        a[h] = *reinterpret_cast<const float4*>(&as[p][h * kHalf + thread_row * 4]);
        b[h] = *reinterpret_cast<const float4*>(&bs[p][h * kHalf + thread_col * 4]);
      }
"""
V_FMAS = """\
#pragma unroll
      for (int hm = 0; hm < 2; ++hm)
#pragma unroll
        for (int hn = 0; hn < 2; ++hn) {
          const float ar[4] = {a[hm].x, a[hm].y, a[hm].z, a[hm].w};
          const float bc[4] = {b[hn].x, b[hn].y, b[hn].z, b[hn].w};
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[hm][hn][i][j] += ar[i] * bc[j];
        }
"""
assert (V_STORES + BARRIER, V_READS + V_FMAS) == (REF_V_STORES, REF_V_PRODUCTS), \
    "vector-transposed: the reference regions changed"

V_STORES_LOOP = """\
    // The transposed stores as a loop over the float4's four values; B's float4 as four floats.
    const float4 a4 = load4<kVec>(a_start, row0 + a_row < m, p0 + a_k, k);
    const float a_values[4] = {a4.x, a4.y, a4.z, a4.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) as[a_k + q][a_row] = a_values[q];
    const float4 b4 = load4<kVec>(B + static_cast<int64_t>(p0 + b_row) * n + col0, p0 + b_row < k, b_col, n - col0);
    bs[b_row][b_col + 0] = b4.x;
    bs[b_row][b_col + 1] = b4.y;
    bs[b_row][b_col + 2] = b4.z;
    bs[b_row][b_col + 3] = b4.w;
"""
V_READS_ROWS = """\
      // Each row of the tiles as an array of float4s: element q of as4 is floats 4 q to 4 q + 3.
      const float4* as4 = reinterpret_cast<const float4*>(&as[p][0]);
      const float4* bs4 = reinterpret_cast<const float4*>(&bs[p][0]);
      a[0] = as4[thread_row];
      a[1] = as4[kHalf / 4 + thread_row];
      b[0] = bs4[thread_col];
      b[1] = bs4[kHalf / 4 + thread_col];
"""
V_FMAS_FMAF = """\
#pragma unroll
      for (int hm = 0; hm < 2; ++hm)
#pragma unroll
        for (int hn = 0; hn < 2; ++hn) {
          const float ar[4] = {a[hm].x, a[hm].y, a[hm].z, a[hm].w};
          const float bc[4] = {b[hn].x, b[hn].y, b[hn].z, b[hn].w};
#pragma unroll
          for (int e = 0; e < 16; ++e) acc[hm][hn][e / 4][e % 4] = fmaf(ar[e / 4], bc[e % 4], acc[hm][hn][e / 4][e % 4]);
        }
"""
V_FMAS_ROWS_OUTSIDE = """\
      // Row by row of the thread's 8 rows: each A value once into a register, 8 products.
#pragma unroll
      for (int hm = 0; hm < 2; ++hm) {
        const float ar[4] = {a[hm].x, a[hm].y, a[hm].z, a[hm].w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float x = ar[i];
          acc[hm][0][i][0] += x * b[0].x;
          acc[hm][0][i][1] += x * b[0].y;
          acc[hm][0][i][2] += x * b[0].z;
          acc[hm][0][i][3] += x * b[0].w;
          acc[hm][1][i][0] += x * b[1].x;
          acc[hm][1][i][1] += x * b[1].y;
          acc[hm][1][i][2] += x * b[1].z;
          acc[hm][1][i][3] += x * b[1].w;
        }
      }
"""
V_STORES_SCALAR = """\
    // Scalar loads of the same values (no float4 from global memory): slower, still right.
    const float* a_src = a_start + p0 + a_k;
    const float* b_src = B + static_cast<int64_t>(p0 + b_row) * n + col0 + b_col;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      as[a_k + q][a_row] = row0 + a_row < m && p0 + a_k + q < k ? a_src[q] : 0.0f;
      bs[b_row][b_col + q] = p0 + b_row < k && col0 + b_col + q < n ? b_src[q] : 0.0f;
    }
"""

# --- mma-fragments --------------------------------------------------------------------------

MF_SPLIT_STATEMENTS = """\
        // Matrix i of ldmatrix: k half i % 2 of mma tile j + i / 2.
        b[j + 1][1] = r[3];
        b[j + 1][0] = r[2];
        b[j][1] = r[1];
        b[j][0] = r[0];
"""
MF_SPLIT_LOOP = """\
#pragma unroll
        for (int x = 0; x < 4; ++x) b[j + x / 2][x % 2] = r[x];  // matrix x: tile j + x / 2, k half x % 2
"""
MF_STORE_SHIFTS = """\
  const int g = lane >> 2, t = lane & 3;  // this lane's row in a 16 x 8 tile, and its pair of columns
  const bool pairs = (n & 1) == 0;
#pragma unroll
  for (int i = 0; i < kTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kTilesN; ++j)
      store_tile(C, m, n, row0 + warp_row + i * kMmaM + g, col0 + warp_col + j * kMmaN + 2 * t, acc[i][j], alpha,
                 beta, pairs);
"""
MF_STORE_HOISTED = """\
  // The lane's first entry of the warp's tile once; tile (i, j) is kMmaM i rows, kMmaN j columns on.
  const int first_row = row0 + warp_row + lane / 4, first_col = col0 + warp_col + lane % 4 * 2;
#pragma unroll
  for (int j = 0; j < kTilesN; ++j)
#pragma unroll
    for (int i = 0; i < kTilesM; ++i)
      store_tile(C, m, n, first_row + i * kMmaM, first_col + j * kMmaN, acc[i][j], alpha, beta, n % 2 == 0);
"""
MF_STORE_SCALAR = """\
  // Every entry alone (store_tile's scalar path), whatever n is: slower, still right.
#pragma unroll
  for (int i = 0; i < kTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kTilesN; ++j)
      store_tile(C, m, n, row0 + warp_row + i * kMmaM + lane / 4, col0 + warp_col + j * kMmaN + 2 * (lane % 4),
                 acc[i][j], alpha, beta, false);
"""

CORRECT = {
    "smem-tiles": [
        Mistake("tile-counter-fmaf", CH19, REF_SMEM, SM_TILE_COUNT, "PASS"),
        Mistake("if-guarded-loads", CH19, REF_SMEM, SM_IF_LOADS, "PASS"),
        Mistake("two-running-sums", CH19, REF_SMEM, SM_TWO_SUMS, "PASS"),
        Mistake("partial-width-loop", CH19, REF_SMEM, SM_WIDTH, "PASS"),
        Mistake("walking-pointers", CH19, REF_SMEM, SM_POINTERS, "PASS"),
    ],
    "register-2d": [
        Mistake("column-at-a-time", CH19R, REF_REG2D, R2_COLUMN_AT_A_TIME, "PASS"),
        Mistake("fmaf-hoisted-bases", CH19R, REF_REG2D, R2_FMAF, "PASS"),
        Mistake("row-at-a-time", CH19R, REF_REG2D, R2_ROW_AT_A_TIME, "PASS"),
        Mistake("two-p-per-pass", CH19R, REF_REG2D, R2_TWO_P_AT_A_TIME, "PASS"),
        Mistake("flat-entry-index", CH19R, REF_REG2D, R2_FLAT_INDEX, "PASS"),
    ],
    "vector-transposed": [
        Mistake("store-loop", CH19V, REF_V_STORES, V_STORES_LOOP + BARRIER, "PASS"),
        Mistake("scalar-global-loads", CH19V, REF_V_STORES, V_STORES_SCALAR + BARRIER, "PASS"),
        Mistake("float4-rows", CH19V, REF_V_PRODUCTS, V_READS_ROWS + V_FMAS, "PASS"),
        Mistake("fmaf-flat", CH19V, REF_V_PRODUCTS, V_READS + V_FMAS_FMAF, "PASS"),
        Mistake("rows-outside", CH19V, REF_V_PRODUCTS, V_READS_ROWS + V_FMAS_ROWS_OUTSIDE, "PASS"),
    ],
    "mma-fragments": [
        Mistake("split-statements", CH20S, REF_SPLIT_SYNC, MF_SPLIT_STATEMENTS, "PASS"),
        Mistake("split-loop", CH20P, REF_SPLIT_PIPE, MF_SPLIT_LOOP, "PASS"),
        Mistake("store-shifts", CH20S, REF_STORE_SYNC, MF_STORE_SHIFTS, "PASS"),
        Mistake("store-hoisted", CH20P, REF_STORE_PIPE, MF_STORE_HOISTED, "PASS"),
        Mistake("store-scalar", CH20S, REF_STORE_SYNC, MF_STORE_SCALAR, "PASS"),
    ],
}
