#!/usr/bin/env python3
"""The seconds of a grader's LAB_RUN_LOG file summed by kind of program run.

    python3 docs/evidence/runs_log_summary.py RUNS_LOG

Kinds: the builds (meson, ninja), each step's checked runs (the sweep, or the repeats: a
--repeat run, or before --repeat a run at --n 16777219, the repeat size of the --n tasks), the
trusted judge (the reference program with
--check-outputs), the sanitizers by tool and program. Runs overlap in time (the grader runs
checks side by side), so a sum is run-seconds, not wall time.
"""
import collections, re, sys
tot, cnt = collections.Counter(), collections.Counter()
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d.]+) s\s+exit (-?\d+)\s+(.*)", line)
    if not m:
        continue
    sec, cmd = float(m[1]), m[3]
    if "ninja" in cmd or "meson setup" in cmd:
        k = "build (" + cmd.split()[0] + ")"
    elif "compute-sanitizer" in cmd:
        k = "sanitizer " + re.search(r"--tool (\w+)", cmd)[1] + " " + re.search(r"/(\d\d_\w+)", cmd)[1]
    elif "--check-outputs" in cmd:
        k = "judged by the reference (--check-outputs)"
    elif "--verify-only" in cmd:
        v = re.search(r"--variant (\S+)", cmd)
        k = "checked run " + (v[1] if v else "(every step)") + (" repeats" if "--repeat " in cmd or "--n 16777219" in cmd
                                                          else " sweep/other")
    else:
        k = " ".join(cmd.split()[:2])
    tot[k] += sec
    cnt[k] += 1
print(f"{'seconds':>9} {'runs':>5}  kind (run-seconds: runs overlap in time)")
for k, v in sorted(tot.items(), key=lambda x: -x[1]):
    print(f"{v:9.1f} {cnt[k]:5d}  {k}")
