#!/usr/bin/env bash
# Evidence for docs/16_scan.md: Nsight Compute on each step's kernels and CUB's, u32
# inclusive at 2^26 elements (256 MiB, beyond L2): duration, DRAM throughput (% of
# peak), instructions, registers, and shared-memory bank conflicts (Blelloch's tree
# with and without padding). One "## <step>" section per step; each step runs once
# checked, then timed once, so each of its kernels appears twice.
# usage: bash docs/evidence/16_scan.sh <build_dir>   (about a minute on an H100)
set -uo pipefail
build=${1:?usage: 16_scan.sh <build_dir>}
exe="$build/chapters/16_scan"
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
for step in hillis-steele blelloch blelloch-padded warp-shuffle reduce-then-scan decoupled-lookback lookback-vec; do
  echo "## $step"
  ncu --clock-control none --metrics "$metrics" -k 'regex:scan_|reduce_tiles|add_offsets' -c 12 \
    "$exe" --variant "$step" --type u32 --n 2^26 --reps 1 --warmup 0 2>&1 | grep -vE "^==PROF==|^  *(Section|-----)"
done
echo "## cub"
ncu --clock-control none --metrics "$metrics" -k 'regex:DeviceScan' -c 4 \
  "$exe" --variant lookback-vec --type u32 --n 2^26 --reps 1 --warmup 0 2>&1 | grep -vE "^==PROF==|^  *(Section|-----)"
