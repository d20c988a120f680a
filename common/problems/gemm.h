// The GEMM problem (chapters 19 and 20): C = alpha * A * B + beta * C, row-major; C fp32,
// A and B fp32 (chapter 19) or bf16 or fp16 (chapter 20's --type, Problem::types).
//
// A is m x k, B is k x n, C is m x n, each row-major (leading dimensions k, n and n). A
// chapter writes its kernels, each with a launcher under it that takes the Args of one
// product and holds the <<<>>>, lists them in its step table and hands it to the program
// main:
//
//   void launch_tiled(const sw::gemm::Args& a);              // grid, block, <<<>>>
//   const std::vector<sw::gemm::Step> kSteps = {{"tiled", launch_tiled}};
//   const sw::bench::Program<sw::gemm::Step> program{"19_sgemm", "...", "19", kSteps};
//   return sw::bench::run(argc, argv, program, sw::gemm::Problem{});
//
// What the problem does around them:
//   - inputs: A, B (and C0 when beta != 0) uniform in [-1, 1) from --seed, written on the
//     host and copied to the GPU (gemm_reference.h); A and B of a 16-bit type rounded to it
//     first (the reference multiplies the rounded values), on the GPU as 16-bit values;
//   - the check: every entry of C finite, the floats after C untouched (a guard of
//     kGuardFloats: a store past the last row lands there), A and B unchanged (digests),
//     and the checked entries (all of them for small products, else the edges and a
//     sample of every region) within the bound derived from k and the inputs' type in
//     gemm_reference.h;
//   - before every run: with beta = 0, C is poisoned (NaN): a step must not read it, as
//     BLAS says (0 * NaN is NaN); with beta != 0, C is an input too: restore() writes C0
//     into it before every run (outside the timing), and the guard alone is poisoned;
//   - the vendor row: cublasSgemm in the default math mode (no TF32), in the same run; for
//     16-bit inputs cublasGemmEx (fp32 accumulation) with a 32 MiB workspace;
//   - a chapter's ceiling (Problem::ceiling, chapter 20's mma-roof) before the other rows;
//   - a step with kNeedsSm80 on a GPU (or an emulated one) before compute capability 8.0:
//     left out, with a SKIP line that says why;
//   - --verify-only: every row on the awkward shapes (verify_shapes), at beta = 0 and at
//     beta != 0, and every tile configuration of a configurable step; --large: shapes of
//     8192^3 and with 2^31 elements in one operand;
//   - --dump-outputs and --check-outputs (the lab grader's boundary, common/bench/outputs.h):
//     every check's C and its guard are exchanged (ProductData::outputs); the ceiling's own
//     check is left out of an exchanging run;
//   - the default run: every row at --m x --n x --k (4096^3), timed by bench::measure,
//     then (unless --config is given) the configurable step once per configuration (role
//     sweep): which tiles suit which GPU.
//
// The rows' figures: n is m n k, the multiply-adds of one product; TFLOP/s counts 2 m n k
// floating-point operations per call (cuBLAS's convention; the epilogue's 2 or 3 m n, under
// 0.1% at k = 4096, is left out); GB/s counts each of A, B and C moved once (C twice when
// beta != 0: read and written), the least any step must move.
//
// CUDA only (cuBLAS): include it from .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/bench/program.h"
#include "common/bench/protocol.h"
#include "common/bench/step.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/cublas_check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/device.h"
#include "common/parallel.h"
#include "common/problems/gemm_reference.h"
#include "common/report.h"

namespace sw::gemm {

constexpr int64_t kMaxSide = int64_t{1} << 16;  // --m, --n, --k: 1 to this
constexpr int64_t kDefaultSide = 4096;
constexpr int64_t kGuardFloats = 4096;               // poisoned floats after C
constexpr double kLibraryBytes = 256.0 * (1 << 20);  // device memory kept for cuBLAS
constexpr double kMaxScale = 1000;                   // --alpha, --beta: -1000 to 1000
constexpr double kDefaultAlpha = 1, kDefaultBeta = 0;
constexpr double kOtherAlpha = -1.5, kOtherBeta = 0.75;  // --verify-only's beta != 0 case

// The awkward shapes (m x n x k) of --verify-only: one element; k past every tile; every
// side odd or prime; one row, one column; long and thin; sides divisible by 4 (the float4
// paths) with partial tiles on every side; a large k. At most 2^26 multiply-adds each, so
// the sweep stays short under compute-sanitizer; the cubes (1000^3, 4095^3, 4096^3) are
// single-shape runs of their own (--size; chapters/meson.build's slow_tests). 16-bit inputs
// add sides divisible by 8 (their 16-byte paths) with partial tiles on every side.
inline std::vector<Shape> verify_shapes(InputType type = InputType::kFp32) {
  std::vector<Shape> out = {{1, 1, 1},       {3, 3, 431},    {127, 129, 257},
                            {1, 4096, 64},   {4096, 1, 64},  {17, 1000, 33},
                            {251, 509, 127}, {132, 260, 36}, {127, 129, 4095}};
  if (type != InputType::kFp32) out.push_back({136, 264, 40});
  return out;
}
// --large: 8192^3, and 2^31 elements in A, in B, in C (a 32-bit index wraps there).
inline std::vector<Shape> large_shapes() {
  return {{8192, 8192, 8192}, {65536, 64, 32768}, {64, 65536, 32768}, {65536, 32768, 16}};
}

// --- what a launcher gets, and a row of a table ---------------------------------------

// One product: C = alpha * A * B + beta * C. Sides are at most 2^16, so they fit an int;
// an offset into a matrix (up to 2^32 elements) does not: kernels index in int64_t.
struct Args {
  const float* a;  // m x k
  const float* b;  // k x n
  float* c;        // m x n
  int m, n, k;
  float alpha, beta;
  int config;           // a configurable step's tile configuration: its index in Problem::configs
  cublasHandle_t blas;  // the vendor row's handle (the kernels' launchers ignore it)
  InputType type;       // of A and B: fp32 (a, b), or bf16 or fp16 (a16, b16; a and b null)
  const uint16_t* a16;  // m x k, the bits of bf16 or fp16 values
  const uint16_t* b16;  // k x n
};

using Launch = void (*)(const Args&);  // every launch of one whole product, each checked
using Step = bench::Step<Launch>;

// Step::traits.
enum : unsigned {
  kVector = 1,        // 16-byte loads where vector_ok(args), else the same kernel's scalar loads
  kConfigurable = 2,  // the launcher takes its tiles from Problem::configs[args.config]
  kNeedsSm80 = 4,     // mma.sync on bf16 or fp16, ldmatrix, cp.async: compute capability 8.0
};

// The elements of A and B in 16 bytes: a float4, or 8 16-bit values.
inline int vector_width(const Args& a) { return a.type == InputType::kFp32 ? 4 : 8; }
// 16-byte loads and stores are aligned on every row (cudaMalloc aligns the first) when the
// rows of A (k elements) and of B and C (n) are whole 16-byte vectors.
inline bool vector_ok(const Args& a) {
  return a.k % vector_width(a) == 0 && a.n % vector_width(a) == 0;
}

// A tile configuration of a configurable step, as the report shows it.
struct TileConfig {
  const char* name;  // --config's value, and the sweep row's suffix
  int tile_m, tile_n, tile_k, threads;
  int stages = 0;  // shared-memory stages of a pipelined step (0: not a setting of the step)
};

// The vendor row. cuBLAS is column-major: our row-major C (m x n) is its n x m matrix C^T,
// and C^T = B^T A^T, where our B (k x n, row-major) is its n x k matrix B^T (ld n) and our A
// its k x m matrix A^T (ld k). With beta = 0 cuBLAS does not read C. 16-bit inputs:
// cublasGemmEx with fp32 accumulation (CUBLAS_COMPUTE_32F) and C in fp32, the algorithm
// cuBLAS's heuristic picks (CUBLAS_GEMM_DEFAULT) with the handle's workspace (Vendor).
inline void launch_cublas(const Args& a) {
  if (a.type == InputType::kFp32) {
    CUBLAS_CHECK(cublasSgemm(a.blas, CUBLAS_OP_N, CUBLAS_OP_N, a.n, a.m, a.k, &a.alpha, a.b, a.n,
                             a.a, a.k, &a.beta, a.c, a.n));
  } else {
    const cudaDataType in = a.type == InputType::kBf16 ? CUDA_R_16BF : CUDA_R_16F;
    CUBLAS_CHECK(cublasGemmEx(a.blas, CUBLAS_OP_N, CUBLAS_OP_N, a.n, a.m, a.k, &a.alpha, a.b16, in,
                              a.n, a.a16, in, a.k, &a.beta, a.c, CUDA_R_32F, a.n,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  CUDA_CHECK(cudaGetLastError());
}
inline const Step kCublasRow = {"cublas", launch_cublas, {}, "vendor"};

// The vendor row's cuBLAS handle: the default math mode (no TF32 for fp32), and for 16-bit
// inputs a workspace of 32 MiB, what cuBLAS recommends on Hopper (cublasSetWorkspace).
constexpr size_t kWorkspaceBytes = size_t{32} << 20;
struct Vendor {
  DeviceBuffer<unsigned char> workspace;  // declared first: freed after the handle
  Blas blas;
  explicit Vendor(InputType type) {
    CUBLAS_CHECK(cublasSetMathMode(blas.get(), CUBLAS_DEFAULT_MATH));
    if (type == InputType::kFp32) return;
    workspace.allocate(kWorkspaceBytes);
    CUBLAS_CHECK(cublasSetWorkspace(blas.get(), workspace.get(), workspace.bytes()));
  }
};

// Why this GPU cannot run a kNeedsSm80 step, or "" when it can.
inline std::string sm80_missing(const Gpu& gpu) {
  const DeviceInfo& d = gpu.info;
  if (d.cc_major >= 8) return "";
  return print_text(
             "needs compute capability 8.0 or newer (mma.sync on bf16 or fp16, ldmatrix, "
             "cp.async); this GPU has %d.%d",
             d.cc_major, d.cc_minor) +
         (d.emulated.empty() ? "" : " (an emulated " + d.emulated + ")");
}

// --- the data of one product ------------------------------------------------------------

// B (k x n) transposed into bt (n x k), in blocks, on all cores.
inline void transpose_host(const float* b, float* bt, int64_t k, int64_t n) {
  constexpr int64_t kBlock = 64;
  parallel_for((k + kBlock - 1) / kBlock,
               [&](int64_t first, int64_t last) {
                 for (int64_t p0 = first * kBlock; p0 < std::min(k, last * kBlock); p0 += kBlock)
                   for (int64_t j0 = 0; j0 < n; j0 += kBlock)
                     for (int64_t p = p0; p < std::min(k, p0 + kBlock); ++p)
                       for (int64_t j = j0; j < std::min(n, j0 + kBlock); ++j)
                         bt[j * k + p] = b[p * n + j];
               },
               1);
}

// The host values of an input (A or B) to the GPU: fp32 as they are into f; else each
// rounded to the type, in place (the reference multiplies what the GPU does), and its bits
// into h.
inline void to_device(std::vector<float>& host, InputType type, float* f, uint16_t* h) {
  const auto count = static_cast<int64_t>(host.size());
  if (type == InputType::kFp32) {
    CUDA_CHECK(cudaMemcpy(f, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    return;
  }
  std::vector<uint16_t> bits(host.size());
  parallel_for(count, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      host[i] = round_to(type, host[i]);
      bits[i] = half_bits(type, host[i]);
    }
  });
  CUDA_CHECK(cudaMemcpy(h, bits.data(), count * sizeof(uint16_t), cudaMemcpyHostToDevice));
}

// A, B (and C0) on the GPU and the reference of the checked entries, for one shape, alpha,
// beta and type of A and B. reseed() writes new contents (--graded-timing does, for every
// timed run).
struct Input {
  Shape shape;
  float alpha, beta;
  InputType type;
  DeviceBuffer<float> a, b, c, c0;  // a, b: fp32 inputs; c: m n + kGuardFloats; c0: beta != 0
  DeviceBuffer<uint16_t> a16, b16;  // 16-bit inputs
  mutable uint64_t seed = 0, digest = 0;
  mutable std::vector<float> host_a, host_bt, host_c0, out;
  mutable std::vector<Entry> entries;

  Input(Shape s, double alpha_, double beta_, uint64_t seed_, InputType type_ = InputType::kFp32)
      : shape(s), alpha(static_cast<float>(alpha_)), beta(static_cast<float>(beta_)), type(type_) {
    if (type == InputType::kFp32) {
      a.allocate(s.m * s.k);
      b.allocate(s.k * s.n);
    } else {
      a16.allocate(s.m * s.k);
      b16.allocate(s.k * s.n);
    }
    c.allocate(s.m * s.n + kGuardFloats);
    if (beta != 0) c0.allocate(s.m * s.n);
    reseed(seed_);
  }
  uint64_t input_digest() const {
    if (type != InputType::kFp32)
      return device_digest(a16.get(), a16.bytes()) ^ mix64(device_digest(b16.get(), b16.bytes()));
    return device_digest(a.get(), a.bytes()) ^ mix64(device_digest(b.get(), b.bytes()));
  }
  void reseed(uint64_t s) const {
    seed = s;
    const Shape& sh = shape;
    host_a.resize(sh.m * sh.k);
    fill_input(host_a.data(), sh.m * sh.k, s, Operand::kA);
    to_device(host_a, type, a.get(), a16.get());
    {
      std::vector<float> host_b(sh.k * sh.n);
      fill_input(host_b.data(), sh.k * sh.n, s, Operand::kB);
      to_device(host_b, type, b.get(), b16.get());
      host_bt.resize(sh.k * sh.n);
      transpose_host(host_b.data(), host_bt.data(), sh.k, sh.n);
    }
    if (beta != 0) {
      host_c0.resize(sh.m * sh.n);
      fill_input(host_c0.data(), sh.m * sh.n, s, Operand::kC);
      CUDA_CHECK(cudaMemcpy(c0.get(), host_c0.data(), c0.bytes(), cudaMemcpyHostToDevice));
    }
    digest = input_digest();
    entries = checked_entries(sh, s);
    reference_entries(entries, sh, host_a.data(), host_bt.data(),
                      beta != 0 ? host_c0.data() : nullptr, alpha, beta, type);
  }
  Args args(int config, cublasHandle_t blas) const {
    return {a.get(),
            b.get(),
            c.get(),
            static_cast<int>(shape.m),
            static_cast<int>(shape.n),
            static_cast<int>(shape.k),
            alpha,
            beta,
            config,
            blas,
            type,
            a16.get(),
            b16.get()};
  }
};

// One product as bench::measure and bench::check_once see it (common/bench/protocol.h).
struct ProductData {
  const Input& in;
  void restore() const {  // beta != 0: C is an input, C0, before every run
    if (in.beta != 0)
      CUDA_CHECK(cudaMemcpy(in.c.get(), in.c0.get(), in.c0.bytes(), cudaMemcpyDeviceToDevice));
  }
  void poison() const {  // beta = 0: all of C and the guard; else the guard only
    const int64_t first = in.beta != 0 ? in.shape.m * in.shape.n : 0;
    sw::poison(in.c.get() + first, (in.c.count() - first) * sizeof(float));
  }
  bench::Verdict check() const {
    in.out.resize(in.c.count());
    CUDA_CHECK(cudaMemcpy(in.out.data(), in.c.get(), in.c.bytes(), cudaMemcpyDeviceToHost));
    const Comparison r = compare(in.out.data(), in.shape, kGuardFloats, in.entries);
    const bool kept = in.input_digest() == in.digest;
    bench::Verdict v{r.ok() && kept, r.detail, r.rel_error, 0};
    if (r.ok() && !kept) v.detail = "input changed: the step wrote into A or B";
    return v;
  }
  bool reseed(uint64_t s) const {
    in.reseed(s);
    return true;
  }
  uint64_t seed() const { return in.seed; }
  // What check() reads that a run writes (the exchange of outputs, common/bench/outputs.h):
  // C and the guard after it.
  std::vector<bench::Buffer> outputs() const {
    return {{in.c.get(), static_cast<int64_t>(in.c.bytes())}};
  }
};

// --- the problem -------------------------------------------------------------------------

// The results' problem column: "sgemm" (fp32) or "gemm" (16-bit inputs, the note names the type).
inline const char* problem_name(InputType t) { return t == InputType::kFp32 ? "sgemm" : "gemm"; }

// The shape options' checks of chapters 19 to 21 (exit 2 on a wrong combination): --size
// sets m = n = k and excludes --m, --n and --k; --large, which has its own shapes, only
// with --verify-only and without a shape option.
inline bool shape_given(const Cli& cli) {
  return cli.was_given("--m") || cli.was_given("--n") || cli.was_given("--k") ||
         cli.was_given("--size");
}
inline void validate_shape(const Cli& cli, bool verify_only, bool large, int64_t size, int64_t* m,
                           int64_t* n, int64_t* k) {
  if (cli.was_given("--size")) {
    if (cli.was_given("--m") || cli.was_given("--n") || cli.was_given("--k"))
      cli.reject("--size sets m = n = k: give it or --m, --n, --k, not both");
    *m = *n = *k = size;
  }
  if (large && !verify_only) cli.reject("--large applies only with --verify-only");
  if (large && shape_given(cli)) cli.reject("--large has its own shapes: not with a shape option");
}

struct Problem {
  using Step = gemm::Step;
  static constexpr const char* kName = "sgemm";
  // Every check of verify() is a step's (or cuBLAS's) check_once on ProductData, whose
  // outputs() name C; the ceiling's check is left out of an exchange (see verify).
  static constexpr bool kExchangesOutputs = true;

  // The configurable step's tile configurations (its default first); none: no --config.
  std::vector<TileConfig> configs;
  // The types of A and B that --type offers (the default first); one alone: no --type.
  std::vector<InputType> types = {InputType::kFp32};
  // A chapter's ceiling row (chapter 20's mma-roof) for the chosen type, before the other
  // rows: checked with --verify-only, else measured. Null: none.
  void (*ceiling)(const bench::Session<Step>&, InputType) = nullptr;

  // The options.
  int64_t m = kDefaultSide, n = kDefaultSide, k = kDefaultSide, size = kDefaultSide;
  double alpha = kDefaultAlpha, beta = kDefaultBeta;
  std::string config, type_text;
  bool large = false;

  void add_options(Cli& cli, const bench::Program<Step>&) {
    cli.add_int("--m", &m, 1, kMaxSide, "rows of A and C");
    cli.add_int("--n", &n, 1, kMaxSide, "columns of B and C");
    cli.add_int("--k", &k, 1, kMaxSide, "columns of A, rows of B");
    cli.add_int("--size", &size, 1, kMaxSide, "m = n = k (not with --m, --n, --k)");
    cli.add_number("--alpha", &alpha, -kMaxScale, kMaxScale, "C = alpha * A * B + beta * C");
    cli.add_number("--beta", &beta, -kMaxScale, kMaxScale,
                   "beta (0: C is not read, and it is poisoned before every run)");
    if (!configs.empty()) {
      std::vector<std::string> names;
      for (const TileConfig& c : configs) names.push_back(c.name);
      config = names.front();
      cli.add_choice("--config", &config, names,
                     "tiles of the configurable step (default: the first); not given, the "
                     "default run also times every one");
    }
    if (types.size() > 1) {
      std::vector<std::string> names;
      for (const InputType t : types) names.push_back(type_name(t));
      type_text = names.front();
      cli.add_choice("--type", &type_text, names, "the type of A and B (C is fp32)");
    }
    cli.add_flag("--large", &large, "with --verify-only: 8192^3 and 2^31 elements in one operand");
  }
  InputType type() const {
    for (const InputType t : types)
      if (type_text == type_name(t)) return t;
    return types.front();
  }

  bool scale_given(const Cli& cli) const {
    return cli.was_given("--alpha") || cli.was_given("--beta");
  }
  // Options that do not apply to what was asked exit 2 (before the GPU starts).
  void validate(const bench::Request<Step>& asked) {
    const Cli& cli = asked.cli;
    validate_shape(cli, asked.opt.verify_only, large, size, &m, &n, &k);
    const bool configurable = std::any_of(asked.steps.begin(), asked.steps.end(),
                                          [](const Step& s) { return s.traits & kConfigurable; });
    if (cli.was_given("--config") && !configurable)
      cli.reject("--config applies only to a configurable step (--variant " + last_name(asked) +
                 ")");
  }
  static std::string last_name(const bench::Request<Step>& asked) {
    for (auto s = asked.program.steps.rbegin(); s != asked.program.steps.rend(); ++s)
      if (s->traits & kConfigurable) return s->name;
    return "none";
  }
  int config_index() const {
    for (size_t i = 0; i < configs.size(); ++i)
      if (config == configs[i].name) return static_cast<int>(i);
    return 0;
  }

  // A shape (with C0 when beta != 0) must fit on the GPU: else exit 2, naming the options.
  static void require_fits(const Gpu& gpu, const Shape& s, bool with_c0, InputType type) {
    const int64_t input_bytes = type == InputType::kFp32 ? 4 : 2;
    const int64_t bytes =
        (s.m * s.k + s.k * s.n) * input_bytes + (s.m * s.n * (with_c0 ? 2 : 1) + kGuardFloats) * 4;
    sw::require_fits(gpu, "--m, --n, --k " + s.text() + ": bytes of A, B and C", bytes, 1,
                     kLibraryBytes + (type == InputType::kFp32 ? 0 : kWorkspaceBytes));
  }

  // The rows: cuBLAS first, then the steps; a configurable step once per configuration
  // when `every_config` (its name then says which: "warp-tiled config=sm80").
  struct TableRow {
    Step step;
    std::string name;
    int config;
  };
  std::vector<TableRow> rows(const std::vector<Step>& steps, bool every_config) const {
    std::vector<TableRow> out = {{kCublasRow, kCublasRow.name, 0}};
    for (const Step& st : steps) {
      if (!(st.traits & kConfigurable) || !every_config) {
        out.push_back({st, st.name, config_index()});
        continue;
      }
      for (size_t c = 0; c < configs.size(); ++c)
        out.push_back(
            {st, std::string(st.name) + " config=" + configs[c].name, static_cast<int>(c)});
    }
    return out;
  }

  // The rows this GPU runs: a kNeedsSm80 step on a GPU before compute capability 8.0 is
  // left out with a SKIP line that says why.
  std::vector<TableRow> runnable(const bench::Session<Step>& s, bool every_config) const {
    const std::string missing = sm80_missing(s.gpu);
    std::vector<TableRow> out;
    for (const TableRow& row : rows(s.steps, every_config)) {
      if ((row.step.traits & kNeedsSm80) && !missing.empty())
        s.report.skip(row.name, missing);
      else
        out.push_back(row);
    }
    return out;
  }

  // What tells a row apart: 16-byte or scalar loads; its tiles.
  void settings(Result& r, const Step& st, const Args& a, int config) const {
    if (st.traits & kVector) r.extra["vec"] = vector_ok(a) ? vector_width(a) : 1;
    if ((st.traits & kConfigurable) && config < static_cast<int>(configs.size())) {
      const TileConfig& t = configs[config];
      r.extra["tile_m"] = t.tile_m;
      r.extra["tile_n"] = t.tile_n;
      r.extra["tile_k"] = t.tile_k;
      r.extra["threads"] = t.threads;
      if (t.stages > 0) r.extra["stages"] = t.stages;
    }
  }

  void verify(const bench::Session<Step>& s) const {
    const InputType t = type();
    const std::vector<Shape> shapes = large                ? large_shapes()
                                      : shape_given(s.cli) ? std::vector<Shape>{{m, n, k}}
                                                           : verify_shapes(t);
    const std::vector<std::pair<double, double>> scales =
        scale_given(s.cli) ? std::vector<std::pair<double, double>>{{alpha, beta}}
                           : std::vector<std::pair<double, double>>{{kDefaultAlpha, kDefaultBeta},
                                                                    {kOtherAlpha, kOtherBeta}};
    for (const Shape& shape : shapes)
      for (const auto& [al, be] : scales) require_fits(s.gpu, shape, be != 0, t);
    const Vendor vendor(t);
    const std::vector<TableRow> table = runnable(s, !s.cli.was_given("--config"));
    // The ceiling (chapter 20's mma-roof) checks the instruction on its own data, no step's
    // product: with --dump-outputs or --check-outputs (the lab grader's boundary) it is left
    // out on both sides, so that every check exchanged is a product's.
    if (ceiling && bench::exchange().mode() == bench::Exchange::Mode::kOff) ceiling(s, t);
    for (const Shape& shape : shapes)
      for (const auto& [al, be] : scales) {
        const Input in(shape, al, be, static_cast<uint64_t>(s.opt.seed), t);
        for (const TableRow& row : table) {
          const Args a = in.args(row.config, vendor.blas.get());
          const bench::Verdict v = bench::check_once(ProductData{in}, row.step.launch, a);
          std::string what = row.name + " " + shape.text() + " alpha=" + print_text("%g", al) +
                             " beta=" + print_text("%g", be);
          if (t != InputType::kFp32) what += std::string(" ") + type_name(t);
          if (row.step.traits & kVector)
            what += " vec=" + std::to_string(vector_ok(a) ? vector_width(a) : 1);
          s.report.check(v.ok, what, v.detail);
        }
      }
  }

  void bench(const bench::Session<Step>& s) const {
    const Shape shape{m, n, k};
    const InputType t = type();
    require_fits(s.gpu, shape, beta != 0, t);
    const Vendor vendor(t);
    const Input in(shape, alpha, beta, static_cast<uint64_t>(s.opt.seed), t);
    const double bytes_moved =
        (t == InputType::kFp32 ? 4.0 : 2.0) * static_cast<double>(m * k + k * n) +
        4.0 * (beta != 0 ? 2.0 : 1.0) * static_cast<double>(m * n);
    std::string note = shape.text();
    if (t != InputType::kFp32) note += std::string(" ") + type_name(t);
    if (alpha != kDefaultAlpha || beta != kDefaultBeta)
      note += print_text(" alpha=%g beta=%g", alpha, beta);
    auto measure = [&](const Step& st, const std::string& name, const char* role, int config) {
      const bench::Row row{name,
                           shape.madds(),
                           bytes_moved,
                           1,
                           false,
                           role,
                           2.0 * static_cast<double>(shape.madds())};
      const Args a = in.args(config, vendor.blas.get());
      Result r = bench::measure(s.opt, row, ProductData{in}, st.launch, a);
      r.note = note;
      r.problem = problem_name(t);
      settings(r, st, a, config);
      s.report.add(r);
    };
    if (ceiling) ceiling(s, t);
    const std::vector<TableRow> table = runnable(s, false);
    for (const TableRow& row : table) measure(row.step, row.name, row.step.role, row.config);
    if (s.cli.was_given("--config")) return;
    for (const TableRow& row : table)  // the sweep: which tiles suit this GPU
      if (row.step.traits & kConfigurable)
        for (size_t c = 0; c < configs.size(); ++c)
          measure(row.step, std::string(row.step.name) + "-" + configs[c].name, "sweep",
                  static_cast<int>(c));
  }
};

}  // namespace sw::gemm
