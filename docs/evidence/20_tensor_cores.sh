#!/usr/bin/env bash
# Evidence for docs/20_tensor_cores.md: Nsight Compute on one launch of each step's kernel, of
# the mma-roof kernel and of cuBLAS's, at 2048^3 in bf16 (beta = 0). Two passes per kernel, so
# that a metric one version of Nsight Compute lacks costs one pass, not both: "core" (duration,
# SM clock, instructions, registers and occupancy, shared-memory bank conflicts, L2 and DRAM
# bytes, the main stall reasons, the issue slots used) and "tensor" (the tensor pipe's
# activity, ldmatrix instructions and their shared-memory wavefronts: 4 per ldmatrix.x4
# without conflicts).
# One "## <row> <pass>" section each. Every run measures the roof first and cuBLAS second:
# with --variant wmma the first kernel of each name is the one.
# usage: bash docs/evidence/20_tensor_cores.sh <build_dir>   (a few minutes on an H100)
set -uo pipefail
build=${1:?usage: 20_tensor_cores.sh <build_dir>}
exe="$build/chapters/20_tensor_cores"
. "$(dirname "$0")/lib/ncu_passes.sh"  # ncu_passes: one "## <row> <pass>" block a pass; NCU_CORE
core=$NCU_CORE,lts__t_bytes.sum,dram__bytes_read.sum
core+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
core+=,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct
tensor=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
tensor+=,smsp__inst_executed_op_ldsm.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum
run() { ncu_passes "$1" "$2" 1 "$exe" --size 2048 --reps 1 --warmup 0 "${@:3}"; }  # row, filter, args
run mma-roof 'regex:mma_roof' --variant wmma
run cublas 'regex:^(nvjet|sm[0-9]+_|cutlass)' --variant wmma
for step in wmma mma-sync mma-cp-async; do
  run "$step" "regex:gemm_${step//-/_}\$" --variant "$step"
done
for config in k64-s3 k32-s4; do
  run "mma-ahead-$config" 'regex:gemm_mma_ahead$' --variant mma-ahead --config "$config"
done
run mma-hoisted 'regex:gemm_mma_hoisted$' --variant mma-hoisted
