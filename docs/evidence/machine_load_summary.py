#!/usr/bin/env python3
"""How busy a GPU machine's CPU and GPU were while a call ran, a line a minute.

    python3 docs/evidence/machine_load_summary.py VMSTAT_LOG SMI_LOG [--every SECONDS] [--gpu N]

VMSTAT_LOG is `vmstat -t 5` output; SMI_LOG is `nvidia-smi --query-gpu=timestamp,
utilization.gpu,memory.used,power.draw --format=csv -l 5` output, both sampled every 5 s
during the call. On a machine of several GPUs the query has `index` after the timestamp
and --gpu N reads GPU N's lines only. Each line averages the samples of one window: CPU busy (user + system, % of
every core), processes ready to run, GPU busy (% of the time a kernel ran), GPU memory and
power. A CPU and a GPU both well below 100 % mean the work ran too few things at once.
"""
import argparse, datetime as dt, statistics, sys


def vmstat(path):
    """(time, busy %, runnable, free GiB) per sample; the header lines repeat and are skipped."""
    rows = []
    for line in open(path):
        f = line.split()
        if len(f) < 19 or not f[0].isdigit():
            continue
        t = dt.datetime.fromisoformat(f"{f[-2]} {f[-1]}")
        rows.append((t, int(f[12]) + int(f[13]), int(f[0]), int(f[3]) / 2**20))
    return rows[1:]  # vmstat's first line averages since boot


def smi(path, gpu=None):
    """(time, GPU busy %, memory MiB, power W) per sample (of GPU `gpu` where the log has
    an index column)."""
    rows = []
    for line in open(path):
        f = [x.strip() for x in line.split(",")]
        if len(f) == 5 and f[1].isdigit():  # timestamp, index, ...
            if gpu is None:
                sys.exit(f"machine_load_summary: {path} has several GPUs' lines: say which with --gpu")
            if int(f.pop(1)) != gpu:
                continue
        if len(f) != 4 or not f[1].endswith("%"):
            continue
        t = dt.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f")
        rows.append((t, float(f[1].split()[0]), float(f[2].split()[0]), float(f[3].split()[0])))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("vmstat")
    p.add_argument("smi")
    p.add_argument("--every", type=int, default=60, help="seconds a line (default 60)")
    p.add_argument("--gpu", type=int, help="the GPU (index) of a log with an index column")
    a = p.parse_args()
    cpu, gpu = vmstat(a.vmstat), smi(a.smi, a.gpu)
    if not cpu or not gpu:
        sys.exit(f"machine_load_summary: no samples in {a.vmstat if not cpu else a.smi}")
    start = min(cpu[0][0], gpu[0][0].replace(microsecond=0))
    windows = {}
    for t, *v in cpu:
        windows.setdefault(int((t - start).total_seconds()) // a.every, ([], []))[0].append(v)
    for t, *v in gpu:
        windows.setdefault(int((t - start).total_seconds()) // a.every, ([], []))[1].append(v)
    print(f"{'from s':>6} {'CPU busy %':>10} {'ready':>6} {'free GiB':>8} {'GPU busy %':>10} {'GPU MiB':>8} {'W':>5}")
    mean = lambda xs, i: statistics.mean(x[i] for x in xs) if xs else float("nan")
    for w in sorted(windows):
        c, g = windows[w]
        print(f"{w * a.every:6d} {mean(c, 0):10.0f} {mean(c, 1):6.1f} {mean(c, 2):8.1f} "
              f"{mean(g, 0):10.0f} {mean(g, 1):8.0f} {mean(g, 2):5.0f}")
    print(f"{'whole':>6} {mean(cpu, 1):10.0f} {mean(cpu, 2):6.1f} {'':>8} {mean(gpu, 1):10.0f} "
          f"{max(x[2] for x in gpu):8.0f} {mean(gpu, 3):5.0f}  (GPU MiB: the most)")


main()
