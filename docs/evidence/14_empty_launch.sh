#!/usr/bin/env bash
# Evidence for docs/14_multi_gpu.md: what an "empty launch" costs in chapter 14 (one GPU,
# with its NCCL communicators alive) against chapter 06's empty kernel on the same GPU.
#
#   bash docs/evidence/14_empty_launch.sh <build_dir> > docs/runs/evidence/14_empty_launch.txt
#
# Chapter 14 times an empty kernel with the host clock around the launch and a
# cudaDeviceSynchronize (its row "empty-launch"); chapter 06 times its empty kernel
# with CUDA events around the launch ("alone"). Both programs run with their own
# options only; Nsight Systems (nsys, from the CUDA Toolkit) traces each run, and the
# kernels of one block of one thread (the empty kernels: no other kernel of either
# program has that shape) are matched with the CUDA calls around them. Printed:
#   1. the programs' own rows (--json);
#   2. the most threads each process had and its CPU seconds per wall second;
#   3. per empty launch, the median of: the launch call on the host, the gap from
#      the call's start to the kernel's start on the GPU, the kernel, and the wait of
#      the synchronizing call that follows (cudaDeviceSynchronize in chapter 14,
#      cudaEventSynchronize in chapter 06) after the kernel ended, and the whole
#      span from the launch call's start to that call's return;
#   4. the other CUDA calls chapter 14 makes per launch (cudaSetDevice, ...).
# About a minute on one GPU (chapter 14 runs at --n 2^26 --shard 2^24 to be short).
set -uo pipefail
build=${1:?usage: $0 <build_dir>}
ch06="$build/chapters/06_reduce_thread_overload"
ch14="$build/chapters/14_multi_gpu"
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args14=(--gpus 1 --n 2^26 --shard 2^24)

cat > "$work/rows.py" <<'PY'
import json
import sys

want = sys.argv[1]  # "06": chapter 06's empty kernel; "14": chapter 14's fixed costs
for line in sys.stdin:
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("record") != "result":
        continue
    if want == "06" and r["variant"] == "empty-kernel":
        print(f"06 empty-kernel {r['note']} | {1e3 * r['ms_median']:.3f}")
    elif want == "14" and r["problem"] == "sharded-sum-latency":
        print(f"14 {r['variant']} {r['note']} | {1e3 * r['ms_median']:.3f}")
PY
echo "== 1. the programs' rows (median µs)"
echo "variant | us_median"
"$ch06" --json | python3 "$work/rows.py" 06
"$ch14" "${args14[@]}" --json | python3 "$work/rows.py" 14
echo

# threads and CPU time of a process: the most threads seen while it ran, and its
# user + system CPU seconds over its wall seconds (1.0: one core busy all the time)
threads_and_cpu() {
  local label=$1
  shift
  "$@" > /dev/null 2>&1 &
  local pid=$! most=0 ticks=0 t0 t1
  t0=$(date +%s.%N)
  while kill -0 "$pid" 2> /dev/null; do
    local n
    n=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status" 2> /dev/null || echo 0)
    [ -n "$n" ] && [ "$n" -gt "$most" ] && most=$n
    local s
    s=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2> /dev/null || echo "")
    [ -n "$s" ] && ticks=$s
    sleep 0.05
  done
  wait "$pid"
  t1=$(date +%s.%N)
  python3 -c 'import os, sys; a = sys.argv; print(a[1], "|", a[2], "|", "%.2f" % (int(a[3]) / os.sysconf("SC_CLK_TCK") / (float(a[5]) - float(a[4]))))' \
    "$label" "$most" "$ticks" "$t0" "$t1"
}
echo "== 2. threads and CPU use of each run (CPU seconds over wall seconds)"
echo "variant | threads | cpu_per_wall"
threads_and_cpu "06" "$ch06"
threads_and_cpu "14" "$ch14" "${args14[@]}"
echo

if [ -z "$nsys" ]; then
  echo "# nsys not found: no trace (install Nsight Systems, or put nsys on the PATH)"
  exit 1
fi
echo "# $("$nsys" --version 2>&1 | head -1)"
for ch in 06 14; do
  exe=$ch06
  extra=()
  if [ "$ch" = 14 ]; then exe=$ch14; extra=("${args14[@]}"); fi
  "$nsys" profile --trace=cuda --sample=none --cpuctxsw=none --force-overwrite=true --export=sqlite \
    -o "$work/ch$ch" "$exe" "${extra[@]}" > "$work/nsys$ch.log" 2>&1 || { tail -5 "$work/nsys$ch.log"; exit 1; }
done

python3 - "$work/ch06.sqlite" "$work/ch14.sqlite" <<'PY'
import sqlite3
import statistics
import sys


def trace(path):
    db = sqlite3.connect(path)
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    cols = [c[1] for c in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_RUNTIME)")]
    name_col = "nameId" if "nameId" in cols else "name"
    calls = [(s, e, tid, corr, names.get(n, str(n))) for s, e, tid, corr, n in db.execute(
        f"SELECT start, end, globalTid, correlationId, {name_col} FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start")]
    kernels = list(db.execute(
        "SELECT start, end, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL "
        "WHERE gridX = 1 AND gridY = 1 AND gridZ = 1 AND blockX = 1 AND blockY = 1 AND blockZ = 1"))
    return calls, kernels


def launches(calls, kernels, sync_name, alone_only):
    """Per empty kernel launched by cudaLaunchKernel: the launch call, its thread's calls after it."""
    by_corr = {c[3]: i for i, c in enumerate(calls)}
    out = []
    for ks, ke, corr in kernels:
        i = by_corr.get(corr)
        if i is None or not calls[i][4].startswith("cudaLaunchKernel"):
            continue  # launched inside a CUDA graph
        tid = calls[i][2]
        mine = [c for c in calls[max(0, i - 8):i + 12] if c[2] == tid]
        k = mine.index(calls[i])
        before, after = mine[k - 1][4] if k else "", mine[k + 1][4] if k + 1 < len(mine) else ""
        if alone_only and not (before.startswith("cudaEventRecord") and after.startswith("cudaEventRecord")):
            continue  # chapter 06: only the launches timed alone (event, launch, event)
        sync = next((c for c in mine[k + 1:] if c[4].startswith(sync_name)), None)
        if sync is None:
            continue
        between = [c for c in mine[k + 1:] if c[0] < sync[0]]
        out.append({"launch": calls[i], "kernel": (ks, ke), "sync": sync, "between": between})
    return out


def us(x):
    return x / 1e3


def report(label, rows):
    med = lambda xs: statistics.median(xs) if xs else float("nan")  # noqa: E731
    print(f"== 3. {label}: per empty launch, median µs over {len(rows)} launches")
    print("variant | us")
    print(f"{label} launch call | {us(med([r['launch'][1] - r['launch'][0] for r in rows])):.3f}")
    print(f"{label} call start to kernel start | {us(med([r['kernel'][0] - r['launch'][0] for r in rows])):.3f}")
    print(f"{label} kernel | {us(med([r['kernel'][1] - r['kernel'][0] for r in rows])):.3f}")
    print(f"{label} calls between launch and sync | {us(med([sum(c[1] - c[0] for c in r['between']) for r in rows])):.3f}")
    print(f"{label} sync call | {us(med([r['sync'][1] - r['sync'][0] for r in rows])):.3f}")
    print(f"{label} kernel end to sync return | {us(med([r['sync'][1] - r['kernel'][1] for r in rows])):.3f}")
    print(f"{label} launch call start to sync return | {us(med([r['sync'][1] - r['launch'][0] for r in rows])):.3f}")
    print()


calls06, k06 = trace(sys.argv[1])
calls14, k14 = trace(sys.argv[2])
report("06", launches(calls06, k06, "cudaEventSynchronize", alone_only=True))
rows14 = launches(calls14, k14, "cudaDeviceSynchronize", alone_only=False)
report("14", rows14)
names = {}
for r in rows14:
    for c in r["between"]:
        names.setdefault(c[4].split("_v")[0], []).append(c[1] - c[0])
print("== 4. chapter 14: the calls between an empty launch and its synchronize (median µs, calls per launch)")
print("variant | us | per_launch")
for n, xs in sorted(names.items()):
    print(f"{n} | {us(statistics.median(xs)):.3f} | {len(xs) / max(len(rows14), 1):.1f}")
PY
