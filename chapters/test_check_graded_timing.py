#!/usr/bin/env python3
"""check_graded_timing.py's reading of a program's rows, on rows written here (no GPU).

A row passes when it carries the graded timing's record (graded_wrong) or the protocol's
word that it timed the row as usual (graded_as_usual: a vendor row, whatever role the
chapter files it under afterwards, as chapter 06 does with CUB's small sums); host rows
and rows without elements are not counted. Each case below fails if its rule is removed.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_graded_timing as cgt  # noqa: E402


def row(variant, role, extra, n=1024):
    return json.dumps({"record": "result", "variant": variant, "role": role, "n": n, "chapter": "06",
                       "extra": extra}, separators=(",", ":"))


CASES = [  # (what, rows, counted, missing variants)
    ("a graded step row", [row("two-pass", "step", {"graded_wrong": 0})], 1, []),
    ("a step row timed the ordinary way", [row("two-pass", "step", {})], 1, ["two-pass"]),
    ("a vendor row that says it was timed as usual", [row("cub", "vendor", {"graded_as_usual": 1})], 1, []),
    ("a vendor row that does not say so", [row("cub", "vendor", {})], 1, ["cub"]),
    ("CUB filed under role sweep, timed as usual", [row("cub", "sweep", {"graded_as_usual": 1})], 1, []),
    ("a host row", [row("cpu-kahan", "cpu", {})], 0, []),
    ("a row without elements", [row("empty-kernel", "lesson", {}, n=0)], 0, []),
]


def main():
    failures = 0
    for what, rows, counted, missing in CASES:
        got_rows, got_missing = cgt.rows_without_graded("\n".join(["a table line"] + rows))
        got = [m.split(" ")[0] for m in got_missing]
        ok = got_rows == counted and got == missing
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {what}: {got_rows} counted, missing {got}")
    print(f"check_graded_timing: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
