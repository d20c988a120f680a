#!/usr/bin/env bash
# Evidence for docs/16_scan.md and docs/17_stream_compaction.md (issue 46): Nsight Compute at
# the tuned tiles and n = 2^28 (1 GiB of u32, 20x the L2), each best step beside CUB's kernel
# in the same process: duration, DRAM throughput and bytes, L2 write sectors, registers,
# the occupancy limits and the warps an SM actually held, instructions, and the warp stall
# reasons (WarpStateStats). Scan: lookback-lean 6x128 and lookback-vec 8x256, u32
# inclusive. Compaction: one-pass-lean 8x256 at keep 1 %, 50 % and 99 %.
# Each step runs once checked, then timed once: each kernel appears twice.
# usage: bash docs/evidence/16_17_tuned.sh <build_dir>   (about two minutes on an H100)
set -uo pipefail
build=${1:?usage: 16_17_tuned.sh <build_dir>}
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,sm__warps_active.avg.per_cycle_active,smsp__inst_executed.sum
profile() {  # <kernel regex> <program> <args...>
  local kernels=$1; shift
  ncu --clock-control none --metrics "$metrics" --section WarpStateStats -k "regex:$kernels" -c 8 \
    "$@" --n 2^28 --reps 1 --warmup 0 2>&1 | grep -vE "^==PROF==|^  *(-----)|^    ---"
}
echo "## 16 lookback-lean 6x128 (its own tile) u32 inclusive"
profile "scan_lookback|DeviceScanKernel" "$build/chapters/16_scan" --variant lookback-lean --type u32
echo "## 16 lookback-vec 8x256 u32 inclusive"
profile "scan_lookback|DeviceScanKernel" "$build/chapters/16_scan" --variant lookback-vec --type u32 \
  --tile-rows 8 --block 256
for keep in 0.01 0.5 0.99; do
  echo "## 17 one-pass-lean 8x256 keep $keep"
  profile "one_pass|DeviceSelect|DeviceCompact" "$build/chapters/17_stream_compaction" \
    --variant one-pass-lean --keep $keep --tile-rows 8 --block 256
done
