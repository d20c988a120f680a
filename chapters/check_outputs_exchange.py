#!/usr/bin/env python3
"""Every program exchanges its checks' outputs (--dump-outputs, --check-outputs), or rejects
the options with exit 2.

usage: check_outputs_exchange.py PROGRAM [ARGS...]

The lab grader's boundary (common/bench/outputs.h): the student's program runs its
checks with --dump-outputs DIR, and the reference program judges DIR with
--check-outputs DIR, launching nothing. This test runs PROGRAM --verify-only --json ARGS
(ARGS keep the run short) and passes when
  - the program exits 2 with one line naming --dump-outputs (it does not offer it), or
  - the dump exits 0 with at least one check; judging it exits 0 with the same checks,
    every one passing; and judging it again after it was damaged (run 0's bytes inverted,
    run 1's file one byte short, run 2's file deleted, a stray file added) exits 1 and
    fails exactly the checks those runs belong to (the manifest says which), each saying
    why, plus a last "outputs exchange" check naming the stray file.
Exit 77 (no GPU) is passed on as a skip.
"""
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SKIP = 77


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    checks = [json.loads(x) for x in p.stdout.splitlines() if x.startswith('{"record":"check"')]
    return p, checks


def rows_of(manifest):
    """{run k: the check row it belongs to} from the dump's manifest."""
    rows = {}
    for line in manifest.read_text().splitlines():
        m = re.match(r"row (\d+) runs (\d+) (\d+) ", line)
        if m:
            r, first, count = map(int, m.groups())
            rows.update({k: r for k in range(first, first + count)})
    return rows


def main():
    program, args = sys.argv[1], sys.argv[2:]
    base = [program, "--verify-only", "--json"] + args
    folder = Path(tempfile.mkdtemp(prefix="outputs-exchange-"))
    try:
        p, dumped = run(base + ["--dump-outputs", str(folder)])
        if p.returncode == SKIP:
            print(p.stdout + p.stderr, end="")
            return SKIP
        if p.returncode == 2:
            lines = p.stderr.strip().splitlines()
            ok = len(lines) == 1 and "--dump-outputs" in lines[0]
            print(f"{'PASS' if ok else 'FAIL'} {program}: the exchange is rejected: {p.stderr.strip()}")
            return 0 if ok else 1
        if p.returncode != 0 or not dumped:
            print(f"FAIL {' '.join(base)} --dump-outputs: exit {p.returncode}, {len(dumped)} checks\n"
                  f"{p.stdout[-3000:]}{p.stderr[-2000:]}")
            return 1
        p, judged = run(base + ["--check-outputs", str(folder)])
        same = [c["what"] for c in judged] == [c["what"] for c in dumped]
        if p.returncode != 0 or not same or not all(c["ok"] for c in judged):
            bad = [f"{c['what']}: {c['detail']}" for c in judged if not c["ok"]][:3]
            print(f"FAIL {program} --check-outputs of its own dump: exit {p.returncode}, same checks {same}, "
                  f"failed {bad}")
            return 1
        runs = sorted(folder.glob("run-*.bin"))
        rows = rows_of(folder / "manifest.txt")
        damage = {k: why for k, why in {0: "", 1: "a short file", 2: "is missing"}.items() if k < len(runs)}
        runs[0].write_bytes(bytes(255 - b for b in runs[0].read_bytes()))  # every byte wrong
        if 1 in damage:
            runs[1].write_bytes(runs[1].read_bytes()[:-1])
        if 2 in damage:
            runs[2].unlink()
        (folder / "stray.bin").write_bytes(b"x")
        p, damaged = run(base + ["--check-outputs", str(folder)])
        if p.returncode != 1 or len(damaged) != len(dumped) + 1:
            print(f"FAIL {program} --check-outputs of a damaged dump: exit {p.returncode} (expected 1), "
                  f"{len(damaged)} checks (expected {len(dumped) + 1})\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
            return 1
        failures = []
        hit = {}  # the damaged rows, each with what its damaged runs must make it say (one of)
        for k, why in damage.items():
            hit.setdefault(rows[k], []).append(why)
        for r, whys in hit.items():
            c = damaged[r]
            if c["ok"] or not any(w in c["detail"] for w in whys):
                failures.append(f"{c['what']!r} must fail saying one of {whys} ({c['detail'][:200]})")
        wrongly = [c["what"] for r, c in enumerate(damaged[:-1]) if r not in hit and not c["ok"]]
        if wrongly:
            failures.append(f"checks whose runs were not damaged failed: {wrongly[:3]}")
        last = damaged[-1]
        if last["what"] != "outputs exchange" or last["ok"] or "stray.bin" not in last["detail"]:
            failures.append(f"the last check must be a failed 'outputs exchange' naming stray.bin ({last})")
        if failures:
            print(f"FAIL {program} --check-outputs of a damaged dump:\n  " + "\n  ".join(failures))
            return 1
        print(f"PASS {program}: {len(dumped)} checks from {len(runs)} runs judged from the dump alone; "
              f"{len(damage)} damaged runs failed their {len(hit)} checks, and a stray file the last")
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
