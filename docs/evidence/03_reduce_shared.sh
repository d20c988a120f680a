#!/usr/bin/env bash
# Evidence for the reduction track, captured with Nsight Compute on the GPU machine:
#   bash docs/evidence/03_reduce_shared.sh <build_dir> > docs/runs/evidence/03_reduce_shared.txt
# Each block profiles the FIRST pass of one kernel over 2^24 floats (65536 blocks
# of 256 threads), run through --verify-only so nothing else is launched first.
# Every step's kernel is named after its row: sequential -> reduce_sequential.
#   1. chapter 03: branch uniformity, active threads per instruction and shared-
#      memory bank conflicts of the three addressing schemes (docs/03).
#   2. chapter 02 against chapter 03's sequential scheme: bytes through L1 and
#      DRAM, global tree against shared tree (docs/02).
#   3. chapter 04: static against dynamic shared memory at 256 threads: nearly the same
#      instructions, only the launch's shared-memory split differs (docs/04).
# About 30 s on an H100.
set -euo pipefail
build=${1:?usage: $0 <build_dir>}
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
ch02="$build/chapters/02_reduce_global"
ch03="$build/chapters/03_reduce_shared"
ch04="$build/chapters/04_reduce_dynamic_shared"
small=(--verify-only --n 2^24)

# Runs ncu on the first launch of the kernels matching $1 and prints the kernel
# line and the metric lines (everything, if that filter finds nothing).
profile() {
  local kernel=$1 metrics=$2 out kept
  shift 2
  out=$("$ncu" --clock-control none --metrics "$metrics" -k "regex:$kernel" -c 1 "$@" 2>&1) || true
  kept=$(grep -E '^  [^ =].*\(|^    [a-z0-9_]+__' <<<"$out" || true)
  if [ -n "$kept" ]; then echo "$kept"; else grep -vE '^(PASS|FAIL) ' <<<"$out"; fi
}

echo "# 1. Chapter 03: three addressing schemes of the shared-memory tree"
m1=smsp__sass_average_branch_targets_threads_uniform.pct
m1+=,smsp__thread_inst_executed_per_inst_executed.ratio
m1+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
m1+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
m1+=,smsp__inst_executed.sum,gpu__time_duration.sum
for v in interleaved-modulo interleaved-strided sequential; do
  echo "## $v"
  profile "reduce_${v//-/_}" "$m1" "$ch03" "${small[@]}" --variant "$v"
done

echo
echo "# 2. Global tree (chapter 02) against shared tree (chapter 03, sequential)"
m2=l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum
m2+=,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
echo "## 02 global-in-place"
profile reduce_global_in_place "$m2" "$ch02" "${small[@]}" --block 256
echo "## 03 sequential"
profile reduce_sequential "$m2" "$ch03" "${small[@]}" --variant sequential

echo
echo "# 3. Chapter 04: static against dynamic shared memory, 256 threads"
m3=smsp__inst_executed.sum,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic
m3+=,gpu__time_duration.sum
echo "## static-shared"
profile reduce_static_shared "$m3" "$ch04" "${small[@]}" --block 256
echo "## dynamic-shared"
profile reduce_dynamic_shared "$m3" "$ch04" "${small[@]}" --block 256
