#!/usr/bin/env bash
# Evidence for docs/16_scan.md, docs/17_stream_compaction.md and docs/18_radix_sort.md:
# compute-sanitizer (memcheck, initcheck, racecheck, synccheck) on every step of the
# scan track through the chapters' own checks, at 20,011 elements with the smallest
# tiles, so that the look-back runs between many tiles under each tool:
#   16_scan               --tile-rows 1 --block 32: one element a lane, 626 tiles
#                         (racecheck and synccheck on u32 only, for time)
#   17_stream_compaction  --tile-rows 1 --block 32: 128 elements a tile, 157 tiles,
#                         keep 0, 1, 50, 99 and 100 %
#   18_radix_sort         --tile-rows 8 --block 256: 2,048 keys a tile, 10 tiles,
#                         every key pattern, keys and pairs (steps 8 and 9, compiled for
#                         384 or 512 threads, run their own 24 x 384 tile there: 3 tiles)
#   18_radix_sort         --variant onesweep-lean-hist --tile-rows 16 --block 384: the
#                         lean pass at its smallest tile, 6,144 keys, 4 tiles
# usage: bash docs/evidence/16_sanitizer.sh <build_dir>   (a few minutes)
set -uo pipefail
build=${1:?usage: 16_sanitizer.sh <build_dir>}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export STEPWISE_POISON=outputs  # outputs poisoned, shared memory not, as under every sanitizer run (common/data.h)
runs=("16_scan --tile-rows 1 --block 32" "17_stream_compaction --tile-rows 1 --block 32"
      "18_radix_sort --tile-rows 8 --block 256"
      "18_radix_sort --variant onesweep-lean-hist --tile-rows 16 --block 384")
for run in "${runs[@]}"; do
  set -- $run
  program=$1
  shift
  for tool in memcheck initcheck racecheck synccheck; do
    extra=()
    [ "$program" = 16_scan ] && { [ "$tool" = racecheck ] || [ "$tool" = synccheck ]; } && extra=(--type u32)
    echo "# $program, $tool, --verify-only --n 20011 $* ${extra[*]}"
    "$sanitizer" --tool "$tool" --error-exitcode 7 --print-limit 4 "$build/chapters/$program" --verify-only \
      --n 20011 "$@" "${extra[@]}" 2>&1 | grep -E "SUMMARY|Error|error|hazard|FAIL|checks" | tail -6
    echo "# exit ${PIPESTATUS[0]}"
  done
done
