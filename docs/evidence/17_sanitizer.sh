#!/usr/bin/env bash
# Evidence for docs/17_stream_compaction.md: compute-sanitizer on both steps through
# the chapter's checks (keep 0 %, 1 %, 50 %, 99 %, 100 %) with the tiny tile
# (--tile-rows 1 --block 32: 128 elements, so 20,011 elements make 157 tiles).
# usage: bash docs/evidence/17_sanitizer.sh <build_dir>   (a few minutes)
set -uo pipefail
build=${1:?usage: 17_sanitizer.sh <build_dir>}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
exe="$build/chapters/17_stream_compaction"
for tool in memcheck initcheck racecheck synccheck; do
  echo "# $tool, --verify-only --n 20011 --tile-rows 1 --block 32"
  "$sanitizer" --tool "$tool" --error-exitcode 7 --print-limit 4 "$exe" --verify-only --n 20011 --tile-rows 1 \
    --block 32 2>&1 | grep -E "SUMMARY|Error|error|hazard|FAIL|checks" | tail -6
  echo "# exit ${PIPESTATUS[0]}"
done
