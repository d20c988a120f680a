#!/usr/bin/env bash
# Evidence for docs/11_transpose_padded.md: shared-memory bank conflicts of the
# padded tile and the tiled kernels (compare with 10_transpose_shared.txt). Run on
# the GPU machine:
#   bash docs/evidence/11_transpose_padded.sh <build_dir> > docs/runs/evidence/11_transpose_padded.txt
# The benchmark launches, in order: padded, padded-32x8, tile64, tile64-float4,
# tile64-rows, tile64-rows-grouped (floats), then double-tile32 and
# double-tile32-grouped; -c 8 profiles one launch of each. Each kernel is named
# after its row: tile64-rows-grouped -> transpose_tile64_rows_grouped.
set -euo pipefail
build=${1:?usage: $0 <build_dir>}
exe="$build/chapters/11_transpose_padded"
source "$(dirname "$0")/10_transpose_shared.sh"  # shared_metrics
metrics=${shared_metrics}smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
echo "# ncu on 11_transpose_padded, 4096 x 4096, one launch of each transpose kernel of ours"
ncu --clock-control none --metrics "$metrics" -k 'regex:transpose_(padded|tile64|double_tile32)' -c 8 \
  "$exe" --rows 4096 --cols 4096 --reps 1 --warmup 0
