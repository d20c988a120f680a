#!/usr/bin/env bash
# What the grader's repeats cost, ten runs of a program against one run of --repeat 10, on one GPU:
#   bash docs/evidence/labs_scan_repeat_costs.sh <build_dir> > docs/runs/evidence/labs_scan_repeat_costs.txt
# Each checked run crosses the grader's boundary: the submission's program with
# --dump-outputs DIR, then the reference program with --check-outputs DIR (here the same
# program twice). Programs: one step each of chapters 16 (lookback-vec), 17 (one-pass) and
# 18 (onesweep) at the repeats' 2^24 + 3 elements, seed 42.
#   1. alone: wall, user and system CPU seconds of one run (--n 1: what a process costs
#      before any work), of one repeat, and of a --repeat 10 run, each side;
#   2. side by side: k pairs at once (k workers), each worker ten pairs of one repeat, or
#      one pair of --repeat 10: the throughput when the grader runs many checks at once;
#   3. compute-sanitizer (memcheck, racecheck, synccheck) of one step of chapter 18 at the
#      grader's small size, 5,000 keys.
# The dumps go to ./dumps (at most 30 GB at once). About 6 minutes on an H200.
set -uo pipefail
build=${1:?usage: $0 <build_dir>}
M="$build/chapters"
D=$PWD/dumps
S=(--verify-only --json --seed 42)
W=(--n 16777219)
TIMEFORMAT="%R %U %S"
mkdir -p "$D"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader
echo "cores $(nproc)"
echo "# label  wall user sys (seconds)  records ok  bytes dumped"
. "$(dirname "$0")/lib/boundary_runs.sh"  # one, both: a checked run across the boundary, timed
echo "== 1. alone"
both 16-lookback-vec-n1 "$M/16_scan" "${S[@]}" --n 1 --variant lookback-vec
both 16-lookback-vec "$M/16_scan" "${S[@]}" "${W[@]}" --variant lookback-vec
both 16-lookback-vec-repeat10 "$M/16_scan" "${S[@]}" "${W[@]}" --variant lookback-vec --repeat 10
both 17-one-pass "$M/17_stream_compaction" "${S[@]}" "${W[@]}" --variant one-pass
both 17-one-pass-repeat10 "$M/17_stream_compaction" "${S[@]}" "${W[@]}" --variant one-pass --repeat 10
both 18-onesweep-n1 "$M/18_radix_sort" "${S[@]}" --n 1 --variant onesweep
both 18-onesweep "$M/18_radix_sort" "${S[@]}" "${W[@]}" --variant onesweep
both 18-onesweep-repeat10 "$M/18_radix_sort" "${S[@]}" "${W[@]}" --variant onesweep --repeat 10
pairs() {  # program variant id count [--repeat 10]: count pairs in turn
  local p=$1 v=$2 id=$3 count=$4 i
  shift 4
  for i in $(seq 1 "$count"); do
    mkdir -p "$D/$id-$i"
    "$M/$p" "${S[@]}" "${W[@]}" --variant "$v" "$@" --dump-outputs "$D/$id-$i" > /dev/null 2>&1
    "$M/$p" "${S[@]}" "${W[@]}" --variant "$v" "$@" --check-outputs "$D/$id-$i" \
      > "$D/$id-$i.out" 2>&1
    rm -rf "${D:?}/$id-$i"
  done
}
side_by_side() {  # program variant k count [--repeat 10]: k workers at once
  local p=$1 v=$2 k=$3 count=$4 start j
  shift 4
  start=$(date +%s.%N)
  for j in $(seq 1 "$k"); do pairs "$p" "$v" "k$k-$j" "$count" "$@" & done
  wait
  echo "$p $v k=$k pairs=$((k * count)) $* : $(awk "BEGIN{print $(date +%s.%N) - $start}") s," \
    "judged ok $(cat "$D"/k"$k"-*.out | grep -c '"ok":true')"
  rm -f "$D"/k"$k"-*.out
}
echo "== 2. side by side: k workers, wall seconds"
for k in 1 4 8 12; do side_by_side 16_scan lookback-vec "$k" 10; done
for k in 1 8 12; do side_by_side 16_scan lookback-vec "$k" 1 --repeat 10; done
for k in 1 4; do side_by_side 18_radix_sort onesweep "$k" 10; done
for k in 1 3; do side_by_side 18_radix_sort onesweep "$k" 1 --repeat 10; done
echo "== 3. compute-sanitizer, one step of chapter 18 at 5,000 keys"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  tt=$({ time timeout 200 "$san" --tool "$tool" --error-exitcode 7 "$M/18_radix_sort" "${S[@]}" \
    --n 5000 --variant onesweep > /tmp/evidence-run.out 2>&1; } 2>&1)
  echo "$tool  $tt  exit $?  $(grep -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards' \
    /tmp/evidence-run.out | head -1)"
done
rm -rf "$D"
