#!/usr/bin/env bash
# Evidence for docs/09_transpose_naive.md: where each naive kernel's sectors go.
# Run on the GPU machine:
#   bash docs/evidence/09_transpose_naive.sh <build_dir> > docs/runs/evidence/09_transpose_naive.txt
# One launch of each kernel (transpose_<step name>) on 8192 x 8192 floats (256 MiB
# each way, beyond L2), through --verify-only with that shape: nothing else of ours
# runs before it. 2^26 elements: 2^21 warp loads and 2^21 warp stores; the data fill
# 2^23 sectors each way. The docs' argument predicts:
#   naive-read-coalesced:  loads 4 sectors per request (2^23), L1 hits near 0;
#                          stores 32 sectors per request, and 2^26 sector writes
#                          reach L2, 8 times the 2^23 the data fill.
#   naive-write-coalesced: loads 32 sectors per request (2^26) of which about 7 in 8
#                          hit in L1 (a sector holds 8 neighbouring columns: it serves
#                          the 8 warps of the block whose columns it holds), so L2
#                          sees about 2^23 sector reads; stores 4 sectors per request.
# DRAM moves about 256 MiB each way in both (L2 merges the partial writes).
# About 20 s.
set -euo pipefail
build=${1:?usage: $0 <build_dir>}
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
exe="$build/chapters/09_transpose_naive"
shape=(--verify-only --rows 8192 --cols 8192)
metrics=""
for op in ld st; do  # requests and sectors of global loads and stores in L1
  metrics+=l1tex__t_requests_pipe_lsu_mem_global_op_$op.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_$op.sum,
done
metrics+=l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct,l1tex__t_sector_hit_rate.pct
for dir in read write; do metrics+=,lts__t_sectors_srcunit_tex_op_$dir.sum,dram__bytes_$dir.sum; done
metrics+=,gpu__time_duration.sum

# Runs ncu on the first launch of the kernel named $1 and prints the kernel line and
# the metric lines (everything, if that filter finds nothing).
profile() {
  local kernel=$1 out kept
  shift
  out=$("$ncu" --clock-control none --metrics "$metrics" -k "regex:$kernel" -c 1 "$@" 2>&1) || true
  kept=$(grep -E '^  [^ =].*\(|^    [a-z0-9_]+__' <<<"$out" || true)
  if [ -n "$kept" ]; then echo "$kept"; else grep -vE '^(PASS|FAIL) ' <<<"$out"; fi
}

echo "# ncu on 09_transpose_naive, 8192 x 8192 floats, one launch of each naive kernel"
for v in naive-read-coalesced naive-write-coalesced; do
  echo "## $v"
  profile "transpose_${v//-/_}" "$exe" "${shape[@]}"
done
