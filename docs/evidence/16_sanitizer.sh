#!/usr/bin/env bash
# Evidence for docs/16_scan.md: compute-sanitizer on every step of chapter 16 through
# its own checks, with the tiny tile (--tile-rows 1 --block 32: one element a lane, one
# warp a block), so that 20,011 elements make 626 tiles and the look-back runs between
# hundreds of them: memcheck and initcheck (u32 and f32), racecheck and synccheck (u32).
# usage: bash docs/evidence/16_sanitizer.sh <build_dir>   (a few minutes)
set -uo pipefail
build=${1:?usage: 16_sanitizer.sh <build_dir>}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
exe="$build/chapters/16_scan"
for tool in memcheck initcheck racecheck synccheck; do
  type=all
  [ "$tool" = racecheck ] || [ "$tool" = synccheck ] && type=u32
  echo "# $tool, --verify-only --n 20011 --tile-rows 1 --block 32 --type $type"
  "$sanitizer" --tool "$tool" --error-exitcode 7 --print-limit 4 "$exe" --verify-only --n 20011 --tile-rows 1 \
    --block 32 --type "$type" 2>&1 | grep -E "SUMMARY|Error|error|hazard|FAIL|checks" | tail -6
  echo "# exit ${PIPESTATUS[0]}"
done
