#!/usr/bin/env bash
# Evidence for docs/18_radix_sort.md: Nsight Compute on CUB's DeviceRadixSort and both
# steps' kernels, 2^26 random u32 keys (keys only): duration, DRAM throughput (% of
# peak), instructions, registers, shared memory per block. One "## <step>" section each
# and "## cub"; each launch appears twice (checked, then timed once).
# usage: bash docs/evidence/18_radix_sort.sh <build_dir>   (about a minute)
set -uo pipefail
build=${1:?usage: 18_radix_sort.sh <build_dir>}
exe="$build/chapters/18_radix_sort"
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__shared_mem_per_block_dynamic
for step in three-kernel onesweep; do
  echo "## $step"
  ncu --clock-control none --metrics "$metrics" -k 'regex:histogram_|scatter_tiles|scan_lookback|digit_bases|onesweep_pass' \
    -c 30 "$exe" --variant "$step" --sort keys --n 2^26 --reps 1 --warmup 0 2>&1 | grep -vE "^==PROF==|^  *(Section|-----)"
done
echo "## cub"
ncu --clock-control none --metrics "$metrics" -k 'regex:DeviceRadixSort' -c 20 \
  "$exe" --variant onesweep --sort keys --n 2^26 --reps 1 --warmup 0 2>&1 | grep -vE "^==PROF==|^  *(Section|-----)"
