#!/usr/bin/env bash
# Evidence for docs/14_multi_gpu.md, Part 3: one process per GPU against one process for all.
# GPUs needed: 2
#
#   bash docs/evidence/14_ranks.sh <build_dir> > docs/runs/evidence/14_ranks.txt
#   RANKS=4 bash docs/evidence/14_ranks.sh <build_dir> > docs/runs/evidence/14_ranks_4.txt
#
# In one session, on GPUs 0 to K - 1 (K = $RANKS, default 2):
#   1. one process: 14_multi_gpu --part 2 --gpus K --json (Part 2 alone: its ring at the best
#      of its sweep, NCCL);
#   2. K processes: launch.py --ranks K -- 14_multi_gpu --part 3 --json, the IPC ring at the
#      one-process ring's slices and read mode at 1 GiB; NCCL_DEBUG=INFO for NCCL's transport;
#   3. NCCL's network path: the same with launch.py --net (NCCL_P2P_DISABLE=1,
#      NCCL_SHM_DISABLE=1, NCCL_IB_DISABLE=1, NCCL_SOCKET_IFNAME=lo, a NCCL_HOSTID per rank),
#      --reps 5, then its --verify-only sweep.
# Printed: busbw at every size for each (one section per size), NCCL's transport lines, and
# how many lines of each run's log say "via NET/Socket". About 3 minutes on two GPUs; with
# one, each run ends in exit 77 (.ci/gpu-run runs it only on two: "GPUs needed").
set -uo pipefail
build=${1:?usage: $0 <build_dir>}
here=$(cd "$(dirname "$0")/../.." && pwd)
exe="$build/chapters/14_multi_gpu"
k=${RANKS:-2}
launch=(python3 "$here/chapters/14_multi_gpu/one_process_per_gpu/launch.py" --ranks "$k")
devices=$(seq -s, 0 $((k - 1)))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

CUDA_VISIBLE_DEVICES=$devices "$exe" --part 2 --gpus "$k" --json > "$work/one.json" 2> "$work/one.err"
echo "one process: exit $?"
# The one-process ring's slices and read mode at 1 GiB, for the IPC ring.
read -r slices reads < <(python3 - "$work/one.json" "$k" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line)
        if r.get("variant") == "ring" and r.get("note") == f"gpus={sys.argv[2]}" and r.get("n") == 1 << 28:
            print(int(r["extra"]["slices"]), "peer" if r["extra"]["peer_reads"] else "copy")
PY
)
echo "the one-process ring at 1 GiB: slices=${slices:-?} reads=${reads:-?}"
NCCL_DEBUG=INFO "${launch[@]}" -- "$exe" --part 3 --json --slices "${slices:-1}" \
  --ring-reads "${reads:-peer}" > "$work/ranks.out" 2> "$work/ranks.err"
echo "$k processes: exit $?"
NCCL_DEBUG=INFO "${launch[@]}" --net -- "$exe" --part 3 --json --reps 5 > "$work/net.out" 2> "$work/net.err"
echo "$k processes, --net: exit $?"
"${launch[@]}" --net -- "$exe" --part 3 --verify-only > "$work/net_verify.out" 2> "$work/net_verify.err"
echo "$k processes, --net, --verify-only: exit $?"
echo

python3 - "$work" "$k" <<'PY'
import json, os, re, sys
work, k = sys.argv[1], sys.argv[2]

def records(name, prefix):
    out = []
    for line in open(os.path.join(work, name)):
        line = line[len(prefix):] if line.startswith(prefix) else line
        if line.startswith("{"):
            out.append(json.loads(line))
    return out

runs = {"one-process": records("one.json", ""), "ranks": records("ranks.out", "[0] "),
        "net": records("net.out", "[0] ")}
rows = {}  # n -> [(name, busbw, ms, ok)]
for run, recs in runs.items():
    for r in recs:
        if r.get("record") != "result" or r.get("problem") != "all-reduce" or r.get("role") == "sweep":
            continue
        if r.get("note") not in (f"gpus={k}", f"ranks={k}"):
            continue
        if run == "net" and r["variant"] != "nccl-allreduce":
            continue  # --net changes NCCL's path only
        rows.setdefault(r["n"], []).append((f"{run} {r['variant']}", r["extra"]["busbw_gbps"],
                                            r["ms_median"], "ok" if r["ok"] else "FAILED"))
for n in sorted(rows):
    print(f"== all-reduce busbw at n=2^{n.bit_length() - 1}")
    print("variant | busbw_gbps | ms | check")
    for name, busbw, ms, ok in rows[n]:
        print(f"{name} | {busbw:.1f} | {ms:.4f} | {ok}")
    print()
print("== checks and transports")
print("variant | checks | failed | via_net_socket")
for run, out, err in (("ranks", "ranks.out", "ranks.err"), ("net", "net.out", "net.err"),
                      ("net verify", "net_verify.out", "net_verify.err")):
    text = open(os.path.join(work, out)).read()
    summary = [r for r in records(out, "[0] ") if r.get("record") == "summary"]
    m = re.search(r"14: (\d+) checks, (\d+) failed", text)
    checks, failed = ((summary[0]["checks"], summary[0]["failed"]) if summary
                      else (m.group(1), m.group(2)) if m else ("-", "-"))
    print(f"{run} | {checks} | {failed} | {text.count('via NET/Socket')}")
print()
print("== NCCL's first channel lines (rank 0), default path and --net")
for out in ("ranks.out", "net.out"):
    lines = [l.strip() for l in open(os.path.join(work, out)) if " via " in l and "Channel" in l]
    for l in lines[:2]:
        print("  " + re.sub(r"^\[0\] \S+:\d+:\d+ \[\d+\] ", "", l))
PY
echo
echo "== the runs' stderr (launcher lines and errors)"
cat "$work/one.err" "$work/ranks.err" "$work/net.err" "$work/net_verify.err" | grep -v "NCCL INFO" | sed 's/^/  /' | head -40
