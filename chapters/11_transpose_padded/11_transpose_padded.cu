// Chapter 11: a padded tile, then more work per thread, wider rows, a better order.
//
// What changed:  1. padded: chapter 10's kernel with tile[32][33] instead of
//                   tile[32][32]. Row i of the tile now starts i banks further on,
//                   so a column's 32 elements lie in 32 different banks: the 32-way
//                   conflict of chapter 10 is gone.
//                2. padded-32x8: 32 x 8 threads move the same tile, four elements
//                   each: four independent loads in flight per thread before the
//                   barrier, and 256-thread blocks instead of 1024.
//                3. tile64 (anti-example): a 64 x 64 tile, sixteen scalar elements
//                   per thread, meant to put 16 loads in flight per thread.
//                4. tile64-float4: the same tile with 16-byte loads and stores.
//                5. tile64-rows: each warp instruction moves one whole 256-byte row
//                   segment (a float2 per lane) instead of four 128-byte pieces.
//                6. tile64-rows-grouped: blocks walk the tiles in bands of
//                   kGroup tile-columns, so the tiles in flight at one time form a
//                   compact patch and their writes land in long runs of each
//                   output row.
//                Then the same kernels for doubles, against cublasDgeam.
// Why faster:    with both global sides coalesced and shared memory conflict-free,
//                a transpose is a copy whose speed is set by the bytes in flight per
//                SM and by how DRAM-friendly the scattered side is.
// Why tile64 loses: not for its registers as such. Its 80 registers a thread leave 3
//                blocks per SM; if all 16 loads of a thread were in flight, that would
//                be 3 x 256 x 16 x 4 B = 48 KiB per SM, more than padded-32x8's
//                8 x 256 x 4 x 4 B = 32 KiB. But the compiler issues them in runs of
//                2, 7, 1, 4, 1 and 1, each followed by the shared stores that consume
//                it (docs/evidence/11_transpose_padded_sass.txt), so a thread waits for
//                one run before it issues the next: at most 7 loads in flight, 21 KiB
//                per SM. Fewer bytes in flight than padded-32x8 is the loss.
// Bottleneck:    DRAM, once enough bytes are in flight: the scattered side's shorter
//                runs cost the last few percent against a copy.
// Ceilings:      the 32 x 32 copy of chapters 09-10, and a copy with the launch
//                shape of tile64-float4; cublasSgeam / cublasDgeam are the vendor.
// Steps:         padded, padded-32x8, tile64, tile64-float4, tile64-rows,
//                tile64-rows-grouped, double-tile32, double-tile32-grouped
// Run:           build/chapters/11_transpose_padded [--rows 16384 --cols 16384]
//                [--verify-only] [--json]
//                build/chapters/11_transpose_padded --verify-only --large [--json]
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/10_transpose_shared/shared_tile.cuh"
#include "common/bench/program.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/cublas_check.h"
#include "common/cuda_utils.cuh"
#include "common/device.h"
#include "common/problems/transpose.h"
#include "transpose_tiled.cuh"  // kTile, kPad, launch_2d; steps 2-6 and the doubles

namespace {

namespace tr = sw::transpose;
using tr::Step;

// The kernels of a 2-D grid: blockIdx.x is the tile column, blockIdx.y the tile
// row. grid.y holds at most 65535, so past 65535 tile rows a launcher starts one
// grid per band of them, the pointers offset to the band (sw::transpose::Bands).
// Each launcher computes its grid and block beside its <<<>>>, and the timed call
// (bench::measure) runs it directly.

// --- 1. padded ------------------------------------------------------------------------

__global__ void transpose_padded(const float* __restrict__ in, float* __restrict__ out,
                                 int64_t rows, int64_t cols) {
  __shared__ float tile[kTile][kTile + kPad];           // the only change from chapter 10
  ch10::transpose_via_tile(tile, in, out, rows, cols);  // chapter 10's tile body, reused
}

// Its launcher: the grid over the input's tiles, in bands, 32 x 32 threads a block.
constexpr tr::Launch<float> launch_padded = launch_2d<float, transpose_padded, kTile, kTile>;

// The chapter's steps, in order (--list prints them): {name, float launcher, double
// launcher, role}. The ceilings and cuBLAS run beside them.
const std::vector<Step> kSteps = {
    {"padded", launch_padded},
    {"padded-32x8", launch_padded_32x8},
    {"tile64", launch_tile64, nullptr, "anti-example"},
    {"tile64-float4", launch_tile64_float4},
    {"tile64-rows", launch_tile64_rows},
    {"tile64-rows-grouped", launch_tile64_rows_grouped},
    {"double-tile32", nullptr, launch_double_tile32},
    {"double-tile32-grouped", nullptr, launch_double_tile32_grouped},
};
// The second float ceiling: a copy with the launch shape of tile64-float4.
const Step kCopyWide = {"copy-tile64-float4", launch_copy_tile64_float4, nullptr, "ceiling",
                        tr::kOutIsCopy};
// The steps also timed at the cache-resident size: the first and the best.
const std::vector<std::string> kCachedSteps = {"padded", "tile64-rows-grouped"};

// The chosen steps after the reference rows of their element types: the two copy
// ceilings and cublasSgeam for floats, cublasDgeam for doubles.
std::vector<Step> with_references(const std::vector<Step>& steps) {
  const bool floats =
      std::any_of(steps.begin(), steps.end(), [](const Step& s) { return s.launch; });
  const bool doubles =
      std::any_of(steps.begin(), steps.end(), [](const Step& s) { return s.more; });
  std::vector<Step> table;
  if (floats) table = {tr::kCopyRow, kCopyWide, tr::kSgeamRow};
  if (doubles) table.push_back(tr::kDgeamRow);
  table.insert(table.end(), steps.begin(), steps.end());
  return table;
}

// The track's problem with this chapter's ceilings, the doubles (problem column
// "transpose-f64") and --verify-only --large.
struct PaddedProblem : tr::Problem {
  bool large = false;  // --large

  void add_options(sw::Cli& cli, const sw::bench::Program<Step>& program) {
    Problem::add_options(cli, program);
    cli.add_flag("--large", &large,
                 "with --verify-only: check shapes of more than 2^31 elements instead");
  }

  // --large applies only with --verify-only, and checks its own shapes (exit 2).
  void validate(const sw::bench::Request<Step>& asked) const {
    tr::Problem::validate(asked);
    const sw::Cli& cli = asked.cli;
    const sw::CommonOptions& opt = asked.opt;
    if (large && !opt.verify_only) cli.reject("--large applies only with --verify-only");
    if (large && shape_given(cli))
      cli.reject("--large checks its own shapes: --rows and --cols do not apply to it");
  }

  // --verify-only: every row on the sweep (or the shape given), floats then doubles. With
  // --large: the shapes of more than 2^31 elements, in the layout given, for our float
  // kernels only (not cuBLAS, the plain copy, the anti-example; the double kernels share
  // their bodies, and ~2 x 8.6 GB): their 64-bit indexing and bands past 65535 tile rows.
  void verify(const sw::bench::Session<Step>& s) const {
    if (large) {
      const std::vector<Step> ours = large_rows(s);
      const sw::Blas blas;
      tr::check_rows<float>(s, blas, ours, tr::large_shapes(), /*both_layouts=*/false);
      return;
    }
    if (shape_given(s.cli)) require_fits(s.gpu, sizeof(double));  // floats, then doubles
    const sw::Blas blas;
    const std::vector<Step> table = with_references(s.steps);
    tr::check_rows<float>(s, blas, table, verify_shapes(s.cli));
    tr::check_rows<double>(s, blas, table, verify_shapes(s.cli));
  }
  // The rows of --large (exits 2 when it does not apply), once they fit on the GPU.
  std::vector<Step> large_rows(const sw::bench::Session<Step>& s) const {
    std::vector<Step> ours = {kCopyWide};
    for (const Step& step : s.steps)
      if (step.launch && std::string(step.role) == "step") ours.push_back(step);
    if (ours.size() == 1)
      s.cli.reject("--large does not apply to --variant " + s.variant +
                   ": it checks the float steps, not the anti-example or the doubles");
    int64_t most = 0;
    for (const tr::Shape& shape : tr::large_shapes()) most = std::max(most, shape.n());
    sw::require_fits(s.gpu, "--large (elements)", most, 2.0 * sizeof(float));
    return ours;
  }

  void bench(const sw::bench::Session<Step>& s) const {
    require_fits(s.gpu, sizeof(double));  // floats, then doubles
    const sw::Blas blas;
    const std::vector<Step> table = with_references(s.steps);
    tr::time_rows<float>(s, blas, table, {rows, cols});
    tr::time_rows<double>(s, blas, table, {rows, cols}, "double", nullptr, "transpose-f64");
    // At the cache-resident size: the float ceiling, cuBLAS, the first and the best step.
    std::vector<Step> cached;
    for (const Step& step : s.steps)
      if (std::count(kCachedSteps.begin(), kCachedSteps.end(), step.name)) cached.push_back(step);
    if (cached.empty()) return;
    cached.insert(cached.begin(), {kCopyWide, tr::kSgeamRow});
    tr::note_cache_resident(s.report);
    tr::time_rows<float>(s, blas, cached, tr::kCacheResident, "cache-resident", "sweep", "",
                         tr::kCacheLaunches);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<Step> program{
      "11_transpose_padded",
      "Matrix transpose: padded tile, more work per thread, wide rows, grouped order.", "11",
      kSteps};
  return sw::bench::run(argc, argv, program, PaddedProblem{});
}
