#!/usr/bin/env bash
# Evidence for docs/16_scan.md (issue 46): the measured copy ceiling's speed with the bytes it
# copies: the ceiling's 0x01 bytes, zeros, chapter 16's u32 and f32 inputs, with the board's
# power and SM clock beside each (docs/evidence/16_copy_data.cu says what it runs).
# usage: bash docs/evidence/16_copy_data.sh <build_dir> [ROUNDS]   (about 10 s a round on an H200)
set -euo pipefail
build=${1:?usage: 16_copy_data.sh <build_dir> [ROUNDS]}
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc -O3 -std=c++17 -arch=sm_90 -I"$root" "$root/docs/evidence/16_copy_data.cu" \
  "$build/common/libcommon_gpu.a" "$build/common/libcommon_host.a" -ldl -o "$build/16_copy_data"
"$build/16_copy_data" "${2:-3}"
