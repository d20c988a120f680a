// Evidence for docs/16 (issue 46, the u32/f32 gap on the H200): does a copy's speed depend on
// the bytes it moves? Every chapter's "% of copy" divides by one measured copy: 1 GiB of the
// byte 0x01 copied device to device (sw::measure_copy_gbps, common/device.cu). Chapter 16's
// u32 rows move random 32-bit words (sw::fill_ints) and its f32 rows chapter 06's floats
// (sw::fill_floats), and its u32 rows trail its f32 rows at every tile. This probe times
// the ceiling's copy itself (sw::copy_gbps, the function the ceiling uses: CUDA events,
// 3 warm-up runs left out, the median of 20) over 1 GiB filled four ways, the ceiling's
// 0x01 bytes, zeros, chapter 16's u32 inputs and its f32 inputs, ROUNDS times in turn, and
// beside each the board's power and the SM clock over a window of at least 0.25 s of the
// same copies (sw::power_window). Decimal GB/s of the 2 GiB that one copy reads and writes.
// usage: bash docs/evidence/16_copy_data.sh <build_dir> [ROUNDS]
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "common/check.h"
#include "common/data.h"
#include "common/device.h"
#include "common/gpu_sensors.h"

namespace {

constexpr size_t kBytes = sw::kCopyBytes;  // the ceiling's 1 GiB each way
constexpr int64_t kWords = kBytes / 4;
constexpr uint64_t kSeed = 42;  // the chapters' default seed
constexpr int kMaxRounds = 20;

enum class Fill { kCeiling, kZeros, kU32, kF32 };
constexpr Fill kFills[] = {Fill::kCeiling, Fill::kZeros, Fill::kU32, Fill::kF32};

const char* name(Fill f) {
  switch (f) {
    case Fill::kCeiling:
      return "bytes-0x01";
    case Fill::kZeros:
      return "zeros";
    case Fill::kU32:
      return "u32-random";
    case Fill::kF32:
      return "f32-ch06";
  }
  return "?";
}

void fill(void* src, Fill f) {
  switch (f) {
    case Fill::kCeiling:
      CUDA_CHECK(cudaMemset(src, 1, kBytes));
      break;
    case Fill::kZeros:
      CUDA_CHECK(cudaMemset(src, 0, kBytes));
      break;
    case Fill::kU32:
      sw::fill_ints(static_cast<int32_t*>(src), kWords, kSeed);
      break;
    case Fill::kF32:
      sw::fill_floats(static_cast<float*>(src), kWords, kSeed);
      break;
  }
  CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace

int main(int argc, char** argv) {
  long rounds = 3;
  char* end = nullptr;
  if (argc == 2) rounds = std::strtol(argv[1], &end, 10);
  if (argc > 2 || (argc == 2 && (*end != '\0' || rounds < 1 || rounds > kMaxRounds))) {
    std::fprintf(stderr, "usage: 16_copy_data [ROUNDS]: ROUNDS from 1 to %d (default 3)\n",
                 kMaxRounds);
    return 2;
  }
  void *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, kBytes));
  CUDA_CHECK(cudaMalloc(&dst, kBytes));
  const sw::CommonOptions opt;  // 3 warm-up runs, the median of 20
  std::printf("round data           GB/s      W   SM_MHz\n");
  for (long r = 1; r <= rounds; ++r) {
    for (Fill f : kFills) {
      fill(src, f);
      const double gbps = sw::copy_gbps(opt, dst, src);
      const sw::PowerWindow p = sw::power_window(
          [&] { CUDA_CHECK(cudaMemcpyAsync(dst, src, kBytes, cudaMemcpyDeviceToDevice)); });
      std::printf("%5ld %-11s %7.1f %6.0f %8.0f\n", r, name(f), gbps, p.power_w, p.sm_clock_mhz);
    }
  }
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  return 0;
}
