// Chapter 16's check of warp_inclusive_scan on 64-bit values (part of the program 16_scan,
// run by --verify-only beside the status protocol's check). The scans of this chapter
// hand the warp scan 32-bit values only, but chapters 17 and 18 scan 64-bit counts with
// it, where a count passes 2^32 only past 2^32 keys (the large suite). A warp scan that
// drops a 64-bit value's high word shows it in no u32 or f32 scan; here every lane's value lies past 2^32 and its low word near 2^32, so the high
// words and the carries out of the low words both count. Planted (--planted
// warp-scan-32): the warp scan of the values' low words, widened, which must fail.
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench/protocol.h"
#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/device.h"
#include "common/report.h"
#include "scan_lookback.cuh"

namespace warp_scan_check {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * sw::kWarp;
constexpr uint64_t kLowWord = 0xFFFFFF00u;  // a carry out of the low word every few lanes

// Thread i's value: (i + 1) * 2^33 above a low word near 2^32.
__host__ __device__ uint64_t lane_value(int i) {
  return (uint64_t(i + 1) << 33) + kLowWord + static_cast<uint64_t>(i);
}

template <bool kPlanted>
__global__ void __launch_bounds__(kThreads) warp_scan_u64(uint64_t* out) {
  const uint64_t v = lane_value(threadIdx.x);
  out[threadIdx.x] =
      kPlanted ? ch16::warp_inclusive_scan(static_cast<uint32_t>(v)) : ch16::warp_inclusive_scan(v);
}

// The run as the protocol's check_once sees it: the output poisoned before, each lane's
// sum against the CPU's, exactly.
struct WarpScanData {
  uint64_t* out;
  void poison() const { CUDA_CHECK(cudaMemset(out, 0xFF, kThreads * sizeof(uint64_t))); }
  sw::bench::Verdict check() const {
    const std::vector<uint64_t> got = sw::read(out, kThreads);
    uint64_t sum = 0;
    for (int i = 0; i < kThreads; ++i) {
      sum = (i % sw::kWarp ? sum : 0) + lane_value(i);
      if (got[i] != sum)
        return {false, "out[" + std::to_string(i) + "]: got " + std::to_string(got[i]) + ", want " +
                           std::to_string(sum) + " (lane " + std::to_string(i % sw::kWarp) +
                           "'s inclusive sum)"};
    }
    return {};
  }
  std::vector<sw::bench::Buffer> outputs() const { return {{out, kThreads * sizeof(uint64_t)}}; }
};

template <bool kPlanted>
void launch_warp_scan_u64(const WarpScanData& d) {
  warp_scan_u64<kPlanted><<<1, kThreads>>>(d.out);
  CHECK_LAUNCH();
}

}  // namespace
}  // namespace warp_scan_check

// planted: the 32-bit scan of the low words (the check must fail).
void check_warp_scan_u64(sw::Report& report, bool planted) {
  using namespace warp_scan_check;  // the portable build compiles 16_scan as one file
  sw::DeviceBuffer<uint64_t> out(kThreads);
  const WarpScanData data{out.get()};
  const sw::bench::Verdict v = sw::bench::check_once(
      data, planted ? launch_warp_scan_u64<true> : launch_warp_scan_u64<false>, data);
  report.check(v.ok,
               "warp-shuffle u64 warp_inclusive_scan of " + std::to_string(kWarps) +
                   " warps, every value past 2^32" +
                   (planted ? " (planted: a 32-bit scan of the low words)" : ""),
               v.detail);
}
