#!/usr/bin/env bash
# What one checked run of the gemm track costs, and where: on one GPU,
#   bash docs/evidence/labs_gemm_run_costs.sh <build_dir> > docs/runs/evidence/labs_gemm_run_costs.txt
# Why: in the gemm self-test on two H200s (session 63, docs/runs/labs/nvidia-h200/README.md) a
# judge run (the reference program with --check-outputs) took 12 s on average, also at 67 x 1 x
# 2049, a product of 137,283 multiply-adds; a scan judge took 3.7 s. Each checked run crosses
# the grader's boundary: the submission's program with --dump-outputs DIR, then the reference
# program with --check-outputs DIR (here the same program twice). The shapes are the grader's:
# the hidden example's cases and the repeats' shape (chapters/labs/tasks.py).
#   0. the cuBLAS libraries the program links, and what loading them alone costs;
#   1. alone: wall, user and system CPU seconds (bash's time) of the dump and of its check, for
#      the smallest product (1 x 1 x 1: what a process costs before any work), the grader's
#      cases, the chapter's own sweep and the repeats' --repeat 10; then the smallest product
#      with CUDA's eager module loading (CUDA_MODULE_LOADING=EAGER: every kernel of the program
#      loaded at the start), to see what loading the program's kernels costs;
#   2. side by side: k pairs (dump, then check) at once of the 67 x 1 x 2049 case, k = 1, 4, 12
#      (the grader runs up to 12 checks at once): the wall seconds of all of them.
# The dumps go to ./dumps, removed at the end. A few minutes on an H200.
set -uo pipefail
build=${1:?usage: $0 <build_dir>}
M="$build/chapters"
D=$PWD/dumps
S=(--verify-only --json --seed 42)
TIMEFORMAT="%R %U %S"
mkdir -p "$D"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader | head -1
echo "cores $(nproc)"
echo "# label  side  wall user sys (seconds)  records ok  bytes dumped"
. "$(dirname "$0")/lib/boundary_runs.sh"  # one, both: a checked run across the boundary, timed
echo "== 0. the libraries a gemm program loads, and loading cuBLAS alone (python3 with and without it)"
ldd "$M/19_sgemm" | awk '/cublas|cudart|nvml/ {print $1, $3}'
lib=$(ldd "$M/19_sgemm" | awk '/libcublas\.so/ {print $3}')
echo "python3 alone: $({ time python3 -c 'pass'; } 2>&1)"
echo "python3 loading $lib: $({ time python3 -c "import ctypes; ctypes.CDLL('$lib')"; } 2>&1)"
echo "== 1. alone"
V=(--variant shared-tiles)
both 19-1x1x1 "$M/19_sgemm" "${S[@]}" "${V[@]}" --m 1 --n 1 --k 1
both 19-67x1x2049 "$M/19_sgemm" "${S[@]}" "${V[@]}" --m 67 --n 1 --k 2049
both 19-1031x517x333 "$M/19_sgemm" "${S[@]}" "${V[@]}" --m 1031 --n 517 --k 333
both 19-sweep "$M/19_sgemm" "${S[@]}" "${V[@]}"
both 19-2047x2049x127-repeat10 "$M/19_sgemm" "${S[@]}" "${V[@]}" --m 2047 --n 2049 --k 127 --repeat 10
both 20-1x1x1 "$M/20_tensor_cores" "${S[@]}" --m 1 --n 1 --k 1
both 20-67x1x2049 "$M/20_tensor_cores" "${S[@]}" --m 67 --n 1 --k 2049
CUDA_MODULE_LOADING=EAGER both 19-1x1x1-eager "$M/19_sgemm" "${S[@]}" "${V[@]}" --m 1 --n 1 --k 1
CUDA_MODULE_LOADING=EAGER both 20-1x1x1-eager "$M/20_tensor_cores" "${S[@]}" --m 1 --n 1 --k 1
echo "== 2. side by side: k pairs at once of 19_sgemm ${V[*]} --m 67 --n 1 --k 2049, wall seconds"
for k in 1 4 12; do
  start=$(date +%s.%N)
  for j in $(seq 1 "$k"); do
    (mkdir -p "$D/k$k-$j"
     "$M/19_sgemm" "${S[@]}" "${V[@]}" --m 67 --n 1 --k 2049 --dump-outputs "$D/k$k-$j" > /dev/null 2>&1
     "$M/19_sgemm" "${S[@]}" "${V[@]}" --m 67 --n 1 --k 2049 --check-outputs "$D/k$k-$j" > "$D/k$k-$j.out" 2>&1) &
  done
  wait
  echo "k=$k: $(awk "BEGIN{print $(date +%s.%N) - $start}") s, judged ok $(cat "$D"/k"$k"-*.out | grep -c '"ok":true')"
  rm -rf "${D:?}"/k"$k"-*
done
rm -rf "$D"
