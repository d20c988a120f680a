#!/usr/bin/env bash
# Evidence for docs/19_sgemm.md: Nsight Compute on one launch of each step's kernel and of
# cuBLAS's, at 2048^3 (fp32, beta = 0): duration, the FMA pipe's activity, instructions and
# FFMAs, global sectors per request, shared loads and bank conflicts, registers and
# occupancy, every stall reason, the SM clock. One "## <step>" section per step and
# one "## cublas" (cuBLAS's row runs first in every run: with --variant naive, the first
# kernel whose name holds "gemm" is cuBLAS's).
# usage: bash docs/evidence/19_sgemm.sh <build_dir>   (a few minutes on an H100)
set -uo pipefail
build=${1:?usage: 19_sgemm.sh <build_dir>}
exe="$build/chapters/19_sgemm"
metrics=gpu__time_duration.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
metrics+=,smsp__inst_executed_op_shared_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,lts__t_bytes.sum,dram__bytes_read.sum
metrics+=,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,sm__cycles_elapsed.avg.per_second
# Every stall reason this GPU's Nsight Compute knows (and "selected": issued), so that they add
# up to about 100 % of a warp's cycles (step 8's first profile collected eight and left part of
# its cycles unexplained); the names come from --query-metrics, not from a list kept here.
stalls=$(ncu --query-metrics 2>/dev/null | grep -o 'smsp__warp_issue_stalled_[a-z_]*_per_warp_active' | sort -u)
[ -n "$stalls" ] || stalls=$(printf 'smsp__warp_issue_stalled_%s_per_warp_active ' barrier long_scoreboard \
  short_scoreboard mio_throttle math_pipe_throttle wait not_selected selected)  # the names known to work
for stall in $stalls; do metrics+=,$stall.pct; done
run() {  # section name, kernel filter, program arguments
  echo "## $1"
  ncu --clock-control none --metrics "$metrics" -k "$2" -c 1 "$exe" --size 2048 --reps 1 --warmup 0 "${@:3}" 2>&1 |
    grep -vE "^==PROF==|^  *(Section|-----)"
}
run cublas 'regex:gemm' --variant naive
for step in naive coalesced shared-tiles register-1d register-2d vector-transposed; do
  run "$step" "regex:sgemm_${step//-/_}" --variant "$step"
done
for config in sm90 sm80 sm75; do
  run "warp-tiled $config" 'regex:sgemm_warp_tiled' --variant warp-tiled --config "$config"
done
run cp-async 'regex:sgemm_cp_async' --variant cp-async
