#!/usr/bin/env python3
"""Racecheck must flag chapter 05's volatile last warp and pass its __syncwarp one.

usage: CHAPTER_EXE=PROGRAM COMPUTE_SANITIZER=PATH expect_race.py
(chapters/meson.build sets both)

Runs PROGRAM --verify-only on a small input under `compute-sanitizer --tool
racecheck`, once with --variant volatile-warp (the anti-example: the RACECHECK
SUMMARY line must count at least one hazard) and once with --variant syncwarp
(it must count none). Exit 77 (skipped) without a GPU, unless REQUIRE_GPU=1.
"""
import os
import re
import subprocess
import sys

SKIP = 77
SMALL = ["--verify-only", "--n", "4099", "--block", "256"]  # 9 blocks, a short tail
SUMMARY = re.compile(r"RACECHECK SUMMARY:\s*(\d+)\s+hazard")


def hazards(sanitizer, program, variant):
    cmd = [sanitizer, "--tool", "racecheck", program] + SMALL + ["--variant", variant]
    # Outputs poisoned, shared memory not (common/data.h), as in every run under the sanitizer.
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=540,
                       env=dict(os.environ, STEPWISE_POISON="outputs"))
    out = p.stdout + p.stderr
    m = SUMMARY.search(out)
    if m:
        return int(m.group(1)), out
    # Some versions print no summary when nothing was found; a clean run still
    # ends with "ERROR SUMMARY: 0 errors".
    if re.search(r"ERROR SUMMARY:\s*0 errors", out):
        return 0, out
    return None, out


def main():
    sanitizer, program = os.environ["COMPUTE_SANITIZER"], os.environ["CHAPTER_EXE"]
    # Without a GPU the program exits 77 (or 1 under REQUIRE_GPU=1) before any kernel.
    probe = subprocess.run([program, "--verify-only", "--n", "1", "--variant", "shuffle"],
                           capture_output=True, text=True, timeout=120)
    if probe.returncode == SKIP:
        if os.environ.get("REQUIRE_GPU") == "1":
            print("FAIL: no GPU but REQUIRE_GPU=1: " + probe.stderr.strip())
            return 1
        print("SKIP: " + probe.stderr.strip())
        return SKIP
    if probe.returncode != 0:
        print(f"FAIL: {program} --verify-only --n 1 exited {probe.returncode}\n{probe.stdout}{probe.stderr}")
        return 1

    if not sanitizer:
        print("SKIP: compute-sanitizer not found")
        return SKIP

    failures = 0
    for variant, want_race in (("volatile-warp", True), ("syncwarp", False)):
        count, out = hazards(sanitizer, program, variant)
        if count is None:
            ok = False
            why = "no RACECHECK SUMMARY line"
        else:
            ok = count > 0 if want_race else count == 0
            why = f"{count} hazard(s), expected {'at least one' if want_race else 'none'}"
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} racecheck --variant {variant}: {why}")
        if not ok:
            print(out[-4000:])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
