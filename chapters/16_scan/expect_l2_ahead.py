#!/usr/bin/env python3
"""The L2 prefetch distance's knob, STEPWISE_L2_AHEAD_KIB (scan_tile_io.cuh), on a GPU.

usage: CHAPTER_EXE=PROGRAM expect_l2_ahead.py   (chapters/meson.build sets it)

lookback-l2-prefetch checked (--verify-only) at the distance's ends, 1 KiB (one tile ahead)
and 65536 KiB (past the input: no prefetch lands), and at 8192: each exits 0 with the
one-line note naming the distance on stderr. A value that is not an integer from 1 to 65536
exits 2 with one error line naming STEPWISE_L2_AHEAD_KIB. 77 when the program finds no GPU (it
reads the knob at its first prefetching launch).
"""
import os
import subprocess
import sys

ARGS = ["--variant", "lookback-l2-prefetch", "--n", "1000003", "--verify-only"]
GOOD = ["1", "8192", "65536"]
BAD = ["0", "65537", "4M", "-8", ""]


def run(value):
    env = dict(os.environ, STEPWISE_L2_AHEAD_KIB=value)
    return subprocess.run([os.environ["CHAPTER_EXE"]] + ARGS, env=env, capture_output=True,
                          text=True, timeout=300)


def main():
    failures = 0
    for value in GOOD:
        p = run(value)
        if p.returncode == 77:
            print(p.stdout.strip() or "skipped: no GPU")
            return 77
        noted = f"STEPWISE_L2_AHEAD_KIB={value}:" in p.stderr
        ok = p.returncode == 0 and noted
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} STEPWISE_L2_AHEAD_KIB={value}: exit {p.returncode}"
              + ("" if noted else ", no note on stderr"))
    for value in BAD:
        p = run(value)
        lines = p.stderr.strip().splitlines()
        errors = [line for line in lines if line.startswith("error:")]
        ok = p.returncode == 2 and len(errors) == 1 and "STEPWISE_L2_AHEAD_KIB" in errors[0]
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} STEPWISE_L2_AHEAD_KIB={value!r}: exit {p.returncode}, "
              f"stderr {lines[-1] if lines else '(none)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
