#!/usr/bin/env bash
# Evidence for chapter 15: where each step's atomics go, at 65,536 bins (16-bit
# values, 2^25 = 64 MiB) and 2^20 bins (32-bit values, 2^24 = 64 MiB), on uniform
# values and on all values equal; and at 32,768 bins on uniform values, where 32-bit
# and packed counters both fit. For every kernel of every step (each cluster size
# that fits), its first launch: time; shared-memory atomic instructions, the
# wavefronts they took and their bank conflicts (shared32, packed16*, partition);
# generic atomic instructions, which is what an atomic on a cluster block's shared
# memory (DSMEM) compiles to, the DSMEM atomic instructions, the bytes they send to
# the SM-to-SM network and the cycles that interface was busy (all of it, and the part
# that loops back to the same SM) (cluster-*); L2 reduction and atomic requests
# (global atomics, and the hand-over of wrapped 16-bit counters); L2 and DRAM
# throughput; active warps. The grid column of a cluster step is its clusters at once
# (cudaOccupancyMaxActiveClusters) times the cluster size. A metric this Nsight
# Compute does not know is left out.
#
#   bash docs/evidence/15_many_bins_histogram.sh <build_dir>   (about 3 minutes on an H200)
set -euo pipefail
build=${1:?usage: $0 <build_dir>}
exe="$build/chapters/15_many_bins_histogram"

wanted="gpu__time_duration.sum smsp__inst_executed.sum smsp__inst_executed_op_shared_atom.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum
smsp__inst_executed_op_generic_atom.sum smsp__sass_inst_executed_op_dshared_atom.sum
l1tex__m_l1tex2xbar_write_bytes_mem_dshared_op_atom.sum l1tex__m_l1tex2xbar_req_cycles_active_mem_dshared.sum
l1tex__m_l1tex2xbar_req_cycles_active_mem_dshared_loopback.sum
lts__t_requests_srcunit_tex_op_red.sum lts__t_requests_srcunit_tex_op_atom.sum
lts__throughput.avg.pct_of_peak_sustained_elapsed dram__throughput.avg.pct_of_peak_sustained_elapsed
sm__warps_active.avg.pct_of_peak_sustained_active"
# The wanted metrics that this ncu knows; and, for the record, the names of its
# distributed-shared-memory and cluster counters.
known=$(ncu --query-metrics 2>/dev/null | awk '{print $1}')
metrics=""
for m in $wanted; do
  if grep -qx "${m%%.*}" <<<"$known"; then metrics="$metrics,$m"; fi
done
metrics=${metrics#,}
echo "# ncu lists these distributed shared memory and cluster metrics:" \
  $(grep -iE 'dsmem|dshared|distributed|cluster' <<<"$known" | sort -u | tr '\n' ' ')

# profile ARGS...: one row per (step, cluster size) and kernel: the kernels of its
# first checked run. Each version runs three times (two checked runs, one timed), so
# its launches repeat with a period of its kernels per run.
profile() {
  local versions
  versions=$("$exe" "$@" --reps 1 --warmup 0 --json | python3 -c '
import json, sys
for line in sys.stdin:
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("record") == "result" and r["role"] != "vendor":
        k = r.get("extra", {}).get("cluster")
        print(r["variant"] + (f"/cluster={k:.0f}" if k else ""))')
  ncu --clock-control none --csv --metrics "$metrics" -k 'regex:count_|scatter_partitions' \
    "$exe" "$@" --reps 1 --warmup 0 2>&1 |
    python3 -c '
import collections, csv, re, sys
names = sys.argv[1].split()
rows = list(csv.reader(l for l in sys.stdin if l.startswith("\"")))
if not rows:
    sys.exit("no ncu rows: is ncu on the PATH and the kernel regex right?")
col = {h: i for i, h in enumerate(rows[0])}
per = collections.OrderedDict()
for r in rows[1:]:
    if r == rows[0]:
        continue
    kernel = re.search(r"(\w+)\s*[<(]", re.sub(r"^void\s+|\(anonymous namespace\)::|<unnamed>::", "", r[col["Kernel Name"]]))
    d = per.setdefault(int(r[col["ID"]]), {"kernel": kernel.group(1) if kernel else r[col["Kernel Name"]],
                                            "grid": r[col["Grid Size"]], "block": r[col["Block Size"]]})
    d[r[col["Metric Name"]]] = r[col["Metric Value"]].replace(",", "")
launches = [per[i] for i in sorted(per)]
metrics = sorted({m for d in launches for m in d if m not in ("kernel", "grid", "block")})
print(" | ".join(["variant", "kernel", "grid", "block"] + metrics))
at = 0
for name in names:
    if at >= len(launches):
        print(f"warning: no launches left for {name}")
        break
    first = launches[at]["kernel"]
    per_run = 1  # kernels in one run: up to the first repeat of the first kernel
    while at + per_run < len(launches) and launches[at + per_run]["kernel"] != first:
        per_run += 1
    for d in launches[at:at + per_run]:
        print(" | ".join([name, d["kernel"], d["grid"], d["block"]] + [d.get(m, "-") for m in metrics]))
    at += 3 * per_run
if at != len(launches):
    print(f"warning: {len(launches) - at} launches not assigned")
' "$versions"
}

for dist in uniform equal; do
  echo "== 15, --bins 65536 --dist $dist --n 2^25"
  profile --bins 65536 --dist "$dist" --n 2^25
  echo
  echo "== 15, --bins 2^20 --dist $dist --n 2^24"
  profile --bins 2^20 --dist "$dist" --n 2^24
  echo
done

# Where 32-bit and packed counters both fit: the instructions each pays per atomic.
echo "== 15, --bins 32768 --dist uniform --n 2^25"
profile --bins 32768 --dist uniform --n 2^25
