#!/usr/bin/env bash
# Evidence for docs/06_reduce_thread_overload.md: compute-sanitizer's racecheck on
# every step of chapter 06 (the last-block and PDL steps included) and on the
# classic two-fence last block, through the chapter's own checks:
#   bash docs/evidence/06_racecheck.sh <build_dir> > docs/runs/evidence/06_racecheck.txt
# Under a minute: 1,000,003 and 4,099 floats, every block size of --verify-only.
set -uo pipefail
build=${1:?usage: $0 <build_dir>}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export STEPWISE_POISON=outputs  # outputs poisoned, shared memory not, as under every sanitizer run (common/data.h)
exe="$build/chapters/06_reduce_thread_overload"

for n in 1000003 4099; do
  echo "# racecheck, --verify-only --n $n"
  # The chapter's verdicts, then racecheck's summary (its hazards, if any, above it).
  "$sanitizer" --tool racecheck --error-exitcode 7 --print-limit 4 "$exe" --verify-only --n "$n" 2>&1 | tail -12
  echo "# exit ${PIPESTATUS[0]}"
  echo
done
