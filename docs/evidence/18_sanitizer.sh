#!/usr/bin/env bash
# Evidence for docs/18_radix_sort.md: compute-sanitizer on both steps through the
# chapter's checks (every key pattern, keys and pairs) at 20,011 keys with the
# smallest tile (--tile-rows 8 --block 256: 2,048 keys, so 10 tiles, each digit's
# look-back over up to 9 of them).
# usage: bash docs/evidence/18_sanitizer.sh <build_dir>   (a few minutes)
set -uo pipefail
build=${1:?usage: 18_sanitizer.sh <build_dir>}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
exe="$build/chapters/18_radix_sort"
for tool in memcheck initcheck racecheck synccheck; do
  echo "# $tool, --verify-only --n 20011 --tile-rows 8 --block 256"
  "$sanitizer" --tool "$tool" --error-exitcode 7 --print-limit 4 "$exe" --verify-only --n 20011 --tile-rows 8 \
    --block 256 2>&1 | grep -E "SUMMARY|Error|error|hazard|FAIL|checks" | tail -6
  echo "# exit ${PIPESTATUS[0]}"
done
