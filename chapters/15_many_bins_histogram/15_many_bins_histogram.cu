// Chapter 15: histograms with many bins: narrow counters, clusters, and which technique
// wins at which bin count.
//
// What changed:  chapter 08 had 256 bins, small enough for 32 private copies per block.
//                Here there are 256 to 2^20 bins (16-bit values up to 65,536 bins,
//                32-bit values below 2^20 beyond), and from about 58K bins not even one
//                32-bit copy fits in an SM's shared memory. One measured step at a time:
//                  global-atomic     every value adds 1 to its 64-bit counter in global memory
//                  global-match      lanes of a warp holding the same bin add once
//                                    (__match_any_sync)
//                  shared32          one 32-bit histogram per block in shared memory, up to
//                                    ~58K bins (227 KiB / 4 B); +1 atomics that return nothing
//                  packed16          two 16-bit counters per 32-bit word, twice the bins; each
//                                    atomic returns the old word, and the add that wraps a
//                                    counter hands 2^16 to global memory
//                  packed16-batch    + 16 atomics, then one test of all their returned words
//                                    (an OR), instead of a test and a branch after each
//                  packed16-hot      + each warp elects a hot bin, and its lanes count that bin
//                                    in a register: repeated values stop queuing on one word
//                  cluster-dsmem     the Programming Guide's design: a cluster of 2 to 16 blocks
//                                    splits the bins, and every value is an atomic add on its
//                                    owner block's shared memory (distributed shared memory)
//                  cluster-packed16  the same with packed 16-bit counters (2^20 bins fit in 16 SMs)
//                  partition         beyond one SM's bins: pass 1 sorts each tile's values by
//                                    slice of 65,536 bins into global memory, pass 2 counts each
//                                    slice in one block with packed16-hot's counting
//                  auto              what a library would ship: shared32 where 32-bit counters
//                                    fit in one block, packed16-hot where 16-bit ones do, else
//                                    partition
// Why faster:    a shared-memory atomic stays in the SM; a global one travels to L2, and
//                one L2 address takes one atomic at a time. 16-bit counters double the
//                bins an SM holds. A register holds a hot bin's count for free. A remote
//                (DSMEM) atomic crosses the SM-to-SM network for every value; the partition
//                pass moves 2 bytes per value through DRAM instead, in 16-byte stores.
// Bottleneck:    global atomics: the L2's atomic units; shared memory: the atomic unit (bank
//                conflicts on uniform values, one word on repeated values) and, for packed
//                counters, the instructions that test the returned words; clusters: the
//                remote atomics; partition: DRAM traffic (4 + 2 + 2 bytes per 32-bit value)
//                and the tile sort.
// Steps:         global-atomic, global-match, shared32, packed16, packed16-batch, packed16-hot,
//                cluster-dsmem, cluster-packed16, partition, auto
// Run:           build/chapters/15_many_bins_histogram [--n 2^28] [--bins B --dist
//                uniform|equal|mix|image --value V --p P] [--variant NAME] [--offset K]
//                [--verify-only [--large]] [--json]
//                Without --bins/--dist: the headline inputs at 65,536 and 2^20 bins, the
//                p-sweep at 65,536 bins, and the regime map from 256 to 2^20 bins.
// Files:         this file (the step table, auto, the default run, main); counting.cuh
//                (what every step shares); packed16.cuh (packed counters, the carry proof);
//                steps_1_global.cuh, steps_2_shared.cuh, steps_3_clusters.cuh,
//                steps_4_partition.cuh (the kernels and launchers); many_bins_harness.*
//                (inputs, rows, a checked timed run); many_bins_checks.cu (--verify-only);
//                many_bins_data.* (the inputs on the GPU, the CPU reference).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/cuda_utils.cuh"
#include "common/device.h"
#include "common/report.h"
#include "counting.cuh"
#include "many_bins_data.h"
#include "many_bins_harness.h"
#include "steps_1_global.cuh"
#include "steps_2_shared.cuh"
#include "steps_3_clusters.cuh"
#include "steps_4_partition.cuh"

namespace ch15 {

// =========================================================================================
// Step 10: auto, the choice a library would make from the bin count and the GPU alone:
// shared32 while 32-bit counters fit in one block's shared memory (its +1 atomics need
// no answer), packed16-hot while 16-bit ones do, partition beyond.
// =========================================================================================

bool fits_auto(const Job& j) { return fits_shared32(j) || fits_packed16(j) || fits_partition(j); }

template <class T>
Launch pick_auto(const Job& j) {
  if (fits_shared32(j)) return launch_shared<T, Shared32Counter>;
  if (fits_packed16(j)) return launch_shared<T, PackedHotCounter>;
  return launch_partition<T>;
}

// --- the steps ----------------------------------------------------------------------------

// One table per value type: the same steps, their kernels compiled for T.
template <class T>
const std::vector<Step> kSteps = {
    {"global-atomic", launch_global<T, GlobalCounter>, always},
    {"global-match", launch_global<T, MatchCounter>, always},
    {"shared32", launch_shared<T, Shared32Counter>, fits_shared32},
    {"packed16", launch_shared<T, Packed16Counter>, fits_packed16},
    {"packed16-batch", launch_shared<T, Packed16BatchCounter>, fits_packed16},
    {"packed16-hot", launch_shared<T, PackedHotCounter>, fits_packed16},
    {"cluster-dsmem", launch_cluster<T, false>, fits_cluster<T, false>, clusters_for<T, false>},
    {"cluster-packed16", launch_cluster<T, true>, fits_cluster<T, true>, clusters_for<T, true>},
    {"partition", launch_partition<T>, fits_partition},
    {"auto", nullptr, fits_auto, nullptr, pick_auto<T>},
};

const std::vector<Step>& steps_for(int value_bits) {
  return dispatch_bits(value_bits,
                       [](auto t) -> const std::vector<Step>& { return kSteps<decltype(t)>; });
}

// --- the runs: the default one (headline inputs, regime map, p-sweep) or one input ------

constexpr uint32_t kHeadlineSmall = 65536, kHeadlineLarge = 1u << 20;
const uint32_t kMapBins[] = {256,   512,   1024,  2048,   4096,   8192,   16384,  32768,
                             49152, 65536, 98304, 131072, 262144, 524288, 1048576};
const double kSweepP[] = {0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0};
constexpr double kMapRepsFraction = 0.25;  // map and sweep points: a quarter of the reps

struct Options {
  int64_t n = int64_t{1} << 28;
  int64_t bins = kHeadlineSmall, value = 0, offset = 0;
  std::string dist = "uniform", variant = "all";
  double p = 0.9;
  bool large = false;
};

sw::Cli make_cli(Options* o) {
  sw::Cli cli("15_many_bins_histogram",
              "Histograms of 256 to 2^20 bins: global atomics, shared memory, packed 16-bit "
              "counters, clusters.");
  cli.add_int("--n", &o->n, 1, sw::kMaxElements,
              "values to histogram (16-bit up to 65536 bins, 32-bit beyond)");
  cli.add_int("--bins", &o->bins, 256, int64_t{1} << 20,
              "bins, evenly spaced over the values' range (benchmarks this count only)");
  cli.add_choice("--dist", &o->dist, {"uniform", "equal", "mix", "image"},
                 "distribution of the values (benchmarks this input only)");
  cli.add_int("--value", &o->value, 0, 65535, "the repeated value of --dist equal and mix");
  cli.add_number("--p", &o->p, 0.0, 1.0, "--dist mix: probability that a value is --value");
  cli.add_int("--offset", &o->offset, 0, kMaxOffset,
              "start the input this many values past a 16-byte boundary");
  std::vector<std::string> names;
  for (const Step& s : steps_for(16)) names.push_back(s.name);
  cli.add_variant(&o->variant, names, "run only this step (or cub)", {"cub"});
  cli.add_flag("--large", &o->large, "with --verify-only: the checks above 2^32 values");
  return cli;
}

// Per value width, the headline inputs at 65,536 (16-bit) or 2^20 (32-bit) bins with
// every cluster size, the regime map on uniform and all-equal values at every bin
// count of that width, and (16-bit) the p-sweep. The input has room for partition's
// 2 bytes per value of scratch.
void default_run(Context& c, const sw::Gpu& gpu, const Options& o) {
  Input in(gpu, "--n", o.n, 32, 2.0);
  sw::CommonOptions map = c.opt;
  map.reps = std::max(1, static_cast<int>(c.opt.reps * kMapRepsFraction));
  map.warmup = std::min(c.opt.warmup, 1);
  for (int bits : {16, 32}) {
    const uint32_t headline = bits == 16 ? kHeadlineSmall : kHeadlineLarge;
    const ValueSpec specs[] = {
        {Dist::Uniform}, {Dist::Equal, 0}, {Dist::Mix, 0, 0.9}, {Dist::Image}};
    for (const ValueSpec& spec : specs) {
      in.generate(bits, o.n, spec, c.opt.seed, o.offset);
      bench_all(c, c.opt, in, headline, "step", true);
      if (spec.dist == Dist::Image) continue;
      for (uint32_t bins : kMapBins)
        if ((bits == 16) == (bins <= kHeadlineSmall)) bench_all(c, map, in, bins, "sweep", false);
    }
  }
  for (double p : kSweepP) {
    in.generate(16, o.n, {Dist::Mix, 0, p}, c.opt.seed, o.offset);
    bench_all(c, map, in, kHeadlineSmall, "sweep", false, {{"p", p}});
  }
}

// The one input that --bins, --dist, --value and --p describe: 16-bit values up to
// 65,536 bins, 32-bit ones beyond.
void one_input_run(Context& c, const sw::Gpu& gpu, const Options& o) {
  const int bits = o.bins <= kHeadlineSmall ? 16 : 32;
  Input in(gpu, "--n", o.n, bits, 2.0);
  ValueSpec spec;
  spec.dist = o.dist == "equal"   ? Dist::Equal
              : o.dist == "mix"   ? Dist::Mix
              : o.dist == "image" ? Dist::Image
                                  : Dist::Uniform;
  spec.value = static_cast<uint32_t>(o.value);
  spec.p = o.p;
  in.generate(bits, o.n, spec, c.opt.seed, o.offset);
  bench_all(c, c.opt, in, static_cast<uint32_t>(o.bins), "step", true);
}

}  // namespace ch15

int main(int argc, char** argv) {
  ch15::Options o;
  sw::Cli cli = ch15::make_cli(&o);
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);
  sw::Report report(opt, gpu.copy_gbps, "15", "histogram");
  ch15::Context c{opt, report, o.variant};
  std::string why;
  if (!ch15::has_clusters(&why))
    for (const char* step : {"cluster-dsmem", "cluster-packed16"}) report.skip(step, why);
  if (opt.verify_only) return ch15::verify(c, gpu, o.large);
  const bool one_input = cli.was_given("--bins") || cli.was_given("--dist") ||
                         cli.was_given("--value") || cli.was_given("--p");
  one_input ? ch15::one_input_run(c, gpu, o) : ch15::default_run(c, gpu, o);
  return report.exit_code();
}
