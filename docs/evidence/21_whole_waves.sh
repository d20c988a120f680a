#!/usr/bin/env bash
# Evidence for docs/21_hopper_gemm.md (issue 49, step 9): is the last wave of the persistent
# grid the gap to cuBLASLt at 8192^3? tma-store and split-tail (step 8 with the last wave cut
# along k), each in its own process with cuBLASLt beside it, at the squares (8192^3: 1024 units
# of two 128 x 256 tiles on 66 clusters, 15.5 waves; 4096^3: 256 units, 3.9 waves) and at
# shapes whose units fill whole waves (8448 x 8192 x 8192: 1056 units; 4096 x 8448 x 4096: 528),
# ROUNDS rounds. One row a line: round, then the program's row.
# By hand: an A/B with an output folder of its own (not for .ci/gpu-run evidence).
# VARIANTS (default "tma-store split-tail") and SHAPES ("M N K,M N K,...", default the four
# above) choose other steps and shapes: a branch's step beside main's, in the same runs.
# usage: bash docs/evidence/21_whole_waves.sh <build_dir> <out_dir> [ROUNDS]   (about 2 minutes a round)
set -u
. "$(dirname "$0")/lib/rows_rounds.sh"
rows_setup "21_whole_waves.sh <build_dir> <out_dir> [ROUNDS]" 2 "$@"
for r in $(seq 1 "$rounds"); do
  IFS=, read -ra shapes <<< "${SHAPES:-8192 8192 8192,8448 8192 8192,4096 4096 4096,4096 8448 4096}"
  for shape in "${shapes[@]}"; do
    set -- $shape
    for v in ${VARIANTS:-tma-store split-tail}; do
      rows_run "$1x$2x$3-$v" "" "cublaslt|$v" "$build/chapters/21_hopper_gemm" --m "$1" --n "$2" --k "$3" --variant "$v"
    done
  done
done
cat "$out/rows.txt"
