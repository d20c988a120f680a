#!/usr/bin/env python3
"""The grades a self-test cut short had stored, against the grades its catalogue expects.

    python3 docs/evidence/labs_grades_so_far.py CHECKED_DIR TRACK

CHECKED_DIR is the `checked/` folder of a self-test's --out (`<student>--<task>.checked.json`,
one per task whose checks ended, the members of a group of the same code included).
A task's stored result is its own; the sheet says NOT_RUN for a task whose required task
did not pass unless it is NOT_IMPLEMENTED or BUILD_FAIL (grade.py's check_all), and so
does this comparison. The expectations are planted again here (selftest.plant), as the
self-test does.
A line per stored grade that is not the expected one, then the counts.
"""
import json, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "chapters" / "labs"), str(ROOT / "chapters" / "labs" / "instructor")]
import selftest  # noqa: E402
import tasks as T  # noqa: E402

folder, track = Path(sys.argv[1]), sys.argv[2]
with tempfile.TemporaryDirectory() as d:
    expected, _ = selftest.plant(track, Path(d) / "subs", timing=False)
stored = {tuple(f.name[: -len(".checked.json")].rsplit("--", 1)): json.loads(f.read_text())["result"]["status"]
          for f in sorted(folder.glob("*.checked.json"))}
counts, bad = {}, 0
for (student, task), got in stored.items():
    if got not in ("NOT_IMPLEMENTED", "BUILD_FAIL") and any(
            stored.get((student, r), "PASS") != "PASS" for r in T.task(task).requires):
        got = "NOT_RUN"  # as the sheet says (a required task not stored yet counts as passed)
    want = expected.get(student, {}).get(task, {}).get("status", "(not planted)")
    counts[task] = counts.get(task, 0) + 1
    if got not in want.split("|"):
        bad += 1
        print(f"unexpected: {student}/{task}: expected {want}, got {got}")
print(f"{sum(counts.values())} stored grades ({', '.join(f'{t} {n}' for t, n in sorted(counts.items()))}) of "
      f"{len(expected)} submissions planted: {bad} unexpected")
