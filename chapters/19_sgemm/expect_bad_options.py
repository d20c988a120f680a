#!/usr/bin/env python3
"""Options that do not go together must exit 2 with one line naming the option, GPU or not.

usage: CHAPTER_EXE=PROGRAM expect_bad_options.py   (chapters/meson.build sets it)

check_bad_input.py tries every option alone; these are the GEMM problem's combinations
(common/problems/gemm.h) that it refuses in validate(), before it looks for a GPU: --size
beside a side, --large without --verify-only or beside a shape, --config without a
configurable step. Each must exit 2, print nothing on stdout and one line on stderr that
names the option; and the same options in a combination that does go together must not
exit 2 (0 or 77: no GPU). Chapters 19 and 20 both run it: a combination that holds an
option the program's --help does not list (chapter 20 has no --config, chapter 19 no
--type) is left out of GOOD (in BAD it is refused all the same: an unknown option).
"""
import os
import re
import subprocess
import sys

BAD = [(["--size", "5", "--m", "3"], "--size"),
       (["--size", "5", "--k", "3", "--verify-only"], "--size"),
       (["--large"], "--large"),
       (["--verify-only", "--large", "--n", "4"], "--large"),
       (["--verify-only", "--large", "--size", "4"], "--large"),
       (["--config", "sm80", "--variant", "naive"], "--config"),
       (["--config", "sm75", "--variant", "vector-transposed", "--verify-only"], "--config")]
GOOD = [["--size", "5"], ["--m", "3", "--n", "5", "--k", "7", "--verify-only"],
        ["--verify-only", "--large"], ["--config", "sm80", "--variant", "warp-tiled"],
        ["--config", "sm75"], ["--alpha", "2", "--beta", "-1", "--verify-only"],
        ["--type", "fp16", "--size", "5", "--variant", "mma-sync"],
        ["--type", "bf16", "--verify-only", "--large"]]


def main():
    program = os.environ["CHAPTER_EXE"]
    env = {k: v for k, v in os.environ.items() if k != "REQUIRE_GPU"}
    env["CUDA_VISIBLE_DEVICES"] = ""  # a good combination stops at the GPU check (77)
    usage = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=60).stdout
    offered = set(re.findall(r"^\s+(--[\w-]+)", usage, re.M))
    variants = re.search(r"--variant X .*\((.*)\)", usage)
    steps = {v.strip() for v in variants.group(1).split(",")} if variants else set()
    good = [args for args in GOOD
            if all(a in offered for a in args if a.startswith("--"))
            and ("--variant" not in args or args[args.index("--variant") + 1] in steps)]
    failures = 0
    for args, name in BAD:
        p = subprocess.run([program] + args, capture_output=True, text=True, timeout=60, env=env)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        ok = p.returncode == 2 and not p.stdout.strip() and len(lines) == 1 and name in lines[0]
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    for args in good:
        p = subprocess.run([program] + args, capture_output=True, text=True, timeout=60, env=env)
        ok = p.returncode in (0, 77)
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {' '.join(args)}: exit {p.returncode} (accepted)")
    print(f"{len(BAD) + len(good)} cases, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
