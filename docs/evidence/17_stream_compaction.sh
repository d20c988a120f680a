#!/usr/bin/env bash
# Evidence for docs/17_stream_compaction.md: Nsight Compute on CUB's DeviceSelect::If
# and both steps' kernels at 2^26 u32 elements, keeping 1 % and 50 %: duration, DRAM
# throughput (% of peak), instructions and registers. One "## <step> keep <k>" section
# each; each launch appears twice (checked, then timed once).
# usage: bash docs/evidence/17_stream_compaction.sh <build_dir>   (about a minute)
set -uo pipefail
build=${1:?usage: 17_stream_compaction.sh <build_dir>}
exe="$build/chapters/17_stream_compaction"
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size
for keep in 0.01 0.5; do
  for step in three-pass one-pass; do
    echo "## $step keep $keep"
    ncu --clock-control none --metrics "$metrics" -k 'regex:count_tiles|scatter_tiles|compact_one_pass|scan_lookback' \
      -c 12 "$exe" --variant "$step" --keep "$keep" --n 2^26 --reps 1 --warmup 0 2>&1 | grep -vE "^==PROF==|^  *(Section|-----)"
  done
  echo "## cub keep $keep"
  ncu --clock-control none --metrics "$metrics" -k 'regex:DeviceSelect|DeviceCompact' -c 4 \
    "$exe" --variant one-pass --keep "$keep" --n 2^26 --reps 1 --warmup 0 2>&1 | grep -vE "^==PROF==|^  *(Section|-----)"
done
