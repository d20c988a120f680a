#!/usr/bin/env bash
# Evidence for docs/05_reduce_unrolled.md: compute-sanitizer's racecheck on the
# volatile last warp (the anti-example) and on the __syncwarp one, on the GPU:
#   bash docs/evidence/05_reduce_unrolled.sh <build_dir> > docs/runs/evidence/05_reduce_unrolled.txt
# A few seconds: 4099 floats, 9 blocks of 256 threads in the first pass.
set -uo pipefail
build=${1:?usage: $0 <build_dir>}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export STEPWISE_POISON=outputs  # outputs poisoned, shared memory not, as under every sanitizer run (common/data.h)
exe="$build/chapters/05_reduce_unrolled"
small=(--verify-only --n 4099 --block 256)

for v in volatile-warp syncwarp; do
  echo "# racecheck, --variant $v"
  # The first reports and the summary; the addresses and the source lines name
  # the racing accesses (-lineinfo is on in every build).
  "$sanitizer" --tool racecheck --print-limit 4 "$exe" "${small[@]}" --variant "$v" 2>&1 |
    grep -vE '^(PASS|FAIL) ' | sed -n '1,60p'
  echo
done
