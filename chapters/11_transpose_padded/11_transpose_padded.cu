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
//                [--verify-only [--large]] [--json]
#include <cstdint>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/cli.h"
#include "common/cublas_check.h"
#include "common/cuda_utils.cuh"
#include "common/device.h"
#include "common/report.h"
#include "common/transpose_harness.h"

// Chapter 10's tile body, reused, not copied.
#include "chapters/10_transpose_shared/shared_tile.cuh"

namespace {

constexpr int kTile = ch10::kTile;  // the padded kernel: 32 x 32 threads, one element each
constexpr int kPad = 1;             // one extra element per tile row shifts each row by one bank

// The kernels of a 2-D grid: blockIdx.x is the tile column, blockIdx.y the tile
// row. grid.y holds at most 65535, so past 65535 tile rows a launcher starts one
// grid per band of them, the pointers offset to the band (sw::transpose::Bands).
// Each launcher computes its grid and block beside its <<<>>>, and the harness's
// timed call runs it directly.

// --- 1. padded ------------------------------------------------------------------------

__global__ void transpose_padded(const float* __restrict__ in, float* __restrict__ out,
                                 int64_t rows, int64_t cols) {
  __shared__ float tile[kTile][kTile + kPad];  // the only change from chapter 10
  ch10::transpose_via_tile(tile, in, out, rows, cols);
}

// Its launcher: the grid over the input's tiles, in bands (common/transpose_harness.h).
constexpr sw::transpose::Launch<float> launch_padded =
    sw::transpose::launch_tiles<float, transpose_padded, kTile, kTile, kTile>;

}  // namespace

#include "transpose_tiled.cuh"  // steps 2-6 and the doubles: one tile body, 256 threads

int main(int argc, char** argv) {
  using FloatStep = sw::transpose::Step<float>;
  using DoubleStep = sw::transpose::Step<double>;
  // The chapter's steps, in order (--list prints them); the ceilings and cuBLAS come later.
  const std::vector<FloatStep> float_steps = {
      {"padded", "step", launch_padded},
      {"padded-32x8", "step", launch_padded_32x8},
      {"tile64", "anti-example", launch_tile64},
      {"tile64-float4", "step", launch_tile64_float4},
      {"tile64-rows", "step", launch_tile64_rows},
      {"tile64-rows-grouped", "step", launch_tile64_rows_grouped},
  };
  const std::vector<DoubleStep> double_steps = {
      {"double-tile32", "step", launch_double_tile32},
      {"double-tile32-grouped", "step", launch_double_tile32_grouped},
  };
  std::vector<std::string> names;
  for (const FloatStep& step : float_steps) names.push_back(step.name);
  for (const DoubleStep& step : double_steps) names.push_back(step.name);

  sw::transpose::Options t;
  sw::Cli cli("11_transpose_padded",
              "Matrix transpose: padded tile, more work per thread, wide rows, grouped order.");
  sw::transpose::add_options(cli, &t, /*with_large=*/true);
  cli.set_steps(names);
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  sw::transpose::check_size(t);
  const sw::Gpu gpu = sw::start_gpu(opt);
  if (!opt.verify_only || sw::transpose::shape_given(cli))
    sw::transpose::require_fits(gpu, t, sizeof(double));  // floats, then doubles
  sw::Report report(opt, gpu.copy_gbps, "11", "transpose");
  const sw::Blas blas;  // the harness puts its handle in each launcher's Args, for the cuBLAS rows

  const FloatStep copy_wide{"copy-tile64-float4", "ceiling", launch_copy_tile64_float4, true};
  const FloatStep sgeam = sw::transpose::vendor_step<float>();
  std::vector<FloatStep> floats = {sw::transpose::copy_step<float>(), copy_wide, sgeam};
  floats.insert(floats.end(), float_steps.begin(), float_steps.end());
  std::vector<DoubleStep> doubles = {sw::transpose::vendor_step<double>()};
  doubles.insert(doubles.end(), double_steps.begin(), double_steps.end());

  if (opt.verify_only &&
      t.large) {  // floats only: the double kernels share their bodies (~2 x 8.6 GB)
    sw::transpose::verify_large(report, blas, gpu, floats, opt.seed);
    return report.exit_code();
  }
  if (opt.verify_only) {
    sw::transpose::verify(report, blas, floats, sw::transpose::verify_shapes(cli, t), opt.seed);
    sw::transpose::verify(report, blas, doubles, sw::transpose::verify_shapes(cli, t), opt.seed);
    return report.exit_code();
  }
  sw::transpose::benchmark(report, blas, opt, floats, {t.rows, t.cols}, opt.seed);
  sw::transpose::benchmark(report, blas, opt, doubles, {t.rows, t.cols}, opt.seed, "double", "",
                           "transpose-f64");
  // At the cache-resident size: the float ceiling, cuBLAS, the first and the best step.
  const std::vector<FloatStep> cached = {copy_wide, sgeam, float_steps.front(), float_steps.back()};
  sw::transpose::benchmark_cache_resident(report, blas, opt, cached, opt.seed);
  return report.exit_code();
}