"""A class of generated submissions with the grades they must get: what a term's grading
looks like, graded in parts on several GPUs and compared line by line.

    python3 chapters/labs/lab.py class reduce 40 ~/class            # ~/class/submissions/student-01 ... -40,
                                                                    # ~/class/expected.csv, ~/class/class.json
    python3 chapters/labs/lab.py grade reduce ~/class/submissions --part 1/2 --out ~/class/part1 ...  (GPU 0)
    python3 chapters/labs/lab.py grade reduce ~/class/submissions --part 2/2 --out ~/class/part2 ...  (GPU 1)
    python3 chapters/labs/lab.py grade reduce --merge ~/class/part1 ~/class/part2 --out ~/class/grades
    python3 chapters/labs/lab.py class reduce --compare ~/class/expected.csv ~/class/grades   # exit 1: a grade differs
    python3 chapters/labs/lab.py class reduce --record DEST --parts P1 P2 --walls S1 S2      # DEST/class.json

Every student starts from the track's student copy (the real export, made once and
copied) and writes every task: each region gets a correct solution drawn with --seed
from the corpus of solutions written unlike the reference (corpus.py; the reference's
own code where the corpus has none for a region), and a share of the students
(--mistakes) has one task that holds a catalogued mistake (mistakes.py) instead, in the
reference's code as the self-test plants it. A task that needs the mistaken one is then
expected NOT_RUN (selftest.propagate, the grader's rule). Each region also gets a comment
naming its student: no two students hand in the same code, as in a real class (the
grader checks equal code once, so a class of equal copies would measure that reuse, not
the grading). answers.md gets a few sentences of the student's own.

Left out of the draw: a mistake that may pass (an expected status that lists PASS), one
that may hang (TIMEOUT: it costs the time limit of every run, which measures --timeout,
not the grader), one that only a sanitizer may catch when the class is graded with
--no-sanitizer, and one whose file is compiled by the checks of a task that does not
need its task (the self-test's packing rule: its grade would then depend on the other
task's code). class.json says which were left out.

expected.csv: student, task, expected (a|b: either), kind (correct, mistake, or needs:
a required task does not pass), solution (the corpus or catalogue name), says (a part of
the line the grader must print). --compare reads it and the grade sheet with the
self-test's comparison (selftest.compare).
"""
import argparse
import contextlib
import csv
import datetime
import io
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

LABS = Path(__file__).resolve().parent.parent
ROOT = LABS.parent.parent
sys.path.insert(0, str(LABS))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tasks as T  # noqa: E402
from labkit import regions  # noqa: E402

import corpus  # noqa: E402
import mistakes  # noqa: E402
from export import ANSWERS_FILE, export  # noqa: E402
from grade import add_arguments as add_grade_arguments, usage_error  # noqa: E402
from selftest import apply, compare, propagate, related  # noqa: E402

EXPECTED = ["student", "task", "expected", "kind", "solution", "says"]
MISTAKE_SHARE = 0.25  # the share of students with one mistaken task (--mistakes)


def eligible_mistakes(track, sanitizer=True):
    """({task: [Mistake]} that may be drawn, [names left out, with why])."""
    tasks = {t.id: t for t in T.track_tasks(track)}
    # What a task's checks may compile: its chapters' folders, and its own region files.
    compiled = {tid: [f"chapters/{c.chapter}/" for c in t.checks] + [r.file for r in t.regions]
                for tid, t in tasks.items()}
    out, left = {}, []
    for tid, entries in mistakes.MISTAKES.items():
        if tid not in tasks:
            continue
        for m in entries:
            can = set(m.expect.split("|"))
            others = [o for o in tasks if o != tid and not related(tasks[o], tasks[tid])
                      and any(m.file == f or (f.endswith("/") and m.file.startswith(f)) for f in compiled[o])]
            why = ("may pass" if "PASS" in can else "may hang until the time limit" if "TIMEOUT" in can else
                   "only a sanitizer may catch it" if not sanitizer and "SANITIZER" in can else
                   f"its file is compiled by {', '.join(others)}" if others else "")
            if why:
                left.append(f"{tid}/{m.name}: {why}")
            else:
                out.setdefault(tid, []).append(m)
    return out, left


def fill(copy, task, student, rng, mistake=None):
    """Writes every region of `task` in a student copy: the reference's code, then one correct
    solution per region from the corpus (or the mistake, in the reference's code), and a
    comment naming the student. Returns the names of what was written."""
    for f in dict.fromkeys(r.file for r in task.regions):
        found = [x for x in regions.find_regions((Path(copy) / f).read_text().split("\n")) if x[0] == task.id]
        reference = regions.file_regions(ROOT / f, task.id)[task.id]
        bodies = [[indent + f"// {student}'s code"] + body for (_, _, _, indent), body in zip(found, reference)]
        regions.replace_bodies(Path(copy) / f, task.id, bodies)
    if mistake:
        apply(copy, task, mistake)
        return [mistake.name]
    names = []
    by_region = {}
    for m in corpus.CORRECT.get(task.id, []):
        by_region.setdefault((m.file, m.old), []).append(m)
    for _, choices in sorted(by_region.items()):
        m = rng.choice(choices)
        apply(copy, task, m)
        names.append(m.name)
    return names or ["reference"]


def answers(student, track, rng):
    """A few sentences of the student's own below the exported answers.md."""
    words = rng.choice(["bandwidth", "latency", "occupancy", "the number of levels"])
    return (f"\n\n{student}: I predicted that {words} decides the time of every {track} step, and measured it with "
            f"lab.py check --time; the ratio to the repository's run was close to what I wrote down.\n")


def make(track, n, out, seed=1, share=MISTAKE_SHARE, sanitizer=True):
    """n students of `track` in out/submissions/, out/expected.csv and out/class.json."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        usage_error(f"class: {out} exists and is not empty; give a new folder")
    tasks = T.track_tasks(track)
    pool, left_out = eligible_mistakes(track, sanitizer)
    rng = random.Random(seed)
    names = [f"student-{k:0{len(str(n))}d}" for k in range(1, n + 1)]
    wrong = set(rng.sample(names, round(n * share))) if pool else set()
    with tempfile.TemporaryDirectory(prefix="lab-class-") as tmp:
        # what every student receives; the tools' own copy, never handed out, so the tree's run
        # records (a part graded before, untracked) do not stop it: lab.py export still refuses them
        handout = export(track, Path(tmp) / "copy", check_strays=False)
        rows = []
        for student in names:
            copy = out / "submissions" / student
            shutil.copytree(handout, copy, symlinks=True)
            mistaken = rng.choice(sorted(pool)) if student in wrong else None
            mistake = rng.choice(pool[mistaken]) if mistaken else None
            per_task = {}
            for t in tasks:
                m = mistake if t.id == mistaken else None
                solution = fill(copy, t, student, rng, m)
                per_task[t.id] = {"status": m.expect, "says": m.says, "kind": "mistake", "solution": m.name} if m \
                    else {"status": "PASS", "says": "", "kind": "correct", "solution": "+".join(solution)}
            with open(copy / ANSWERS_FILE, "a") as f:
                f.write(answers(student, track, rng))
            for tid, want in propagate(tasks, {k: dict(v) for k, v in per_task.items()}).items():
                kind = per_task[tid]["kind"] if want["status"] == per_task[tid]["status"] else "needs"
                rows.append({"student": student, "task": tid, "expected": want["status"], "kind": kind,
                             "solution": per_task[tid]["solution"], "says": want.get("says", "")})
    with open(out / "expected.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=EXPECTED)
        w.writeheader()
        w.writerows(rows)
    plan = {"track": track, "students": n, "tasks": len(tasks), "seed": seed, "mistake_share": share,
            "students_with_a_mistake": len(wrong), "sanitizer_expected": sanitizer,
            "mistakes_left_out": left_out}
    (out / "class.json").write_text(json.dumps(plan, indent=1) + "\n")
    print(f"wrote {n} students of {track} to {out / 'submissions'} ({len(wrong)} with a mistake, seed {seed}) "
          f"and {out / 'expected.csv'} ({len(rows)} rows)")
    return 0


def read_expected(path):
    """expected.csv as selftest.compare's {student: {task: {status, says, mistake}}}."""
    expected = {}
    for r in csv.DictReader(open(path)):
        expected.setdefault(r["student"], {})[r["task"]] = {
            "status": r["expected"], "says": r["says"], "mistake": r["solution"] if r["kind"] != "correct" else ""}
    return expected


def grade_options(text):
    """What a grading's options say of its defences, read by grade's own parser:
    (sanitizers on, timing rounds, 0 without timing)."""
    p = argparse.ArgumentParser(prog="grade")
    add_grade_arguments(p)
    a = p.parse_args(["track", "submissions", "--out", "out"] + shlex.split(text))
    return not a.no_sanitizer, 0 if a.no_timing else a.rounds


def record(track, dest, parts, walls, options, grades=None, gpus=None):
    """dest/class.json (the plan, written by make) with the grading's measurements: each part's
    students and wall seconds, the unexpected grades of the merged folder `grades` (its sheet
    and reports; its grades.csv is copied to dest) against dest/expected.csv, and students per
    GPU-hour = students / (sum of the parts' wall seconds / 3600). A part without a grade
    sheet (interrupted) leaves the class incomplete. gpus: how many GPUs graded the parts side
    by side (default one per part; fewer when the parts ran over several runs)."""
    dest = Path(dest)
    grades = Path(grades or dest)
    data = json.loads((dest / "class.json").read_text())
    if data.get("track") != track:
        usage_error(f"--record: {dest / 'class.json'} is a class of {data.get('track')}, not {track}")
    if len(parts) != len(walls):
        usage_error(f"--record: {len(parts)} parts but {len(walls)} wall times")
    done = []
    for k, (d, wall) in enumerate(zip(parts, walls), 1):
        sheet = Path(d) / "grades.csv"
        rows = list(csv.DictReader(open(sheet))) if sheet.is_file() else []
        done.append({"part": f"{k}/{len(parts)}", "students": len({r["student"] for r in rows}),
                     "wall_s": round(wall, 1), "graded": bool(rows)})
    merged = grades / "grades.csv"
    rows = list(csv.DictReader(open(merged))) if merged.is_file() else []
    expected = read_expected(dest / "expected.csv")
    unexpected = None
    if rows:
        if grades.resolve() != dest.resolve():
            shutil.copy(merged, dest / "grades.csv")
        with contextlib.redirect_stdout(io.StringIO()):  # --compare prints the lines
            unexpected = compare(expected, merged, grades)
    graded = len({r["student"] for r in rows})
    complete = all(p["graded"] for p in done) and graded == len(expected)
    sanitizer, rounds = grade_options(options)
    commit = os.environ.get("STEPWISE_COMMIT") or subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    data.update({
        "gpu": next((r["gpu"] for r in rows if r.get("gpu")), ""), "students_graded": graded,
        "gpus": gpus or len(parts), "parts": done, "wall_s_sum": round(sum(walls), 1), "wall_s_longest": round(max(walls), 1),
        "students_per_gpu_hour": round(graded / (sum(walls) / 3600), 1) if complete and sum(walls) > 0 else None,
        "complete": complete, "unexpected": unexpected, "grade_options": options, "sanitizer": sanitizer,
        "timing_rounds": rounds, "tree": commit,
        "date": datetime.date.today().isoformat()})
    (dest / "class.json").write_text(json.dumps(data, indent=1) + "\n")
    print(f"class {track}: {graded} of {len(expected)} students graded in {len(parts)} part{'s' * (len(parts) > 1)}, "
          f"{data['students_per_gpu_hour']} students per GPU-hour, {unexpected} unexpected grades")
    return 0 if complete and unexpected == 0 else 1


def add_arguments(s):
    s.add_argument("track")
    s.add_argument("students", nargs="?", type=int, help="how many students to generate")
    s.add_argument("out", nargs="?", help="a new folder: OUT/submissions/, OUT/expected.csv, OUT/class.json")
    s.add_argument("--seed", type=int, default=1, help="draws the solutions, the mistakes and who makes them")
    s.add_argument("--mistakes", type=float, default=MISTAKE_SHARE, help="the share of students with one mistake")
    s.add_argument("--no-sanitizer", action="store_true",
                   help="the class will be graded without sanitizers: draw no mistake that only they may catch")
    s.add_argument("--compare", nargs=2, metavar=("EXPECTED", "GRADES"),
                   help="compare a grade folder's grades.csv with expected.csv: exit 1 on an unexpected grade")
    s.add_argument("--record", metavar="DEST", help="write DEST/class.json from the parts (--parts, --walls)")
    s.add_argument("--parts", nargs="+", default=[], help="(--record) the parts' grade folders, in order")
    s.add_argument("--walls", nargs="+", type=float, default=[], help="(--record) each part's wall seconds")
    s.add_argument("--options", default="", help="(--record) the grade options the parts ran with")
    s.add_argument("--gpus", type=int, help="(--record) the GPUs that graded the parts side by side (default: one "
                                            "per part)")
    s.add_argument("--grades", help="(--record) the merged grade folder (default DEST)")


def cmd_class(a):
    if a.track not in T.TRACKS:
        usage_error(f"class: unknown track '{a.track}' (tracks: {', '.join(T.TRACKS)})")
    if a.compare:
        for path in (Path(a.compare[0]), Path(a.compare[1]) / "grades.csv"):
            if not path.is_file():
                usage_error(f"--compare: {path} does not exist")
        bad = compare(read_expected(a.compare[0]), Path(a.compare[1]) / "grades.csv", a.compare[1])
        print(f"class {a.track}: {bad} unexpected grades")
        return 0 if bad == 0 else 1
    if a.record:
        return record(a.track, a.record, a.parts, a.walls, a.options, a.grades, a.gpus)
    if a.students is None or a.out is None:
        usage_error("class: give TRACK STUDENTS OUT (or --compare, or --record)")
    if a.students < 1:
        usage_error(f"class: STUDENTS {a.students}: at least 1")
    if not 0 <= a.mistakes <= 1:
        usage_error(f"--mistakes {a.mistakes}: a share from 0 to 1")
    return make(a.track, a.students, a.out, a.seed, a.mistakes, sanitizer=not a.no_sanitizer)
