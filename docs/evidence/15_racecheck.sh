#!/usr/bin/env bash
# Evidence for docs/15_many_bins_histogram.md: compute-sanitizer's racecheck on the
# shared-memory steps (zeroing, counting, the flushes and the rows all share one
# block's memory between barriers), each on uniform, all-equal and 90%-one-value
# inputs, through the chapter's own check of the result:
#   bash docs/evidence/15_racecheck.sh <build_dir> > docs/runs/evidence/15_racecheck.txt
# A few minutes: 100,003 values (racecheck watches every shared-memory access).
set -uo pipefail
build=${1:?usage: $0 <build_dir>}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export STEPWISE_POISON=outputs  # outputs poisoned, shared memory not, as under every sanitizer run (common/data.h)
exe="$build/chapters/15_many_bins_histogram"

for run in "shared32 256" "packed16 65536" "packed16-batch 65536" "packed16-hot 65536" "partition 1048576"; do
  set -- $run
  for dist in uniform equal "mix --p 0.9"; do
    echo "# racecheck, --variant $1 --bins $2 --dist $dist --n 100003"
    # shellcheck disable=SC2086  # $dist holds an option and its value
    "$sanitizer" --tool racecheck --error-exitcode 7 --print-limit 4 "$exe" --variant "$1" --bins "$2" --dist $dist \
      --n 100003 --reps 1 --warmup 0 2>&1 | grep -E "RACECHECK|Error|error|hazard|checks" | tail -6
    echo "# exit ${PIPESTATUS[0]}"
  done
done
