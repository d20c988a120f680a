#!/usr/bin/env bash
# Evidence for docs/21_hopper_gemm.md: Nsight Compute on one launch of each step's kernel and
# on cuBLASLt's, at 4096^3 in bf16 (the goal's shape; beta = 0), or at SIZE^3 (its second
# argument; 8192 is the goal's other shape). Two passes per kernel, so that
# a metric one version of Nsight Compute lacks costs one pass, not both: "core" (duration, SM
# clock, instructions, registers and warps, L2 hit rate and bytes, DRAM bytes, the main stall
# reasons, the issue slots used) and "tensor" (the tensor pipe's activity under wgmma, the
# shared-memory bytes read, the bf16 tensor operations).
# One "## <row> <pass>" section each. cuBLASLt's row is every launch of its plan (the
# heuristic's candidates, each timed once untimed and five times, then the chosen one in the
# timed runs: chapters/21_hopper_gemm/cublaslt.cu), at most 64 launches: its fastest launch is
# the kernel the chapter compares with, and the first line says which candidate the plan chose.
# usage: bash docs/evidence/21_hopper_gemm.sh <build_dir> [SIZE]   (a few minutes on an H100 or H200)
#        the STEPS variable (default: every step) lists the steps to profile beside cuBLASLt
set -uo pipefail
build=${1:?usage: 21_hopper_gemm.sh <build_dir> [SIZE]}
size=${2:-4096}
exe="$build/chapters/21_hopper_gemm"
. "$(dirname "$0")/lib/ncu_passes.sh"  # ncu_passes: one "## <row> <pass>" block a pass; NCU_CORE
core=$NCU_CORE,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
core+=,smsp__warp_issue_stalled_membar_per_warp_active.pct,smsp__warp_issue_stalled_sleeping_per_warp_active.pct
tensor=sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
tensor+=,sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_active  # the name this ncu lists
tensor+=,sm__inst_executed_pipe_tensor_op_gmma.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
tensor+=,sm__ops_path_tensor_src_bf16_dst_fp32.sum
run() { ncu_passes "$1" "$2" "$3" "$exe" --size "$size" --reps 1 --warmup 0 "${@:4}"; }  # row, filter, launches, args
echo "# cuBLASLt's plan at $size^3: $($exe --size "$size" --variant clusters --reps 1 --warmup 0 --json 2>/dev/null |
  grep -o '"lt_\(candidate\|offered\)": *[0-9.]*' | head -2 | tr '\n' ' ')(candidate k of the offered, 1 first)"
# The tensor-pipe metrics this Nsight Compute offers (the gmma cycles metric above came back
# n/a from one version): their names, for the next edit of this list.
echo "# ncu's tensor-pipe metrics: $(ncu --query-metrics 2>/dev/null | awk '/^sm__pipe_tensor.*(gmma|cycles_active)/ {print $1}' | tr '\n' ' ')"
run cublaslt 'regex:^(nvjet|sm[0-9]+_|cutlass)' 64 --variant clusters
for step in ${STEPS:-tma-wgmma bigger-tile warp-specialized in-flight persistent clusters ping-pong tma-store split-tail}; do
  run "$step" "regex:gemm_${step//-/_}\$" 1 --variant "$step"
done
