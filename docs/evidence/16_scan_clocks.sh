#!/usr/bin/env bash
# Evidence for docs/16_scan.md (issue 46's H200 scan goal): are chapter 16's u32 rows slower
# than its f32 rows because the GPU runs them at another clock or power? The protocol reads
# the SM clock and power only for compute-bound rows, so this probe samples the board from
# outside: nvidia-smi every 100 ms (SM clock, power, the active clock-throttle reasons) while
# lookback-l2-prefetch at 4 x 256 and n = 2^28 runs with CUB beside it, each type alone in
# its own process with REPS timed runs (default 3000: about 2 s of each timed row, so most
# samples fall in the timed runs). Samples drawing under 300 W (data generation, checks,
# launches; the GPU mostly idle) are left out. One line per process: round, type, our
# inclusive row's GB/s and % of copy, CUB's inclusive GB/s, then over the busy samples the
# median and lowest SM clock, the median and highest power, and the throttle reasons seen
# (hex, joined by |).
# By hand: an A/B with an output folder of its own (not for .ci/gpu-run evidence).
# usage: bash docs/evidence/16_scan_clocks.sh <build_dir> <out_dir> [ROUNDS] [REPS]
set -u
build=${1:?usage: 16_scan_clocks.sh <build_dir> <out_dir> [ROUNDS] [REPS]}
out=${2:?usage: 16_scan_clocks.sh <build_dir> <out_dir> [ROUNDS] [REPS]}
rounds=${3:-2} reps=${4:-3000}
mkdir -p "$out"
echo "round type  GB/s  %copy  cub_GB/s  MHz_median  MHz_low  W_median  W_high  throttle"
for r in $(seq 1 "$rounds"); do
  for type in u32 f32; do
    smi="$out/smi-$r-$type.csv" run="$out/run-$r-$type.txt"
    nvidia-smi --query-gpu=clocks.sm,power.draw,clocks_throttle_reasons.active \
      --format=csv,noheader,nounits -lms 100 > "$smi" 2>&1 &
    sampler=$!
    timeout 120 "$build/chapters/16_scan" --n 268435456 --variant lookback-l2-prefetch \
      --tile-rows 4 --block 256 --type "$type" --reps "$reps" > "$run" 2>&1
    kill "$sampler" 2> /dev/null
    wait "$sampler" 2> /dev/null
    python3 - "$r" "$type" "$run" "$smi" <<'PY'
import statistics, sys
r, ty, run, smi = sys.argv[1:]
ours = cub = None
for line in open(run):
    f = line.split()
    if len(f) < 7 or "inclusive" not in f:  # the inclusive rows, as the order probe reads
        continue
    if f[0] == "lookback-l2-prefetch":
        ours = (float(f[5]), f[6])
    elif f[0] == "cub":
        cub = float(f[5])
mhz, watts, reasons = [], [], set()
for line in open(smi):
    f = [x.strip() for x in line.split(",")]
    try:
        m, w = float(f[0]), float(f[1])
    except (ValueError, IndexError):
        continue
    if w < 300:
        continue
    mhz.append(m), watts.append(w), reasons.add(f[2])
if ours is None or cub is None or not mhz:
    print(f"{r} {ty} (no row or no busy sample: see {run}, {smi})")
else:
    print(f"{r} {ty} {ours[0]:.1f} {ours[1]} {cub:.1f} {statistics.median(mhz):.0f} {min(mhz):.0f} "
          f"{statistics.median(watts):.0f} {max(watts):.0f} {'|'.join(sorted(reasons))}")
PY
  done
done
