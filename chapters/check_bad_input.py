#!/usr/bin/env python3
"""Bad input must give exit code 2 and one line that names the option.

usage: check_bad_input.py PROGRAM [--gpu]

Runs PROGRAM with each kind of bad input: an unknown option, a value to a flag
(--json=1, --list=1), and for every option that takes a value (read from PROGRAM
--help, with its range, so every chapter is covered without a list here): a
missing value, a non-number, a value just outside its range (below and above),
a choice it does not offer. The size options also get zero, a negative number,
a fraction and 2^62, and (for GPU programs, on a GPU) a size too large for device
memory (a size option whose range ends below 2^40, such as chapter 19's sides of at most
2^16, refuses 2^40 when parsing, which the out-of-range cases check). --list is a flag, not a size: bad input next to it still exits 2. Every option
of --help (flags too, --help itself aside) is also given twice, each time with a valid
value and --list beside it: the line must say that option was given twice.
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


def valid_value(rng):
    """A value the option takes, from its range as --help shows it."""
    m = re.fullmatch(r"(-?[\d.e+]+) to (-?[\d.e+]+)", rng)
    if m:
        return m.group(1)
    if rng == "a non-empty text":
        return "x"
    return rng.split(",")[0].strip()  # choices: "all, cub, naive"


def main():
    program, gpu = sys.argv[1], "--gpu" in sys.argv[2:]
    code, usage, _ = run(program, ["--help"])
    if code != 0 or "usage:" not in usage:
        print(f"FAIL --help: exit {code}, expected 0 and a usage text")
        return 1
    # "  --block X               threads per block (32 to 1024)": name and range.
    valued = re.findall(r"^\s+(--[\w-]+) X .*\(([^()]*)\)\s*$", usage, re.M)
    sizes = [o for o, _ in valued if o in SIZE_OPTIONS]
    if not sizes:
        print("FAIL --help lists none of " + ", ".join(SIZE_OPTIONS))
        return 1

    cases = [(["--bogus"], "--bogus"), (["--json=1"], "--json"), (["--list=1"], "--list"),
             (["--list", "--n" if "--n" in sizes else sizes[0], "abc"], "--n" if "--n" in sizes else sizes[0])]
    for opt, rng in valued:
        cases += [([opt], opt)]
        if rng != "a non-empty text":  # any text may be a valid value (a file name)
            cases += [([opt, "abc"], opt)]
        m = re.fullmatch(r"(-?\d+) to (-?\d+)", rng)
        if m:
            cases += [([opt, str(int(m.group(1)) - 1)], opt), ([opt, str(int(m.group(2)) + 1)], opt)]
        elif re.fullmatch(r"(-?[\d.e+]+) to (-?[\d.e+]+)", rng):
            hi = float(rng.split(" to ")[1])
            cases += [([opt, repr(hi * 2 + 1)], opt)]
        elif "," in rng or re.fullmatch(r"[\w.-]+", rng):  # choices: "uniform, equal, skewed"
            cases += [([opt, "no-such-choice"], opt)]
    for opt in sizes:
        cases += [([opt, "0"], opt), ([opt, "-5"], opt), ([opt, "1.5"], opt), ([opt, "2^62"], opt)]
    # Twice: "--n 1 --n 1", "--json --json". The same valid value both times, so that only
    # the repeat is wrong; the message must name the option and say it came twice. --list
    # (once) beside it: a program that took the line would list its steps and exit 0 at
    # once, not run.
    for opt, rng in valued:
        value = valid_value(rng)
        cases += [([opt, value, opt, value, "--list"], f"{opt} given twice")]
    flags = re.findall(r"^\s+(--[\w-]+)(?! X )\s{2,}\S", usage, re.M)
    if "--json" not in flags or "--list" not in flags:
        print("FAIL --help lists no flag --json or --list (the flags are read from it)")
        return 1
    for opt in flags:
        if opt != "--help":
            cases += [([opt, opt] + (["--list"] if opt != "--list" else []), f"{opt} given twice")]
    failures, seen = 0, set()
    for args, name in cases:
        if tuple(args) in seen:
            continue
        seen.add(tuple(args))
        code, out, err = run(program, args)
        lines = [l for l in err.splitlines() if l.strip()]
        ok = code == 2 and len(lines) == 1 and name in lines[0] and not out.strip()
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {' '.join(args)}: exit {code}: {err.strip()}")

    if gpu:
        # Parses fine, but no GPU has 2^40 elements' worth of memory.
        tops = {o: rng.split(" to ")[1] for o, rng in valued if " to " in rng}
        for opt in sizes:
            top = tops.get(opt, "")
            if top.isdigit() and int(top) < 2**40:
                print(f"SKIP {opt} 2^40: above its range (to {top}), refused when parsing "
                      f"(the case {opt} {int(top) + 1} above)")
                continue
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
    print(f"{len(seen)} bad-input cases, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
