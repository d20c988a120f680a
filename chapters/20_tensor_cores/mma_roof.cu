// Chapter 20's ceiling, mma-roof: mma.sync alone, on registers. What the instruction does per
// second on the GPU in the machine is the denominator of the chapter's steps, as the copy is
// for the memory-bound chapters (gm::Problem::ceiling runs it before the other rows).
#include <cstdint>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "tc.cuh"

namespace ch20 {
namespace roof {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 4;  // 32 warps an SM, 8 per scheduler
constexpr int kChains = 8;       // independent accumulators a warp: mma.sync's latency hidden
constexpr int kIters = 128;      // mma.sync a chain
constexpr int kM = kMmaM, kN = kMmaN, kK = kMmaK;  // A is kM x kK, B kK x kN
constexpr int kLargest = 3;                        // A and B: integers from -3 to 3

// Every warp loads the same 16 x 16 tile of A and 16 x 8 tile of B (row-major, in global
// memory) into mma's registers, by hand in the layout that tc.cuh's mma_16816 describes, then
// runs kChains chains of kIters mma.sync, d += a b: no memory and nothing else in the loop but
// the loop itself. Each lane writes the sums over its chains of its 4 accumulators: for its
// entries (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1) of the tile, kChains kIters
// (A B)[row][col], exact (integers below 2^24). A wrong register layout gives other sums.
template <class T>
__global__ void __launch_bounds__(kThreads)
    mma_roof_kernel(const uint16_t* __restrict__ a_tile, const uint16_t* __restrict__ b_tile,
                    float* __restrict__ out) {
  const int lane = threadIdx.x % sw::kWarp, g = lane / 4, t = lane % 4;
  auto at_a = [&](int row, int col) {  // A[row][col] and A[row][col + 1] in one register
    return static_cast<uint32_t>(a_tile[row * kK + col]) |
           static_cast<uint32_t>(a_tile[row * kK + col + 1]) << 16;
  };
  auto at_b = [&](int row, int col) {  // B[row][col] and B[row + 1][col]
    return static_cast<uint32_t>(b_tile[row * kN + col]) |
           static_cast<uint32_t>(b_tile[(row + 1) * kN + col]) << 16;
  };
  const uint32_t a[4] = {at_a(g, 2 * t), at_a(g + 8, 2 * t), at_a(g, 2 * t + 8),
                         at_a(g + 8, 2 * t + 8)};
  const uint32_t b[2] = {at_b(2 * t, g), at_b(2 * t + 8, g)};
  float d[kChains][4] = {};
#pragma unroll 4
  for (int it = 0; it < kIters; ++it)
#pragma unroll
    for (int c = 0; c < kChains; ++c) mma_16816<T>(d[c], a, b);
  float sum[4] = {};
#pragma unroll
  for (int c = 0; c < kChains; ++c)
#pragma unroll
    for (int e = 0; e < 4; ++e) sum[e] += d[c][e];
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  reinterpret_cast<float4*>(out)[thread] = make_float4(sum[0], sum[1], sum[2], sum[3]);
}

// What the launcher gets: the tiles, the output (4 floats a thread), the type, the grid.
struct Roof {
  const uint16_t* a;
  const uint16_t* b;
  float* out;
  gm::InputType type;
  int blocks;
};

void launch_mma_roof(const Roof& r) {
  const auto kernel =
      r.type == gm::InputType::kBf16 ? mma_roof_kernel<__nv_bfloat16> : mma_roof_kernel<__half>;
  kernel<<<r.blocks, kThreads>>>(r.a, r.b, r.out);
  CHECK_LAUNCH();
}

// The roof's data as bench::measure sees it: the two tiles (small integers from the seed, so
// every sum is exact), the output, poisoned before every run, and the sums each lane must write.
struct RoofData {
  gm::InputType type;
  int blocks;
  sw::DeviceBuffer<uint16_t> a{kM * kK}, b{kK * kN};
  sw::DeviceBuffer<float> out;
  mutable uint64_t seed_ = 0;
  mutable std::vector<double> product;  // A B, 16 x 8

  RoofData(gm::InputType t, int blocks_, uint64_t s) : type(t), blocks(blocks_) {
    out.allocate(static_cast<int64_t>(blocks) * kThreads * 4);
    reseed(s);
  }
  Roof roof() const { return {a.get(), b.get(), out.get(), type, blocks}; }
  void poison() const { sw::poison(out.get(), out.bytes()); }
  uint64_t seed() const { return seed_; }
  bool reseed(uint64_t s) const {
    seed_ = s;
    std::vector<int> av(kM * kK), bv(kK * kN);
    std::vector<uint16_t> bits(kM * kK);
    auto draw = [&](std::vector<int>& v, uint64_t stream) {
      for (size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<int>(sw::random_bits(sw::mix64(s) ^ stream, i) % (2 * kLargest + 1)) -
               kLargest;
        bits[i] = gm::half_bits(type, static_cast<float>(v[i]));  // exact in bf16 and fp16
      }
    };
    draw(av, 1);
    CUDA_CHECK(cudaMemcpy(a.get(), bits.data(), a.bytes(), cudaMemcpyHostToDevice));
    draw(bv, 2);
    CUDA_CHECK(cudaMemcpy(b.get(), bits.data(), b.bytes(), cudaMemcpyHostToDevice));
    product.assign(kM * kN, 0.0);
    for (int i = 0; i < kM; ++i)
      for (int j = 0; j < kN; ++j)
        for (int p = 0; p < kK; ++p) product[i * kN + j] += av[i * kK + p] * bv[p * kN + j];
    return true;
  }
  sw::bench::Verdict check() const {
    std::vector<float> got(out.count());
    CUDA_CHECK(cudaMemcpy(got.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < out.count(); ++i) {
      const int lane = static_cast<int>(i / 4 % sw::kWarp), e = static_cast<int>(i % 4);
      const int row = lane / 4 + 8 * (e / 2), col = 2 * (lane % 4) + e % 2;
      const double want = static_cast<double>(kChains) * kIters * product[row * kN + col];
      if (got[i] != want)
        return {false, sw::print_text("thread %lld, entry (%d, %d): got %.9g, want %.9g", i / 4,
                                      row, col, got[i], want)};
    }
    return {};
  }
};

}  // namespace roof

void mma_roof(const sw::bench::Session<gm::Step>& s, gm::InputType type) {
  using namespace roof;
  const std::string missing = gm::sm80_missing(s.gpu);
  if (!missing.empty()) return s.report.skip("mma-roof", missing);
  const RoofData data(type, s.gpu.info.sm_count * kBlocksPerSm, static_cast<uint64_t>(s.opt.seed));
  const std::string what = std::string("mma.sync m16n8k16 ") + gm::type_name(type);
  if (s.opt.verify_only) {
    const sw::bench::Verdict v = sw::bench::check_once(data, launch_mma_roof, data.roof());
    return s.report.check(v.ok, "mma-roof " + what, v.detail);
  }
  const double mmas = static_cast<double>(data.blocks) * (kThreads / sw::kWarp) * kChains * kIters;
  const sw::bench::Row row{"mma-roof",
                           static_cast<int64_t>(mmas) * kM * kN * kK,
                           0,
                           1,
                           false,
                           "ceiling",
                           2.0 * kM * kN * kK * mmas};
  sw::Result r = sw::bench::measure(s.opt, row, data, launch_mma_roof, data.roof());
  r.note = what + ", registers only";
  r.problem = "mma-roof";
  s.report.add(r);
}

}  // namespace ch20
