#!/usr/bin/env bash
# Evidence for chapter 08: the shared-memory atomics of each variant. For each,
# on uniform bytes and on all bytes equal: shared atomic instructions, the
# wavefronts (passes through the shared-memory banks) they took, the bank
# conflicts among them, DRAM throughput and time. Wavefronts per instruction
# near 1 means conflict-free; the spread copies should bring uniform bytes
# closer, per-lane copies all the way, while all-equal bytes are cheap for the
# one-copy kernels already. The kernels are histogram_<step name>.
#
#   bash docs/evidence/08_histogram_privatized.sh <build_dir>   (about 30 s)
set -euo pipefail
build=${1:?usage: $0 <build_dir>}
source "$(dirname "$0")/07_histogram_atomic_naive.sh"  # ncu_by_variant
exe="$build/chapters/08_histogram_privatized"
metrics=gpu__time_duration.sum,smsp__inst_executed_op_shared_atom.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
for dist in uniform equal; do
  echo "== 08, --dist $dist --bytes 2^26"
  ncu_by_variant "$exe" "$metrics" 'histogram_' --dist "$dist" --bytes 2^26
  echo
done
