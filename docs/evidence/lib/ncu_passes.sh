# Sourced by the Nsight Compute evidence scripts (20_tensor_cores.sh, 21_hopper_gemm.sh).
# ncu_passes SECTION FILTER LAUNCHES PROGRAM ARGS...: Nsight Compute on the first LAUNCHES
# launches of the kernels that FILTER matches (ncu -k), once per pass of $passes (default
# "core tensor": each the name of a variable holding that pass's metrics, so that a metric one
# version of Nsight Compute lacks costs one pass), one "## SECTION PASS" block each; the clocks
# as the GPU sets them (--clock-control none). NCU_CORE: the metrics every script's core pass
# starts from (duration, clock, instructions, registers, warps, the main stalls, issue slots).
NCU_CORE=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum
NCU_CORE+=,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
NCU_CORE+=,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct
NCU_CORE+=,smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct
NCU_CORE+=,smsp__issue_active.avg.pct_of_peak_sustained_active
ncu_passes() {
  local pass
  for pass in ${passes:-core tensor}; do
    echo "## $1 $pass"
    ncu --clock-control none --metrics "${!pass}" -k "$2" -c "$3" "${@:4}" 2>&1 |
      grep -vE "^==PROF==|^  *(Section|-----)"
  done
}
