#!/usr/bin/env python3
"""The repository's proofs of the lab tools, without a GPU (meson test 'labs-tools').

For every track: the export is a fresh tree (no git history, build folder or
object file, no instructor material); exporting twice gives the same files; every
task of the copy is NOT_IMPLEMENTED and the checker says so with the path and
SHA-256 of the source; no line unique to a solution is left anywhere in the copy;
every catalogued mistake applies to the reference; and the copy builds.

On the CPU stand-in track: the grader grades planted submissions (correct, wrong,
not compiling, endless, crashing, printing megabytes, exiting early, calling a
library, adding an #include) as expected, uses the hidden seeds it is given, and
keeps them out of the reports; the status set is the one the handouts document.
"""
import csv
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

LABS = Path(__file__).resolve().parent.parent
ROOT = LABS.parent.parent
sys.path.insert(0, str(LABS))
import lab  # noqa: E402
import tasks as T  # noqa: E402

sys.path.insert(0, str(LABS / "instructor"))
import mistakes as M  # noqa: E402

failures = []


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


def text_files(root):
    for p in Path(root).rglob("*"):
        if p.is_file():
            try:
                yield p, p.read_text()
            except UnicodeDecodeError:
                continue


def same_tree(a, b):
    cmp = filecmp.dircmp(a, b)
    stack = [cmp]
    while stack:
        c = stack.pop()
        if c.left_only or c.right_only or c.diff_files:
            return False
        stack += c.subdirs.values()
    return True


def check_track(track, tmp):
    copy = lab.export(track, tmp / track)
    again = lab.export(track, tmp / (track + "-again"))
    expect(same_tree(copy, again), f"{track}: two exports are identical (the stubs are generated, never edited)")
    names = {p.name for p in copy.rglob("*")}
    expect(not ({".git", "build"} & names) and not any(n.endswith((".o", ".a", ".so")) for n in names),
           f"{track}: no git history, build folder or object file in the copy")
    expect(not (copy / lab.INSTRUCTOR).exists() and not (copy / "docs/instructor_answers.md").exists(),
           f"{track}: no instructor material in the copy")
    for task in T.track_tasks(track):
        st, why = lab.static_status(copy, task)
        expect(st == "NOT_IMPLEMENTED", f"{track}/{task.id}: the stub is NOT_IMPLEMENTED ({why})")
    leaks = lab.unique_region_lines(track)
    found = [(str(p.relative_to(copy)), line) for p, text in text_files(copy) for line in leaks if line in text]
    expect(not found, f"{track}: none of the {len(leaks)} lines unique to the solutions is in the copy"
                      + (f" (found {found[:3]})" if found else ""))
    ref = lab.export(track, tmp / (track + "-reference"), reference=True)
    for task in T.track_tasks(track):
        for m in M.MISTAKES.get(task.id, []):
            before = (ref / m.file).read_text()
            try:
                lab.apply_mistake(ref, task, m)
                applied = (ref / m.file).read_text() != before
            except SystemExit:
                applied = False
            (ref / m.file).write_text(before)
            expect(applied, f"{track}/{task.id}: mistake '{m.name}' applies to the reference region")
        expect(len(M.MISTAKES.get(task.id, [])) >= 3, f"{track}/{task.id}: at least three catalogued mistakes")
        handout = ROOT / "docs" / "labs" / f"{track}.md"
        text = handout.read_text() if handout.exists() else ""
        named = [m.name for m in M.MISTAKES.get(task.id, []) if f"`{m.name}`" not in text]
        expect(f"`{task.id}`" in text and not named,
               f"{track}/{task.id}: the handout names the task and each of its mistakes" + (f" (missing {named})" if named else ""))
    return copy


def checker_prints_source(copy):
    """Point 2: the checker names the file it checks, with its SHA-256, and fails a stub."""
    track = lab.tree_track(copy)
    r = subprocess.run([sys.executable, str(copy / "chapters/labs/lab.py"), "check", "--root", str(copy),
                        "--build-dir", str(copy / "no-build")], capture_output=True, text=True)
    first = T.track_tasks(track)[0]
    expect(r.returncode == 1 and f"source {first.regions[0].file} sha256 " in r.stdout
           and "NOT_IMPLEMENTED" in r.stdout and f"0 of {len(T.track_tasks(track))} tasks pass" in r.stdout,
           f"{track}: the copy's checker prints the source and its SHA-256 and fails the stubs")


def build_copy(copy):
    """The copy builds with the README's commands (one GPU target here, for time)."""
    env = dict(os.environ)
    r = subprocess.run(["meson", "setup", "build", "-Dgpu_arch=75"], cwd=copy, capture_output=True, text=True, env=env)
    if r.returncode == 0:
        r = subprocess.run(["ninja", "-C", "build"], cwd=copy, capture_output=True, text=True, env=env)
    expect(r.returncode == 0, f"{copy.name}: the student copy builds" + ("" if r.returncode == 0 else "\n" + r.stdout[-3000:]))
    if r.returncode != 0:
        return
    subprocess.run(["meson", "test", "-C", "build", "--suite", "lab", "--no-rebuild"], cwd=copy, capture_output=True,
                   text=True, env=dict(env, REQUIRE_GPU="0", CUDA_VISIBLE_DEVICES=""))
    results = [json.loads(line)["result"] for line in open(copy / "build/meson-logs/testlog.json") if line.strip()]
    expect(results and all(x == "SKIP" for x in results),
           f"{copy.name}: its {len(results)} lab tests skip with 77 without a GPU ({results})")


def grader_on_standin(tmp):
    work = tmp / "selftest"
    hidden = tmp / "hidden.json"
    hidden.write_text(json.dumps({"seeds": [918273, 5550123], "cases": {"standin-sum": [["--n", "77777"], ["--n", "3"]]}}))
    r = subprocess.run([sys.executable, str(LABS / "lab.py"), "selftest", "standin", "--work", str(work), "--jobs", "2",
                        "--timeout", "10", "--hidden", str(hidden)], capture_output=True, text=True)
    print(r.stdout[-6000:], r.stderr[-3000:])
    expect(r.returncode == 0, "standin: the grader grades every planted submission as expected")
    rows = list(csv.DictReader(open(work / "grades" / "grades.csv")))
    ref = [x for x in rows if x["student"] == "reference"][0]
    expect(ref["hidden_total"] == "4" and ref["hidden_passed"] == "4",
           "standin: the reference ran the 2 hidden seeds x 2 hidden sizes")
    reports = "".join(p.read_text() for p in (work / "grades").glob("*.md"))
    expect("918273" not in reports and "5550123" not in reports and "77777" not in reports,
           "standin: hidden seeds and sizes stay out of the students' reports")
    expect(all(x["sources_sha256"] and x["gpu"] is not None and x["seed"] == "42" for x in rows),
           "standin: every row records the sources' SHA-256, the GPU, the compiler and the seed")
    # Point 9: the seed the grader passes changes the data.
    exe = None
    for p in work.rglob("standin"):
        if p.is_file() and os.access(p, os.X_OK):
            exe = p
    if exe is None:
        build = Path(os.environ.get("LAB_BUILD_DIR", ROOT / "build")) / "chapters/labs/standin"
        exe = build if build.exists() else None
    if exe:
        d = [subprocess.run([str(exe), "--verify-only", "--n", "1000", "--seed", s], capture_output=True,
                            text=True).stdout for s in ("918273", "5550123")]
        expect(d[0].split("data digest")[1].split()[0] != d[1].split("data digest")[1].split()[0],
               "standin: two hidden seeds give different data")
    expect(lab.STATUSES == ["PASS", "FAIL", "NOT_IMPLEMENTED", "BUILD_FAIL", "CRASH", "TIMEOUT", "SANITIZER",
                            "SANITIZER_UNAVAILABLE", "SKIP", "NOT_RUN"], "the status set is the documented one")


def sanitizer_unavailable():
    saved = os.environ.get("PATH", "")
    os.environ["PATH"] = "/nonexistent"
    real = lab.find_sanitizer
    lab.find_sanitizer = lambda: None
    st, _ = lab.sanitize(T.task("shared-tree"), [], 1)
    lab.find_sanitizer = real
    os.environ["PATH"] = saved
    expect(st == "SANITIZER_UNAVAILABLE", "without compute-sanitizer the stage says SANITIZER_UNAVAILABLE, never PASS")


def main():
    tmp = Path(tempfile.mkdtemp(prefix="labs-tools-"))
    try:
        copies = [check_track(track, tmp) for track in T.TRACKS if track != "standin"]
        for copy in copies:
            checker_prints_source(copy)
        sanitizer_unavailable()
        grader_on_standin(tmp)
        if os.environ.get("LAB_SKIP_COPY_BUILD") != "1":
            for copy in copies:
                build_copy(copy)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
