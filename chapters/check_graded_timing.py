#!/usr/bin/env python3
"""Every program honours --graded-timing, or rejects it with exit 2.

usage: check_graded_timing.py PROGRAM [ARGS...]

The lab grader times a student's step with --graded-timing: every timed call on new
input, poisoned and checked, the device idle at the end of each window
(common/bench/protocol.h). A program that accepted the option and timed the
ordinary way would grade a cheat as a pass (the scan track did, until the protocol
was written once). This test runs PROGRAM --graded-timing --json --reps 2 --warmup 1
ARGS (ARGS keep the run short) and passes when
  - the program exits 2 with one line naming --graded-timing (it does not offer it), or
  - it exits 0 and every measured row (n > 0; not a host row, role "cpu" or "lesson";
    not a ceiling the chapter times outside its problem, such as chapter 12's
    host-to-device copy) carries the graded timing's record (extra graded_wrong), or
    the protocol's word that it timed the row as usual (extra graded_as_usual: a vendor
    row, the library's code, which the grader does not grade; chapter 06 files CUB's
    small sums under role "sweep" after measuring them as vendor rows), with at least
    one row.
Exit 77 (no GPU) is passed on as a skip; with REQUIRE_GPU=1 the program fails instead.
Run it with the GPU to itself: another process's kernels on the same GPU delay the
window's end, and the gap test counts them as work the events did not see (on an H100,
beside the lab suite: gaps of about 2.4 ms, one time slice). The suite 'graded' holds
these tests; the sanitize setup leaves it out, for the same reason.
"""
import json
import subprocess
import sys

SKIP = 77
HOST_ROLES = ("cpu", "lesson")
GRADED_KEYS = ("graded_wrong", "graded_as_usual")  # a graded row's record, a vendor row's
UNCHECKED = {("12", "h2d-copy-pinned")}  # (chapter, variant): copies only, nothing of ours to check


def rows_without_graded(stdout):
    rows, missing = 0, []
    for line in stdout.splitlines():
        if not line.startswith('{"record":"result"'):
            continue
        r = json.loads(line)
        if r.get("n", 0) <= 0 or r.get("role") in HOST_ROLES or (r.get("chapter"), r["variant"]) in UNCHECKED:
            continue
        rows += 1
        if not any(k in (r.get("extra") or {}) for k in GRADED_KEYS):
            missing.append(f'{r["variant"]} ({r.get("problem", "")}, {r.get("note", "")}, n={r["n"]})')
    return rows, missing


def main():
    program, args = sys.argv[1], sys.argv[2:]
    cmd = [program, "--graded-timing", "--json", "--reps", "2", "--warmup", "1"] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if p.returncode == SKIP:
        print(p.stdout + p.stderr, end="")
        return SKIP
    if p.returncode == 2:
        lines = p.stderr.strip().splitlines()
        if len(lines) == 1 and "--graded-timing" in lines[0]:
            print(f"PASS {program}: --graded-timing is rejected: {lines[0]}")
            return 0
        print(f"FAIL {program}: exit 2 without one line naming --graded-timing:\n{p.stderr}")
        return 1
    if p.returncode != 0:
        print(f"FAIL {' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-4000:]}{p.stderr[-4000:]}")
        return 1
    rows, missing = rows_without_graded(p.stdout)
    if rows == 0:
        print(f"FAIL {' '.join(cmd)}: no measured row")
        return 1
    if missing:
        print(f"FAIL {program} ignores --graded-timing: {len(missing)} of {rows} rows were timed the "
              "ordinary way:\n  " + "\n  ".join(missing))
        return 1
    print(f"PASS {program}: {rows} rows, every one graded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
