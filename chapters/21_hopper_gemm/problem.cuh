// Chapter 21's problem: C = A B^T with A (m x k) and B (n x k) in bf16, both row-major ("TN":
// both K-major, as wgmma reads them from shared memory), C (m x n) in fp32, row-major.
//
// The part-1 pieces, reused: the inputs of common/problems/gemm_reference.h (A and B drawn as
// chapter 20 draws A and B (k x n) for the same seed, rounded to bf16; our B is that B
// transposed, so the reference is chapter 20's), its checked entries, reference and bound
// (gamma'_{3k+2} sum |a||b|), its comparison (all of C finite, the guard after C kept),
// and Freivalds' check of every row (common/hopper/freivalds.h). C is poisoned before every
// run. C is fp32: the bound stays part 1's, with no rounding of the result to add, and
// cuBLASLt's row writes the same fp32 C.
//
// Rows padded to 16 bytes: the copy engine needs every row stride a multiple of 16 bytes, so
// A and B are stored with ld = k rounded up to 8 elements (the pad columns zero, never read:
// the tensor maps' width is k, and TMA fills zeros past it), as a BLAS lda >= k allows.
#pragma once

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench/program.h"
#include "common/bench/protocol.h"
#include "common/bench/step.h"
#include "common/hopper/freivalds.h"
#include "common/problems/gemm.h"
#include "sweep.h"

namespace ch21 {

namespace gm = sw::gemm;
constexpr int kRowAlign = 8;  // bf16 elements in 16 bytes

struct LtPlan;  // the vendor row's cuBLASLt plan (cublaslt.cu)

// One product as a launcher gets it.
struct Args {
  const uint16_t* a;  // m x k bf16 bits, rows ld apart
  const uint16_t* b;  // n x k bf16 bits, rows ld apart
  float* c;           // m x n
  int m, n, k, ld;
  int sms;             // the GPU's SMs: a persistent grid's size
  const LtPlan* plan;  // the vendor row's (the steps ignore it)
  int* flags;          // step 9's: kSplitFlags, 0 between launches
};
// Step 9's flags: one per block of a cut unit's cluster and consumer (fewer than the SMs'
// blocks times 2); each cut unit's last piece sets its flags back to 0.
constexpr int64_t kSplitFlags = 1024;
using Launch = void (*)(const Args&);
using Blocks = int64_t (*)(const Args&);  // the blocks a step's grid has (the table's blocks=)
using Step = sw::bench::Step<Launch, Blocks>;

// The vendor row: cuBLASLt's heuristic's candidates for this shape, each timed, the fastest
// kept (cublaslt.cu). make_plan times them; launch_cublaslt runs the kept one.
LtPlan* make_plan(const Args& a);
void free_plan(LtPlan* p);
// Which candidate won (1 is the heuristic's first) and how many were offered: 0 and 0 when
// none ran.
int plan_choice(const LtPlan* p);
int plan_offered(const LtPlan* p);
void launch_cublaslt(const Args& a);

// sm_90a's image ran on this GPU (a probe kernel of the chapter), or why not.
std::string sm90a_missing(const sw::Gpu& gpu);

// A, B, C and the reference of one shape.
struct Input {
  gm::Shape shape;
  int64_t ld;
  sw::DeviceBuffer<uint16_t> a, b;
  sw::DeviceBuffer<float> c;    // m n + the guard
  sw::DeviceBuffer<int> flags;  // step 9's, zeroed once
  mutable uint64_t seed = 0, digest = 0;
  mutable std::vector<float> host_a, host_bt, out;
  mutable std::vector<gm::Entry> entries;

  Input(gm::Shape s, uint64_t seed_) : shape(s), ld((s.k + kRowAlign - 1) / kRowAlign * kRowAlign) {
    a.allocate(s.m * ld);
    b.allocate(s.n * ld);
    c.allocate(s.m * s.n + gm::kGuardFloats);
    flags.allocate(kSplitFlags);
    CUDA_CHECK(cudaMemset(flags.get(), 0, flags.bytes()));
    reseed(seed_);
  }
  // Rows of `rows` x k values as bf16 bits into dst, ld apart, the pad zero.
  void upload(const std::vector<float>& host, int64_t rows, uint16_t* dst) const {
    const int64_t k = shape.k;
    std::vector<uint16_t> bits(static_cast<size_t>(rows * ld), 0);
    sw::parallel_for(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        for (int64_t p = 0; p < k; ++p)
          bits[r * ld + p] = gm::half_bits(gm::InputType::kBf16, host[r * k + p]);
    });
    CUDA_CHECK(cudaMemcpy(dst, bits.data(), bits.size() * 2, cudaMemcpyHostToDevice));
  }
  void reseed(uint64_t s) const {
    seed = s;
    const gm::Shape& sh = shape;
    host_a.resize(sh.m * sh.k);
    gm::fill_input(host_a.data(), sh.m * sh.k, s, gm::Operand::kA);
    std::vector<float> host_b(sh.k * sh.n);  // k x n, as part 1 draws it
    gm::fill_input(host_b.data(), sh.k * sh.n, s, gm::Operand::kB);
    for (float& x : host_a) x = gm::round_to(gm::InputType::kBf16, x);
    for (float& x : host_b) x = gm::round_to(gm::InputType::kBf16, x);
    host_bt.resize(sh.k * sh.n);
    gm::transpose_host(host_b.data(), host_bt.data(), sh.k, sh.n);
    upload(host_a, sh.m, a.get());
    upload(host_bt, sh.n, b.get());
    digest = input_digest();
    entries = gm::checked_entries(sh, s);
    gm::reference_entries(entries, sh, host_a.data(), host_bt.data(), nullptr, 1.0, 0.0,
                          gm::InputType::kBf16);
  }
  uint64_t input_digest() const {
    return sw::device_digest(a.get(), a.bytes()) ^ sw::mix64(sw::device_digest(b.get(), b.bytes()));
  }
  Args args(int sms, const LtPlan* plan) const {
    return {a.get(),
            b.get(),
            c.get(),
            static_cast<int>(shape.m),
            static_cast<int>(shape.n),
            static_cast<int>(shape.k),
            static_cast<int>(ld),
            sms,
            plan,
            flags.get()};
  }
};

// One product as bench::measure and bench::check_once see it.
struct ProductData {
  const Input& in;
  void restore() const {}
  void poison() const { sw::poison(in.c.get(), in.c.bytes()); }
  sw::bench::Verdict check() const {
    const gm::Shape& s = in.shape;
    in.out.resize(in.c.count());
    CUDA_CHECK(cudaMemcpy(in.out.data(), in.c.get(), in.c.bytes(), cudaMemcpyDeviceToHost));
    const gm::Comparison r = gm::compare(in.out.data(), s, gm::kGuardFloats, in.entries);
    sw::bench::Verdict v{r.ok(), r.detail, r.rel_error, 0};
    if (v.ok)
      v.detail = sw::hopper::freivalds(in.out.data(), in.host_a.data(), in.host_bt.data(), s.m, s.n,
                                       s.k, in.seed);
    if (v.ok && !v.detail.empty()) v.ok = false;
    if (v.ok && in.input_digest() != in.digest)
      v = {false, "input changed: the step wrote into A or B", r.rel_error, 0};
    return v;
  }
  bool reseed(uint64_t s) const {
    in.reseed(s);
    return true;
  }
  uint64_t seed() const { return in.seed; }
};

// The awkward shapes of part 1 (sides odd, prime, 1; k past every tile; partial tiles on
// every side), and shapes of this chapter's tiles: one 128 x 256 tile and a bit, k not a
// multiple of 64 (the last k-tile partly zeros), an odd number of tile rows (a cluster's
// second tile past the end), more tiles than SMs (a persistent block's second tile), n a
// multiple of 4 but not of 32 (step 8's boxes of C partly or wholly outside it), more units
// than a wave of clusters with k past 8 k-tiles (step 9 cuts the last wave's units, 2 to 5
// pieces each, the last k-tile partly zeros).
inline std::vector<gm::Shape> verify_shapes() {
  std::vector<gm::Shape> out = gm::verify_shapes(gm::InputType::kBf16);
  const std::vector<gm::Shape> more = {{129, 257, 72},    {384, 512, 200}, {640, 768, 1000},
                                       {2048, 2560, 64},  {1, 1, 8},       {100, 260, 72},
                                       {2048, 2304, 1000}};
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

struct Problem {
  using Step = ch21::Step;
  static constexpr const char* kName = "gemm";

  int64_t m = gm::kDefaultSide, n = gm::kDefaultSide, k = gm::kDefaultSide;
  int64_t size = gm::kDefaultSide;
  bool large = false, sweep = false;
  // Every row is measured kRounds times, in turn (forward, then backward: cuBLASLt first
  // and last), and keeps its fastest median: the bar and the steps under the same clocks.
  static constexpr int kRounds = 2;

  void add_options(sw::Cli& cli, const sw::bench::Program<Step>&) {
    cli.add_int("--m", &m, 1, gm::kMaxSide, "rows of A and C");
    cli.add_int("--n", &n, 1, gm::kMaxSide, "rows of B, columns of C");
    cli.add_int("--k", &k, 1, gm::kMaxSide, "columns of A and B");
    cli.add_int("--size", &size, 1, gm::kMaxSide, "m = n = k (not with --m, --n, --k)");
    cli.add_flag("--large", &large, "with --verify-only: 8192^3 and 2^31 elements in one operand");
    cli.add_flag("--sweep", &sweep, "time every row at each shape of sweep.h (no shape option)");
  }
  void validate(const sw::bench::Request<Step>& asked) {
    const sw::Cli& cli = asked.cli;
    gm::validate_shape(cli, asked.opt.verify_only, large, size, &m, &n, &k);
    if (sweep && asked.opt.verify_only)
      cli.reject("--sweep times its shapes: not with --verify-only (which checks its own)");
    if (sweep && gm::shape_given(cli))
      cli.reject("--sweep has its own shapes: not with a shape option");
  }
  static void require_fits(const sw::Gpu& gpu, const gm::Shape& s) {
    const int64_t ld = (s.k + kRowAlign - 1) / kRowAlign * kRowAlign;
    const int64_t bytes = (s.m + s.n) * ld * 2 + (s.m * s.n + gm::kGuardFloats) * 4;
    sw::require_fits(gpu, "--m, --n, --k " + s.text() + ": bytes of A, B and C", bytes, 1,
                     gm::kLibraryBytes + gm::kWorkspaceBytes);
  }
  // Not sm_90a: one line, exit 77 (the GPU cannot run the chapter; nothing failed).
  static void require_sm90a(const sw::Gpu& gpu) {
    const std::string why = sm90a_missing(gpu);
    if (why.empty()) return;
    std::fprintf(stderr, "skipped: %s\n", why.c_str());
    std::exit(sw::kExitSkip);
  }
  std::vector<Step> rows(const std::vector<Step>& steps) const {
    std::vector<Step> out = {{"cublaslt", launch_cublaslt, nullptr, "vendor"}};
    out.insert(out.end(), steps.begin(), steps.end());
    return out;
  }

  void verify(const sw::bench::Session<Step>& s) const {
    require_sm90a(s.gpu);
    const std::vector<gm::Shape> shapes = large ? gm::large_shapes()
                                          : gm::shape_given(s.cli)
                                              ? std::vector<gm::Shape>{{m, n, k}}
                                              : verify_shapes();
    for (const gm::Shape& shape : shapes) require_fits(s.gpu, shape);
    for (const gm::Shape& shape : shapes) {
      const Input in(shape, static_cast<uint64_t>(s.opt.seed));
      LtPlan* plan = make_plan(in.args(s.gpu.info.sm_count, nullptr));
      for (const Step& row : rows(s.steps)) {
        const Args a = in.args(s.gpu.info.sm_count, plan);
        const sw::bench::Verdict v = sw::bench::check_once(ProductData{in}, row.launch, a);
        s.report.check(v.ok, std::string(row.name) + " " + shape.text() + " bf16", v.detail);
      }
      free_plan(plan);
    }
  }

  // The rows at one shape: measured in kRounds turns, then reported (cuBLASLt first).
  void bench_shape(const sw::bench::Session<Step>& s, const gm::Shape& shape) const {
    const Input in(shape, static_cast<uint64_t>(s.opt.seed));
    const int sms = s.gpu.info.sm_count;
    LtPlan* plan = make_plan(in.args(sms, nullptr));
    const double bytes = 2.0 * static_cast<double>((shape.m + shape.n) * shape.k) +
                         4.0 * static_cast<double>(shape.m * shape.n);
    const std::vector<Step> all = rows(s.steps);
    std::vector<sw::Result> kept(all.size());
    for (int round = 0; round < kRounds; ++round)
      for (size_t j = 0; j < all.size(); ++j) {
        const size_t i = round % 2 == 0 ? j : all.size() - 1 - j;
        const sw::bench::Row row{all[i].name,
                                 shape.madds(),
                                 bytes,
                                 1,
                                 false,
                                 all[i].role,
                                 2.0 * static_cast<double>(shape.madds())};
        const sw::Result r =
            sw::bench::measure(s.opt, row, ProductData{in}, all[i].launch, in.args(sms, plan));
        const bool faster = kept[i].ok && r.timing.ms_median < kept[i].timing.ms_median;
        if (round == 0 || !r.ok || faster) kept[i] = r;  // a failed round stays failed
      }
    for (size_t i = 0; i < all.size(); ++i) {
      sw::Result& r = kept[i];
      r.note = shape.text() + " bf16";
      r.problem = kName;
      if (all[i].more) r.extra["blocks"] = static_cast<double>(all[i].more(in.args(sms, plan)));
      if (all[i].launch == launch_cublaslt) {
        r.extra["lt_candidate"] = plan_choice(plan);
        r.extra["lt_offered"] = plan_offered(plan);
      }
      s.report.add(r);
    }
    free_plan(plan);
  }

  void bench(const sw::bench::Session<Step>& s) const {
    require_sm90a(s.gpu);
    const std::vector<gm::Shape> shapes =
        sweep ? sweep_shapes() : std::vector<gm::Shape>{{m, n, k}};
    for (const gm::Shape& shape : shapes) require_fits(s.gpu, shape);
    for (const gm::Shape& shape : shapes) bench_shape(s, shape);
  }
};

}  // namespace ch21
