#!/usr/bin/env bash
# Evidence for docs/14_multi_gpu.md, Part 3: kill -9 of one rank in a loop of all-reduces.
# GPUs needed: 2
#
#   bash docs/evidence/14_fault_trials.sh <build_dir> > docs/runs/evidence/14_fault_trials.txt
#   RANKS=4 TRIALS=10 bash docs/evidence/14_fault_trials.sh <build_dir> > docs/runs/evidence/14_fault_trials_4.txt
#
# 20 trials (TRIALS). Each starts K ranks (RANKS, default 2) through chapters/14_multi_gpu/one_process_per_gpu/launch.py
# (--grace 15: the launcher lets the survivor end by itself) running --part 3 --loop 10000000
# --timeout 4, waits until rank 1 says its loop started, waits a random 0.2 to 1.0 s more,
# and kills rank 1 with SIGKILL. A trial passes when every survivor (each rank but 1) exits by
# itself with code 4 (NCCL reported an error) or 5 (a wait passed --timeout) within 10 s of the
# failure, and no process of the trial is left: no rank's pid, nor a compute process on the GPUs.
# The seconds are the launcher's, from the moment it saw rank 1 die to the last survivor's exit;
# the code column lists the survivors' codes.
# About 3 minutes on two GPUs.
set -uo pipefail
build=${1:?usage: $0 <build_dir>}
here=$(cd "$(dirname "$0")/../.." && pwd)
exe="$build/chapters/14_multi_gpu"
trials=${TRIALS:-20}
k=${RANKS:-2}
limit_s=10
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
if [ "$gpus" -lt "$k" ]; then
  echo "skipped: the fault trials need $k GPUs, $gpus visible"
  exit 0
fi

# The pids of a trial's ranks, from the launcher's "launch: rank R: pid P" lines.
pid_of() { sed -n "s/^launch: rank $1: pid \([0-9]*\)$/\1/p" "$work/err" | head -1; }

echo "== the trials (seconds: from rank 1's death to the last survivor's exit, as the launcher saw them)"
echo "variant | exit_code | seconds | left | pass"
passed=0
worst=0
for t in $(seq 1 "$trials"); do
  : > "$work/err"
  python3 "$here/chapters/14_multi_gpu/one_process_per_gpu/launch.py" --ranks "$k" --grace 15 -- \
    "$exe" --part 3 --loop 10000000 --timeout 4 > "$work/out" 2> "$work/err" &
  launcher=$!
  for _ in $(seq 1 600); do  # up to 60 s for NCCL's start
    grep -q '^\[1\] rank 1: a loop of' "$work/err" && break
    kill -0 "$launcher" 2> /dev/null || break
    sleep 0.1
  done
  sleep "$(python3 -c 'import random; print(round(random.uniform(0.2, 1.0), 2))')"
  pids=$(for r in $(seq 0 $((k - 1))); do pid_of "$r"; done)
  r1=$(pid_of 1)
  [ -n "$r1" ] && kill -9 "$r1" 2> /dev/null
  for _ in $(seq 1 300); do  # the launcher ends once every rank has
    kill -0 "$launcher" 2> /dev/null || break
    sleep 0.1
  done
  kill -0 "$launcher" 2> /dev/null && kill -9 "$launcher"  # a trial that hangs: stopped, and failed
  wait "$launcher" 2> /dev/null
  codes=""
  secs=""
  good=yes
  for r in $(seq 0 $((k - 1))); do
    [ "$r" = 1 ] && continue
    line=$(grep "^launch: rank $r " "$work/err" | grep -v ': pid ' | tail -1)
    c=$(sed -n 's/.* exited with code \([0-9]*\) .*/\1/p' <<< "$line")
    s_r=$(sed -n 's/.*, \([0-9.]*\) s after the first failure.*/\1/p' <<< "$line")
    codes="${codes:+$codes,}${c:--}"
    { [ "$c" = 4 ] || [ "$c" = 5 ]; } && [ -n "$s_r" ] || good=no
    secs=$(python3 -c "print(max(float('${secs:-0}'), float('${s_r:-999}')))")
  done
  left=0
  for pid in $pids; do
    if kill -0 "$pid" 2> /dev/null; then
      left=$((left + 1))
      kill -9 "$pid" 2> /dev/null  # this trial's own rank: stopped so the next trial can run
    fi
    nvidia-smi --query-compute-apps=pid --format=csv,noheader 2> /dev/null | grep -qx "$pid" && left=$((left + 1))
  done
  ok=no
  if [ "$good" = yes ] && [ "$left" = 0 ] &&
     python3 -c "import sys; sys.exit(0 if float('$secs') <= $limit_s else 1)"; then
    ok=yes
    passed=$((passed + 1))
  fi
  worst=$(python3 -c "print(max($worst, float('${secs:-999}')))")
  echo "trial $t | ${codes:--} | ${secs:--} | $left | $ok"
  if [ "$t" = 1 ]; then cp "$work/err" "$work/first_err"; fi
done
echo
echo "== summary"
echo "variant | trials | passed | max_seconds | limit_seconds"
echo "fault trials | $trials | $passed | $worst | $limit_s"
echo
echo "== trial 1: the launcher's and the ranks' lines on stderr"
sed 's/^/  /' "$work/first_err"
