#!/usr/bin/env bash
# Evidence for docs/12_dot_product.md: DRAM throughput and duration of our two
# passes (dot_partials, then chapter 06's reduce_overload with one block) and of
# cuBLAS's dot kernels at 2^26 floats per vector (512 MiB read), and
# compute-sanitizer memcheck over the correctness sweep. Each row runs once checked,
# then timed, so each kernel appears twice.
# usage: bash docs/evidence/12_dot_product.sh <build_dir> [program]   (about 60 s on an H100)
set -euo pipefail
build=${1:?usage: 12_dot_product.sh <build_dir> [program]}
exe=${2:-$build/chapters/12_dot_product}
echo "== ncu: the kernel-only rows (cuBLAS first, then ours), checked run then timed run =="
ncu --clock-control none \
  --metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread \
  -k 'regex:dot|Dot|reduce|Reduce|partials' -c 8 "$exe" --n 2^26 --reps 1 --warmup 0
echo "== compute-sanitizer memcheck: --verify-only =="
export STEPWISE_POISON=outputs  # outputs poisoned, shared memory not, as under every sanitizer run (common/data.h)
compute-sanitizer --tool memcheck --error-exitcode 1 "$exe" --verify-only | tail -3
