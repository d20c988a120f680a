#!/usr/bin/env bash
# Evidence for docs/16_scan.md (issue 46's H200 scan goal): do chapter 16's u32 rows trail its
# f32 rows because of their place in the process? Per round, lookback-l2-prefetch at 4 x 256
# and n = 2^28 with CUB beside it: --type all (u32 first, then f32), then each type alone in
# its own process, u32 then f32, then f32 then u32. One row a line: round, the arrangement,
# then the program's row.
# By hand: an A/B with an output folder of its own (not for .ci/gpu-run evidence).
# usage: bash docs/evidence/16_scan_order.sh <build_dir> <out_dir> [ROUNDS]   (about 20 s a round)
set -u
. "$(dirname "$0")/lib/rows_rounds.sh"
rows_setup "16_scan_order.sh <build_dir> <out_dir> [ROUNDS]" 3 "$@"
run() {  # <arrangement> <type>
  rows_run "$1" "$1" "cub|lookback-l2-prefetch" "$build/chapters/16_scan" --n 268435456 \
    --variant lookback-l2-prefetch --tile-rows 4 --block 256 --type "$2"
}
for r in $(seq 1 "$rounds"); do
  run all all; run alone-u32-first u32; run alone-f32-second f32; run alone-f32-first f32; run alone-u32-second u32
done
cat "$out/rows.txt"
