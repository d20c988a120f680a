#!/usr/bin/env bash
# Evidence for docs/10_transpose_shared.md: shared-memory bank conflicts of the
# unpadded 32x32 tile. Run on the GPU machine:
#   bash docs/evidence/10_transpose_shared.sh <build_dir> > docs/runs/evidence/10_transpose_shared.txt
# A conflict-free warp-wide float access to shared memory is 1 wavefront; the
# column read of tile[32][32] should show about 32 wavefronts per load instruction.
# It also defines shared_metrics, which 11's script uses.
set -euo pipefail
# Bank conflicts, wavefronts and instructions of shared-memory loads and stores.
shared_metrics=""
for op in ld st; do
  shared_metrics+=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_$op.sum,
  shared_metrics+=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_$op.sum,
  shared_metrics+=smsp__inst_executed_op_shared_$op.sum,
done

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  build=${1:?usage: $0 <build_dir>}
  exe="$build/chapters/10_transpose_shared"
  echo "# ncu on $("$exe" --help | head -1 | cut -d: -f1), 4096 x 4096 floats, one launch of the shared-tile kernel"
  ncu --clock-control none --metrics "${shared_metrics}dram__throughput.avg.pct_of_peak_sustained_elapsed" \
    -k regex:transpose_shared_tile -c 1 "$exe" --rows 4096 --cols 4096 --reps 1 --warmup 0
fi
