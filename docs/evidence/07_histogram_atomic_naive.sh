#!/usr/bin/env bash
# Evidence for chapter 07: where the global atomics go. For each variant, on
# uniform bytes and on all bytes equal: the RED (reduction: an atomicAdd whose
# result is unused) requests that reach L2, L2 and DRAM throughput, and time.
# Expected: L2 busy with atomics, DRAM nearly idle, and no change with the grid.
#
#   bash docs/evidence/07_histogram_atomic_naive.sh <build_dir>   (about 30 s)
#
# It also defines ncu_by_variant, which 08's script uses.
set -euo pipefail

# ncu_by_variant EXE METRICS KERNEL_REGEX ARGS...: profiles EXE ARGS --reps 1
# --warmup 0 and prints one row per variant (the first of its launches), named
# from the program's own --json output (each variant launches the same number
# of times: two checked runs and one timed).
ncu_by_variant() {
  local exe=$1 metrics=$2 kernels=$3
  shift 3
  local names
  names=$("$exe" "$@" --reps 1 --warmup 0 --json | python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin if l.startswith("{")]
print(" ".join(r["variant"] for r in recs if r.get("record") == "result" and r["role"] != "vendor"))')
  ncu --clock-control none --csv --metrics "$metrics" -k "regex:$kernels" "$exe" "$@" --reps 1 --warmup 0 2>&1 |
    python3 -c '
import collections, csv, sys
names = sys.argv[1].split()
rows = list(csv.reader(l for l in sys.stdin if l.startswith("\"")))
if not rows:
    sys.exit("no ncu rows: is ncu on the PATH and the kernel regex right?")
col = {h: i for i, h in enumerate(rows[0])}
per = collections.OrderedDict()
for r in rows[1:]:
    if r == rows[0]:
        continue
    d = per.setdefault(int(r[col["ID"]]), {"grid": r[col["Grid Size"]], "block": r[col["Block Size"]]})
    d[r[col["Metric Name"]]] = r[col["Metric Value"]].replace(",", "")
ids = sorted(per)
if len(ids) % len(names):
    print(f"warning: {len(ids)} launches for {len(names)} variants")
step = max(1, len(ids) // len(names))
metrics = [m for m in per[ids[0]] if m not in ("grid", "block")]
print(" | ".join(["variant", "grid", "block"] + metrics))
for i, name in enumerate(names):
    d = per[ids[i * step]]
    print(" | ".join([name, d["grid"], d["block"]] + [d.get(m, "-") for m in metrics]))
' "$names"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  build=${1:?usage: $0 <build_dir>}
  exe="$build/chapters/07_histogram_atomic_naive"
  metrics=gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_red.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
  for dist in uniform equal; do
    echo "== 07, --dist $dist --bytes 2^24"
    ncu_by_variant "$exe" "$metrics" 'histogram_global_atomic' --dist "$dist" --bytes 2^24
    echo
  done
fi
