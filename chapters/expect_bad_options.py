#!/usr/bin/env python3
"""Options that do not go together must exit 2 with one line naming the option, GPU or not.

usage: CHAPTER_EXE=PROGRAM expect_bad_options.py   (chapters/meson.build sets it)

check_bad_input.py tries every option alone; these are the combinations that a problem
refuses in validate(), before it looks for a GPU. The GEMM problem's (common/problems/gemm.h,
chapters 19 to 21): --size beside a side, --large without --verify-only or beside a shape,
--config without a configurable step. Chapter 18's: a tile that the step --variant names is
not compiled for (its lean steps take 384 or 512 threads and 16, 20 or 24 rows only). Each must
exit 2, print nothing on stdout and one line on stderr that names the option; and the same
options in a combination that does go together must not exit 2 (0 or 77: no GPU). A
combination that holds an option the program's --help does not list (chapter 19 has no
--type, chapter 18 no --size), or names a --variant or --config value the program does not
list, is left out (check_bad_input.py refuses unknown options and choices).
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
       (["--config", "sm75", "--variant", "vector-transposed", "--verify-only"], "--config"),
       (["--config", "k32-s4", "--variant", "mma-cp-async"], "--config"),
       (["--variant", "onesweep-lean", "--block", "256"], "--block"),
       (["--variant", "onesweep-lean-hist", "--tile-rows", "8", "--block", "384"], "--tile-rows")]
GOOD = [["--size", "5"], ["--m", "3", "--n", "5", "--k", "7", "--verify-only"],
        ["--verify-only", "--large"], ["--config", "sm80", "--variant", "warp-tiled"],
        ["--config", "sm75"], ["--config", "k32-s4", "--variant", "mma-ahead"],
        ["--alpha", "2", "--beta", "-1", "--verify-only"],
        ["--type", "fp16", "--size", "5", "--variant", "mma-sync"],
        ["--type", "bf16", "--verify-only", "--large"],
        ["--variant", "onesweep-lean", "--tile-rows", "20", "--block", "384"],
        ["--variant", "onesweep-lean-hist", "--tile-rows", "16", "--block", "512"],
        ["--tile-rows", "8", "--block", "256"]]


def main():
    program = os.environ["CHAPTER_EXE"]
    env = {k: v for k, v in os.environ.items() if k != "REQUIRE_GPU"}
    env["CUDA_VISIBLE_DEVICES"] = ""  # a good combination stops at the GPU check (77)
    usage = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=60).stdout
    offered = set(re.findall(r"^\s+(--[\w-]+)", usage, re.M))
    def choices(option):  # the values --help lists for an option, in parentheses at the end
        found = re.search(rf"^\s+{option} X .*\((.*)\)", usage, re.M)
        return {v.strip() for v in found.group(1).split(",")} if found else set()
    listed = {option: choices(option) for option in ("--variant", "--config")}
    def has_choices(args):
        return all(o not in args or args[args.index(o) + 1] in values for o, values in listed.items())
    def applies(args):
        return all(a in offered for a in args if a.startswith("--")) and has_choices(args)
    bad = [(args, name) for args, name in BAD if applies(args)]
    good = [args for args in GOOD if applies(args)]
    failures = 0
    for args, name in bad:
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
    print(f"{len(bad) + len(good)} cases, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
