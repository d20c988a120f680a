// Hopper's GEMM arithmetic that needs no GPU (chapter 21; common/tests/test_hopper.cpp tests
// it on the host): where the copy engine's 128-byte swizzle puts an element, the bits of a
// wgmma shared-memory matrix descriptor, the parameters of a 2-D tensor map and their limits,
// and the order in which a persistent kernel takes its output tiles.
//
// The PTX ISA sections named below are those of PTX ISA 8.x (CUDA 12 and 13):
//   "Tensor Copy: swizzling modes"          cp.async.bulk.tensor's shared-memory layouts
//   "Matrix Descriptor Format" (wgmma)      9.7.15.5.1, the 64-bit shared-memory descriptor
//   cuTensorMapEncodeTiled                   CUDA driver API, "Tensor Map Object Management"
#pragma once

#include <cstdint>
#include <string>

#if defined(__CUDACC__)
#define SW_HOPPER_HD __host__ __device__ __forceinline__
#else
#define SW_HOPPER_HD inline
#endif

namespace sw::hopper {

// --- the 128-byte swizzle ------------------------------------------------------------------

// A tile row of 128 bytes holds 64 bf16 values: eight 16-byte chunks. With the 128-byte
// swizzle (CU_TENSOR_MAP_SWIZZLE_128B) the copy engine stores chunk c of row r at chunk
// c ^ (r % 8) of that row, in atoms of 8 rows (1024 bytes), the tile starting on a
// 1024-byte boundary. In address bits: bits 4-6 of the offset XOR bits 7-9. wgmma reads the
// same layout when its descriptor says "128-byte swizzle".
constexpr int kSwizzleBytes = 128;       // one row of the swizzle pattern
constexpr int kSwizzleAtomBytes = 1024;  // 8 rows: the pattern repeats after it
SW_HOPPER_HD uint32_t swizzle128(uint32_t offset) { return offset ^ (((offset >> 7) & 7u) << 4); }
// The byte offset of element (row, col) of a tile of 2-byte values, 64 to a row, swizzled.
SW_HOPPER_HD uint32_t swizzled_offset(uint32_t row, uint32_t col) {
  return swizzle128(row * kSwizzleBytes + col * 2);
}
// The same for a box of 4-byte values, 32 to a row (chapter 21's fp32 epilogue boxes).
SW_HOPPER_HD uint32_t swizzled_offset_fp32(uint32_t row, uint32_t col) {
  return swizzle128(row * kSwizzleBytes + col * 4);
}

// --- the wgmma shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format") ----------

// bits 0-13 start address >> 4; 16-29 leading-dimension byte offset >> 4; 32-45
// stride-dimension byte offset >> 4; 49-51 base offset; 62-63 swizzle mode (0 none, 1 128-byte,
// 2 64-byte, 3 32-byte). For a K-major tile with the 128-byte swizzle the stride offset is
// the distance between 8-row groups, 1024 bytes, and the leading offset is not used (1 by
// convention); the base offset is 0 when the tile starts on a 1024-byte boundary.
constexpr uint64_t kDescSwizzle128 = 1;
constexpr uint32_t kDescStrideBytes = kSwizzleAtomBytes;
constexpr uint32_t kDescLeadingBytes = 16;
SW_HOPPER_HD uint64_t matrix_descriptor(uint32_t shared_address) {
  return (static_cast<uint64_t>((shared_address & 0x3FFFFu) >> 4)) |
         (static_cast<uint64_t>(kDescLeadingBytes >> 4) << 16) |
         (static_cast<uint64_t>(kDescStrideBytes >> 4) << 32) | (kDescSwizzle128 << 62);
}
// The fields back out of a descriptor (the host test reads them).
struct DescriptorFields {
  uint32_t start_address, leading_bytes, stride_bytes, base_offset, swizzle_mode;
};
inline DescriptorFields descriptor_fields(uint64_t d) {
  return {static_cast<uint32_t>(d & 0x3FFF) << 4, static_cast<uint32_t>((d >> 16) & 0x3FFF) << 4,
          static_cast<uint32_t>((d >> 32) & 0x3FFF) << 4, static_cast<uint32_t>((d >> 49) & 7),
          static_cast<uint32_t>(d >> 62)};
}
// One wgmma reads k = 16 of a 64-wide K-major swizzled tile: 32 bytes of each row. The next
// 16 columns start 32 bytes further: the descriptor of k-step kk is the tile's plus 32 kk
// bytes (the swizzle is applied by the hardware to the whole address, as the copy engine did).
constexpr int kWgmmaK = 16;
SW_HOPPER_HD uint32_t k_step_address(uint32_t tile_address, int kk) {
  return tile_address + static_cast<uint32_t>(kk * kWgmmaK * 2);
}

// --- a 2-D tensor map's parameters (cuTensorMapEncodeTiled) ---------------------------------

// A row-major matrix of element_bytes-byte values (2: bf16, A and B; 4: fp32, C), `rows` x
// `cols`, rows `row_stride` elements apart, moved in boxes of box_rows x box_cols. Dimension 0
// is the innermost (the columns).
struct TileMapParams {
  uint64_t dims[2];          // {cols, rows}
  uint64_t stride_bytes[1];  // of dimension 1 (a row); dimension 0's is the element size
  uint32_t box[2];           // {box_cols, box_rows}
  uint32_t element_strides[2];
  int swizzle_bytes;  // 128: CU_TENSOR_MAP_SWIZZLE_128B
  uint32_t element_bytes;
};
constexpr uint32_t kElementBytes = 2;     // bf16, the inputs
constexpr uint32_t kMaxBoxSide = 256;     // cuTensorMapEncodeTiled: boxDim[i] <= 256
constexpr uint64_t kMaxDim = 1ull << 32;  // globalDim[i] <= 2^32
constexpr uint64_t kStrideAlign = 16;     // globalStrides[i] % 16 == 0, < 2^40
inline TileMapParams tile_map_params(uint64_t rows, uint64_t cols, uint64_t row_stride,
                                     uint32_t box_rows, uint32_t box_cols,
                                     uint32_t element_bytes = kElementBytes) {
  return {{cols, rows}, {row_stride * element_bytes}, {box_cols, box_rows}, {1, 1}, kSwizzleBytes,
          element_bytes};
}
// Why the driver would refuse p, or "" when it would not: every limit of
// cuTensorMapEncodeTiled that a 2-D, 128-byte-swizzled map meets.
inline std::string tile_map_problem(const TileMapParams& p) {
  for (int i = 0; i < 2; ++i) {
    if (p.dims[i] == 0 || p.dims[i] > kMaxDim) return "a dimension is 0 or above 2^32";
    if (p.box[i] == 0 || p.box[i] > kMaxBoxSide) return "a box side is 0 or above 256";
    if (p.element_strides[i] != 1) return "element strides other than 1";
  }
  if (p.stride_bytes[0] % kStrideAlign != 0) return "the row stride is not a multiple of 16 bytes";
  if (p.stride_bytes[0] >= (1ull << 40)) return "the row stride is 2^40 bytes or more";
  if (p.stride_bytes[0] < p.dims[0] * p.element_bytes) return "the rows overlap";
  if ((p.box[0] * p.element_bytes) % 16 != 0) return "the box's row is not a multiple of 16 bytes";
  if (p.swizzle_bytes == kSwizzleBytes && p.box[0] * p.element_bytes > kSwizzleBytes)
    return "the box's row is wider than the 128-byte swizzle";
  return "";
}
// The bytes one box brings (the copy engine counts a whole box, zeros outside the matrix
// included, toward the mbarrier's transaction count).
inline uint32_t box_bytes(const TileMapParams& p) { return p.box[0] * p.box[1] * p.element_bytes; }

// A box's first row: a start at or past the matrix's end (a cluster's partner tile beyond the
// last one) moves to the last row; what it loads there feeds only outputs that the epilogue
// drops, and every box then overlaps the matrix.
SW_HOPPER_HD int box_start(int start, int extent) { return start < extent ? start : extent - 1; }

// --- the order of the output tiles --------------------------------------------------------

// Tile `index` of a grid of tiles_m x tiles_n output tiles, in bands of `group` tile rows:
// down a band's rows first, then across its columns, band after band (the last band may be
// narrower). Consecutive indices (the tiles a wave of persistent blocks holds at once) then
// share `group` rows of A and few columns of B, which stay in L2. group = 1: row after row.
struct TileIndex {
  int m, n;
};
SW_HOPPER_HD TileIndex tile_of(int64_t index, int tiles_m, int tiles_n, int group) {
  const int64_t band_tiles = static_cast<int64_t>(group) * tiles_n;
  const int band = static_cast<int>(index / band_tiles);
  const int first = band * group;
  const int rows = tiles_m - first < group ? tiles_m - first : group;
  const int64_t in_band = index - band * band_tiles;
  return {first + static_cast<int>(in_band % rows), static_cast<int>(in_band / rows)};
}

// --- the last wave cut along k (chapter 21, step 9) -----------------------------------------

// A persistent grid of `workers` (clusters) over `units` units of `k_tiles` k-tiles each takes
// the units of its full waves whole (worker w: units w, w + workers, ...). When units is not a
// multiple of workers, the last wave would leave workers idle while the others finish a whole
// unit; instead its `tail` units are cut along k: the tail's tail * k_tiles k-tiles, unit after
// unit, are dealt to the workers in runs of `share` k-tiles (worker w: the w-th run), so that
// every worker ends at about the same time. A unit then has pieces from up to
// kMaxPieces + 1 workers, each adding its part of C to the others': runs shorter than
// k_tiles / kMaxPieces would cost more in those additions than they save. No full wave, a
// tail that fills its wave, or runs as long as a unit: nothing is cut (tail 0).
constexpr int kMaxPieces = 4;
struct TailPlan {
  int64_t whole;  // units taken whole: the full waves (all units when nothing is cut)
  int64_t tail;   // units cut along k, after the whole ones
  int share;      // k-tiles a worker takes from the tail (0: nothing cut)
};
SW_HOPPER_HD TailPlan tail_plan(int64_t units, int workers, int k_tiles) {
  const int64_t tail = units % workers;
  if (units < workers || tail == 0) return {units, 0, 0};
  int64_t share = (tail * k_tiles + workers - 1) / workers;
  const int64_t least = (k_tiles + kMaxPieces - 1) / kMaxPieces;
  if (share < least) share = least;
  if (share >= k_tiles) return {units, 0, 0};
  return {units - tail, tail, static_cast<int>(share)};
}

// One worker's part of a cut unit: k-tiles [k_begin, k_end) of unit `unit`, the index-th of
// the unit's `count` pieces (in order of k). Piece 0 writes its part of C; the others add to
// it, each after the one before (chapter 21 counts them on a flag per unit).
struct Piece {
  int64_t unit;
  int k_begin, k_end, index, count;
};
// The piece of worker w's run that holds k-tiles [at, end) of the tail's flattened k-tiles,
// cut at the end of at's unit.
SW_HOPPER_HD Piece piece_of(const TailPlan& plan, int k_tiles, int worker, int64_t at,
                            int64_t end) {
  const int64_t u = at / k_tiles, unit_end = (u + 1) * k_tiles;
  const int64_t stop = end < unit_end ? end : unit_end;
  const int64_t first = u * k_tiles / plan.share, last = (unit_end - 1) / plan.share;
  return {plan.whole + u, static_cast<int>(at - u * k_tiles), static_cast<int>(stop - u * k_tiles),
          static_cast<int>(worker - first), static_cast<int>(last - first + 1)};
}
// Worker w's pieces of the tail, at most two (a run is shorter than a unit), in the order the
// worker computes them: a piece that starts its unit (index 0, waiting for no other) first.
// Returns how many.
SW_HOPPER_HD int tail_pieces(const TailPlan& plan, int k_tiles, int worker, Piece (&out)[2]) {
  const int64_t total = plan.tail * k_tiles, begin = static_cast<int64_t>(worker) * plan.share;
  if (plan.share == 0 || begin >= total) return 0;
  const int64_t end = begin + plan.share < total ? begin + plan.share : total;
  const int64_t next_unit = (begin / k_tiles + 1) * k_tiles;
  const Piece first = piece_of(plan, k_tiles, worker, begin, end);
  if (end <= next_unit) {
    out[0] = first;
    return 1;
  }
  out[0] = piece_of(plan, k_tiles, worker, next_unit, end);  // it starts its unit
  out[1] = first;
  return 2;
}

// --- the accumulator layout of wgmma m64nNk16 (PTX ISA "Register Fragments", wgmma D) -------

// Entry i (0 to N / 2 - 1) of thread t (0 to 127) of the warpgroup: its row (0 to 63) and
// column (0 to N - 1) in the 64 x N tile. Per thread: pairs of adjacent columns, in rows
// r and r + 8, every 8 columns.
SW_HOPPER_HD int accumulator_row(int t, int i) {
  return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2);
}
SW_HOPPER_HD int accumulator_col(int t, int i) { return 8 * (i / 4) + 2 * (t % 4) + i % 2; }

}  // namespace sw::hopper
