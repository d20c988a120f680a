#!/usr/bin/env python3
"""Bad input must give exit code 2 and one line that names the option.

usage: check_bad_input.py PROGRAM [--gpu]

Runs PROGRAM with each kind of bad input: an unknown option, a non-number, zero,
a negative number, a value beyond the option's range, a missing value, and (for
GPU programs, on a GPU) a size too large for device memory. The size options are
read from PROGRAM --help, so every chapter is covered without a list here.
"""
import os
import re
import subprocess
import sys

SIZE_OPTIONS = ("--n", "--rows", "--cols", "--bytes")
SKIP = 77


def run(program, args):
    p = subprocess.run([program] + args, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def main():
    program, gpu = sys.argv[1], "--gpu" in sys.argv[2:]
    code, usage, _ = run(program, ["--help"])
    if code != 0 or "usage:" not in usage:
        print(f"FAIL --help: exit {code}, expected 0 and a usage text")
        return 1
    sizes = [o for o in SIZE_OPTIONS if re.search(rf"^\s+{re.escape(o)} X", usage, re.M)]
    if not sizes:
        print("FAIL --help lists none of " + ", ".join(SIZE_OPTIONS))
        return 1

    cases = [(["--bogus"], "--bogus"), (["--reps", "0"], "--reps"), (["--reps"], "--reps"),
             (["--seed", "-1"], "--seed"), (["--warmup", "many"], "--warmup")]
    for opt in sizes:
        cases += [([opt, "abc"], opt), ([opt, "0"], opt), ([opt, "-5"], opt),
                  ([opt, "1.5"], opt), ([opt, "2^62"], opt)]
    failures = 0
    for args, name in cases:
        code, out, err = run(program, args)
        lines = [l for l in err.splitlines() if l.strip()]
        ok = code == 2 and len(lines) == 1 and name in lines[0] and not out.strip()
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {' '.join(args)}: exit {code}: {err.strip()}")

    if gpu:
        # Parses fine, but no GPU has 2^40 elements' worth of memory.
        for opt in sizes:
            args = [opt, "2^40"] if opt != "--rows" else ["--rows", "2^20", "--cols", "2^20"]
            code, out, err = run(program, args)
            if code == SKIP:
                if os.environ.get("REQUIRE_GPU") == "1":
                    print(f"FAIL {' '.join(args)}: skipped but REQUIRE_GPU=1")
                    failures += 1
                else:
                    print(f"SKIP {' '.join(args)}: no GPU to compare against")
                continue
            lines = [l for l in err.splitlines() if l.strip()]
            ok = code == 2 and len(lines) == 1 and opt in lines[0] and "valid range" in lines[0]
            failures += not ok
            print(f"{'PASS' if ok else 'FAIL'} {' '.join(args)}: exit {code}: {err.strip()}")
    print(f"{len(cases)} bad-input cases, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
