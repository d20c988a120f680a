#!/usr/bin/env bash
# Evidence for docs/08_histogram_privatized.md: compute-sanitizer's racecheck on
# every step of chapter 08 (the sub-histograms are zeroed, counted into and added
# up between barriers), on uniform, all-equal and 90%-one-value bytes, through the
# chapter's own exact check of each result:
#   bash docs/evidence/08_racecheck.sh <build_dir> > docs/runs/evidence/08_racecheck.txt
# A minute or two: 1,000,003 bytes at an odd offset.
set -uo pipefail
build=${1:?usage: $0 <build_dir>}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export STEPWISE_POISON=outputs  # outputs poisoned, shared memory not, as under every sanitizer run (common/data.h)
exe="$build/chapters/08_histogram_privatized"

for dist in uniform equal "mix --p 0.9"; do
  echo "# racecheck, --bytes 1000003 --offset 3 --dist $dist"
  # shellcheck disable=SC2086  # $dist holds an option and its value
  "$sanitizer" --tool racecheck --error-exitcode 7 --print-limit 4 "$exe" --bytes 1000003 --offset 3 --dist $dist \
    --reps 1 --warmup 0 2>&1 | grep -E "RACECHECK|Error|error|hazard|checks"
  echo "# exit ${PIPESTATUS[0]}"
done
