#!/usr/bin/env bash
# Evidence for docs/13_top2.md: per kernel (CUB's two, then each step's first pass,
# top2_thread_pairs / top2_shared_tree / top2_warp_shuffle / top2_shuffle_int4, and
# its second pass top2_final), the DRAM throughput, instructions executed, registers
# per thread and shared-memory bank conflicts, at 2^26 int32 (256 MiB, beyond L2).
# Each row runs once checked, then timed, so each launch appears twice.
# usage: bash docs/evidence/13_top2.sh <build_dir> [program]   (about 30 s on an H100)
set -euo pipefail
build=${1:?usage: 13_top2.sh <build_dir> [program]}
exe=${2:-$build/chapters/13_top2}
ncu --clock-control none \
  --metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,gpu__time_duration.sum \
  -k 'regex:top2_|DeviceReduce' -c 20 \
  "$exe" --n 2^26 --reps 1 --warmup 0
