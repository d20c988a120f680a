#!/usr/bin/env bash
# Evidence for docs/18_radix_sort.md: the write-out of one radix pass alone (no ranking, no
# look-back) over 2^28 random keys, by tile shape, keys and pairs, with and without the L2
# prefetch: docs/evidence/18_write_out.cu says what it runs. Needs nvcc with OpenMP.
# usage: bash docs/evidence/18_write_out.sh <build_dir>   (about 30 s on an H100)
set -euo pipefail
build=${1:?usage: 18_write_out.sh <build_dir>}
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler -fopenmp -I"$root" "$root/docs/evidence/18_write_out.cu" \
  "$root/common/check.cpp" -o "$build/18_write_out"
"$build/18_write_out"
