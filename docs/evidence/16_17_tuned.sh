#!/usr/bin/env bash
# Evidence for docs/16_scan.md and docs/17_stream_compaction.md (issue 46): Nsight Compute at
# the tuned tiles and n = 2^28 (1 GiB of u32, 20x the L2), each last step and the one before
# it beside CUB's kernel: duration, DRAM throughput and bytes, L2 write sectors, registers,
# the occupancy limits and the warps an SM actually held, instructions, and the warp stall
# reasons (WarpStateStats). Scan, inclusive: lookback-lean (u32) and lookback-l2-prefetch (u32
# and f32: on the H200 our u32 rows trail our f32 rows where CUB's do not) at each step's own
# tile, CUB's kernel for each type. Compaction at keep 1 %, 50 % and 99 %: one-pass-backoff and
# one-pass-l2-prefetch at 8 x 256, CUB.
# usage: bash docs/evidence/16_17_tuned.sh <build_dir>   (about two minutes on an H100)
set -uo pipefail
build=${1:?usage: 16_17_tuned.sh <build_dir>}
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,sm__warps_active.avg.per_cycle_active,smsp__inst_executed.sum
profile() {  # <kernel regex> <program> <args...>: the first timed launch of the kernel
  local kernels=$1; shift
  ncu --clock-control none --metrics "$metrics" --section WarpStateStats -k "regex:$kernels" -s 1 -c 1 \
    "$@" --n 2^28 --reps 1 --warmup 0 2>&1 | grep -vE "^==PROF==|^  *(-----)|^    ---|^[A-Za-z#]|^$"
}
scan="$build/chapters/16_scan"
echo "## 16 lookback-lean own tile u32 inclusive"
profile "scan_lookback" "$scan" --variant lookback-lean --type u32
for type in u32 f32; do
  echo "## 16 lookback-l2-prefetch own tile $type inclusive"
  profile "scan_lookback" "$scan" --variant lookback-l2-prefetch --type $type
  echo "## 16 cub $type inclusive"
  profile "DeviceScanKernel" "$scan" --variant lookback-lean --type $type
done
compact="$build/chapters/17_stream_compaction"
for keep in 0.01 0.5 0.99; do
  for step in one-pass-backoff one-pass-l2-prefetch; do
    echo "## 17 $step 8x256 keep $keep"
    profile "compact_one_pass" "$compact" --variant $step --keep $keep --tile-rows 8 --block 256
  done
  echo "## 17 cub keep $keep"
  profile "DeviceSelectSweep" "$compact" --variant one-pass-lean --keep $keep --tile-rows 8 --block 256
done
