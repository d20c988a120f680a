// device_query: prints the banner every chapter prints (name, SMs, memory, L2,
// theoretical and measured copy bandwidth), then the per-SM and per-block limits
// that decide how many blocks run at once. The tour runs it first and keeps its
// --json record (the "device" record) in the results file's meta.
//   build/common/device_query [--json]
#include <cstdio>

#include "device.h"
#include "report.h"

int main(int argc, char** argv) {
  sw::Cli cli("device_query",
              "The GPU's properties, its per-SM limits and its measured copy bandwidth.");
  const sw::CommonOptions opt = cli.parse_or_exit(argc, argv);
  const sw::Gpu gpu = sw::start_gpu(opt);
  const sw::DeviceInfo& d = gpu.info;
  if (!opt.json && !opt.verify_only) {
    std::printf(
        "devices visible: %d (this is device 0 unless CUDA_VISIBLE_DEVICES says otherwise)\n",
        d.device_count);
    std::printf("per SM:    %d threads, %d blocks, %d registers, %d KiB shared memory\n",
                d.max_threads_per_sm, d.max_blocks_per_sm, d.regs_per_sm,
                d.smem_per_sm_bytes / 1024);
    std::printf("per block: %d threads, %d registers, %d KiB shared memory (%d KiB opted in)\n",
                d.max_threads_per_block, d.regs_per_block, d.smem_per_block_bytes / 1024,
                d.smem_per_block_optin_bytes / 1024);
    std::printf(
        "warp %d threads; memory bus %d bits at %d MHz; SM clock %d MHz (0: not reported)\n",
        d.warp_size, d.mem_bus_bits, d.mem_clock_mhz, d.sm_clock_mhz);
  }
  return opt.verify_only || gpu.copy_gbps > 0 ? sw::kExitOk : sw::kExitFailed;
}
