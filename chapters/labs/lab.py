#!/usr/bin/env python3
"""Classroom labs made from the chapters.

Students, in a copy:
    python3 chapters/labs/lab.py check                      # rebuild, then every task: status, why, hints
    python3 chapters/labs/lab.py check --task shared-tree --n 257   # one task, one size (a replay)
    python3 chapters/labs/lab.py check --task smem-tiles --m 3 --n 3 --k 431   # a matrix product's shape
    python3 chapters/labs/lab.py tracks                     # the tracks and their tasks
Instructors, in the repository (chapters/labs/instructor/ is never exported):
    python3 chapters/labs/lab.py export reduce ~/lab-reduce
    python3 chapters/labs/lab.py grade reduce ~/course/submissions/ --out ~/course/grades/ --hidden ~/course/hidden.json
    python3 chapters/labs/lab.py selftest reduce --out ~/course/selftest-reduce
    python3 chapters/labs/lab.py class reduce 40 ~/class      # generated students and their expected grades
(a course's files, its copies, submissions, grades and hidden file, stay outside the repository:
an export refuses to run beside them)

The tasks are the marked regions of the chapter sources (tasks.py); the checker
(labkit/) reads a region's code, builds it, and runs the chapter's own program on
the GPU. Exit codes (meson): 0 every task passed, 1 a task did not, 2 bad input,
77 no GPU (the lab tests, and `check` when nothing could run).
"""
import argparse
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import tasks as T  # noqa: E402
from labkit import regions  # noqa: E402
from labkit.check import (Settings, build, check_task, disagreement, physical_floor, speed_figure,  # noqa: E402
                          timed_record)
from labkit.runner import EXIT_SKIP, gpu_present, run  # noqa: E402

TRACK_FILE = "chapters/labs/track.txt"   # present in a student copy only: its track
INSTRUCTOR = HERE / "instructor"


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def tree_track(root):
    p = Path(root) / TRACK_FILE
    return p.read_text().strip() if p.exists() else None


def present_tasks(root):
    """The tasks whose regions are all in this tree, in the tracks' order."""
    track = tree_track(root)
    return [t for t in T.TASKS if (t.track == track if track else t.track != "standin")
            and all(b is not None for b in regions.task_bodies(root, t))]


def ensure_build(root, build_dir):
    if not (Path(build_dir) / "build.ninja").exists():
        print(f"$ meson setup {build_dir}", flush=True)
        r = run(["meson", "setup", str(build_dir), str(root)], 900)
        if r.code != 0:
            fail(f"meson setup {build_dir} failed:\n{r.out[-2000:]}")


def reference_figure(root, chapter, variant, n, note):
    """GB/s of the repository's run of this step on this GPU model (docs/runs/results)."""
    r = run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], 30)
    slug = re.sub(r"[^a-z0-9]+", "-", r.out.strip().splitlines()[0].lower()).strip("-") if r.code == 0 and \
        r.out.strip() else ""
    path = Path(root) / "docs" / "runs" / "results" / f"{slug}.json"
    try:
        records = json.loads(path.read_text()).get("records", [])
    except (OSError, ValueError):
        return None
    for rec in records:
        if (rec.get("chapter"), rec.get("variant"), rec.get("n"), rec.get("note"), rec.get("role")) == \
                (chapter[:2], variant, n, note, "step"):
            return rec.get("gbps")
    return None


def print_result(r, track):
    line = f"{r.status:<21} {r.task:<18}"
    if r.public[1]:
        line += f" {r.public[0]}/{r.public[1]} checks"
    s = r.speed
    if s.get("gbps") is not None:
        line += f"  {speed_figure(s)}"
        if s.get("pct_of_copy") is not None and not s.get("tflops"):
            line += f" ({s['pct_of_copy']:.0f}% of copy)"
        if s.get("speed_ratio") is not None:
            line += f", {s['speed_ratio']:.2f}x the repository's ({s['speed_band']})"
    print(line)
    for label, text in (("", r.detail), ("diagnosis: ", r.diagnosis), ("replay: ", r.replay)):
        if text:
            print(f"    {label}{text}")
    for f in r.findings:
        if f.severity == "warn" or r.status != "FAIL":
            print(f"    hint: {f.text()}")
            print(f"          see docs/labs/checker.md, '{f.rule}'")


def cmd_check(a):
    root = Path(a.root).resolve()
    build_dir = Path(a.build_dir if Path(a.build_dir).is_absolute() else root / a.build_dir)
    tasks = present_tasks(root)
    if a.task:
        tasks = [t for t in tasks if t.id == a.task]
        if not tasks:
            fail(f"--task: '{a.task}' is not a task of this tree (tasks: {', '.join(t.id for t in present_tasks(root))})")
    size_args = None
    if tasks[0].size == "gemm" and (a.m, a.n, a.k) != (None, None, None):
        if None in (a.m, a.n, a.k):
            fail("--m, --n, --k: a matrix product takes all three (e.g. --m 3 --n 3 --k 431)")
        size_args = ["--m", str(a.m), "--n", str(a.n), "--k", str(a.k)]
    elif a.m is not None or a.k is not None:
        fail(f"--m, --k: only a matrix product (the gemm track) takes them; this task takes {tasks[0].size}")
    elif a.n is not None:
        if tasks[0].size == "shape":
            fail("--n: this task takes --rows and --cols")
        size_args = [tasks[0].size, str(a.n)]
    if a.rows is not None or a.cols is not None:
        size_args = ["--rows", str(a.rows or 1), "--cols", str(a.cols or 1)]
    # Rebuild first, so that the checks run what the sources say (not for stubs).
    written = [t for t in tasks if regions.stub_status(root, t)[0] is None]
    built = None
    if written and not a.no_build:
        ensure_build(root, build_dir)
        chapters = list(dict.fromkeys(c.chapter for t in written for c in t.checks))
        print(f"$ ninja -C {build_dir} {' '.join('chapters/' + c for c in chapters)}", flush=True)
        built = build(build_dir, chapters, root, written)
    settings = Settings(seed=a.seed, sanitizer=not a.no_sanitizer, size_args=size_args, build_dir=str(build_dir))
    track = tree_track(root) or tasks[0].track if tasks else ""
    results = []
    for t in tasks:
        for f, h in regions.sources_digest(root, t):
            print(f"source {f} sha256 {h}")
        r = check_task(t, root, lambda ch: build_dir / "chapters" / ch, settings, built=built)
        if a.time and r.status == "PASS":
            time_one(t, r, root, build_dir, settings)
        print_result(r, track)
        results.append(r)
    passed = sum(r.status == "PASS" for r in results)
    print(f"{passed} of {len(results)} tasks pass")
    if results and all(r.status == "SKIP" for r in results):
        return EXIT_SKIP
    return 0 if passed == len(results) else 1


def time_one(task, res, root, build_dir, settings):
    c = task.checks[0]
    rec, device, r = timed_record([str(build_dir / "chapters" / c.chapter)], c, settings)
    if rec is None:
        res.fail("FAIL", "the timed run printed no result")
        return
    why = disagreement(r) or physical_floor(rec, device)
    if why:
        res.fail("FAIL", why)
        return
    res.speed = {"median_ms": rec["ms_median"], "gbps": rec["gbps"], "tflops": rec.get("tflops") or None,
                 "pct_of_copy": rec.get("pct_of_copy")}
    ref = reference_figure(root, c.chapter, c.steps[0], rec["n"], rec.get("note"))
    if ref:
        ratio = rec["gbps"] / ref
        res.speed.update(speed_ratio=ratio, speed_band="at reference" if ratio >= 0.9 else
                         "within 2x" if ratio >= 0.5 else "below half")


def cmd_test(a):
    """One task as a meson test: SKIP (77) without a GPU whatever the task's state,
    so that a copy's test suite says the same before and after a build."""
    has, why = gpu_present()
    if not has and T.task(a.task).track != "standin":
        if os.environ.get("REQUIRE_GPU") == "1":
            print(f"error: REQUIRE_GPU=1 but {why}")
            return 1
        print(f"skipped: {why}; `python3 chapters/labs/lab.py check --task {a.task}` still reads and builds it")
        return EXIT_SKIP
    a.n = a.m = a.k = a.rows = a.cols = None
    a.no_sanitizer, a.time, a.no_build = False, False, True  # meson has just built it
    return cmd_check(a)


def cmd_tasks(a):
    for t in present_tasks(a.root):
        print(t.id)
    return 0


def cmd_tracks(a):
    for track, chapters in T.TRACKS.items():
        if track == "standin":
            continue
        print(f"{track}: chapters {', '.join(chapters)}")
        for t in T.track_tasks(track):
            print(f"  {t.id:<18} {t.title}")
    return 0


def instructor_commands(sub):
    """export, grade, selftest and class, where chapters/labs/instructor/ exists."""
    if not (INSTRUCTOR / "grade.py").exists():
        return
    sys.path.insert(0, str(INSTRUCTOR))
    import export  # noqa: PLC0415
    import grade  # noqa: PLC0415
    import make_class  # noqa: PLC0415
    import selftest  # noqa: PLC0415

    def cmd_export(a):
        if a.track not in T.TRACKS:
            fail(f"export: unknown track '{a.track}' (tracks: {', '.join(k for k in T.TRACKS if k != 'standin')})")
        dest = Path(a.dest).resolve()
        if dest == ROOT.resolve() or ROOT.resolve() in dest.parents:
            fail(f"export: {a.dest} is inside the repository ({ROOT}); give a folder outside it, e.g. "
                 f"~/lab-{a.track}: a copy inside it is a stray tree, which the next export refuses")
        dest = export.export(a.track, dest, reference=a.reference, need_git=not a.without_git)
        if a.archive:
            import shutil  # noqa: PLC0415
            print(f"wrote {shutil.make_archive(str(dest), 'gztar', root_dir=dest.parent, base_dir=dest.name)}")
        print(f"wrote {dest}: {len(T.track_tasks(a.track))} tasks")
        return 0

    s = sub.add_parser("export", help="instructor: write a student copy of a track")
    s.add_argument("track")
    s.add_argument("dest")
    s.add_argument("--archive", action="store_true", help="also write <dest>.tar.gz")
    s.add_argument("--reference", action="store_true", help="keep the reference code (the grader's tree)")
    s.add_argument("--without-git", action="store_true",
                   help="outside a git checkout: copy the allowlisted files found on disk (tracked or not)")
    s.set_defaults(fn=cmd_export)
    s = sub.add_parser("grade", help="instructor: grade a folder of submissions (one student copy each)")
    grade.add_arguments(s)
    s.set_defaults(fn=grade.cmd_grade)
    s = sub.add_parser("selftest", help="instructor: grade planted submissions and compare with the expected grades")
    selftest.add_arguments(s)
    s.set_defaults(fn=selftest.cmd_selftest)
    s = sub.add_parser("class", help="instructor: generate a class of submissions with their expected grades")
    make_class.add_arguments(s)
    s.set_defaults(fn=make_class.cmd_class)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("tracks", help="list the tracks and their tasks")
    s.set_defaults(fn=cmd_tracks)
    s = sub.add_parser("tasks", help="the tasks present in a tree, one per line (for meson)")
    s.add_argument("--root", default=str(ROOT))
    s.set_defaults(fn=cmd_tasks)
    for name, fn in (("check", cmd_check), ("test", cmd_test)):
        s = sub.add_parser(name, help="check this tree's tasks" if name == "check" else "one task, as a meson test")
        if name == "test":
            s.add_argument("task")
        else:
            s.add_argument("--task")
            s.add_argument("--n", type=int, help="replay one size (elements or bytes; a product's columns)")
            s.add_argument("--m", type=int, help="a matrix product's rows (with --n and --k)")
            s.add_argument("--k", type=int, help="a matrix product's inner size (with --m and --n)")
            s.add_argument("--rows", type=int)
            s.add_argument("--cols", type=int)
            s.add_argument("--no-sanitizer", action="store_true")
            s.add_argument("--no-build", action="store_true", help="check what is built, without rebuilding")
            s.add_argument("--time", action="store_true", help="also time each passing task (graded timing)")
        s.add_argument("--build-dir", default="build")
        s.add_argument("--root", default=str(ROOT))
        s.add_argument("--seed", type=int, default=42)
        s.set_defaults(fn=fn)
    instructor_commands(sub)
    a = p.parse_args(argv)
    if getattr(a, "task", None) and a.cmd in ("check", "test"):
        try:
            T.task(a.task)
        except KeyError:
            fail(f"--task: unknown task '{a.task}' (see 'lab.py tracks')")
    return a.fn(a)


if __name__ == "__main__":
    sys.exit(main())
