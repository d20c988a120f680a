# Sourced by the Nsight Compute evidence scripts (20_tensor_cores.sh, 21_hopper_gemm.sh).
# ncu_passes SECTION FILTER LAUNCHES PROGRAM ARGS...: Nsight Compute on the first LAUNCHES
# launches of the kernels that FILTER matches (ncu -k), once per pass of $passes (default
# "core tensor": each the name of a variable holding that pass's metrics, so that a metric one
# version of Nsight Compute lacks costs one pass), one "## SECTION PASS" block each; the clocks
# as the GPU sets them (--clock-control none).
ncu_passes() {
  local pass
  for pass in ${passes:-core tensor}; do
    echo "## $1 $pass"
    ncu --clock-control none --metrics "${!pass}" -k "$2" -c "$3" "${@:4}" 2>&1 |
      grep -vE "^==PROF==|^  *(Section|-----)"
  done
}
