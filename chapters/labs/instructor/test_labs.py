#!/usr/bin/env python3
"""The repository's proofs of the lab tools, without a GPU (meson test 'labs-tools').

For every track, on its student copy:
  - the copy: a fresh tree, the same files when exported twice, no grader,
    self-test or catalogue, no region of another track, no dead link;
  - the leak check: no run of 12 tokens of a solution anywhere in it, and every
    planted paraphrase of a solution found (in a doc, a generator, a comment);
  - the statuses: all NOT_IMPLEMENTED from `check` and all SKIP (77) from the lab
    suite, in the fresh copy and again once built;
  - a region edited into a compile error: BUILD_FAIL, with the compiler's message
    placed in the region;
  - every region written: the copy's own test suite has no failure outside the lab
    suite (the docs test does not read the regions of a copy);
  - the static pass flags every catalogued static mistake and nothing in the
    reference or in the correct variants; every catalogued mistake and exploit
    applies to the reference; the handout names every task, mistake and rule.
The requirements between tasks (scan, reduce): the grader runs a task only after the
tasks it needs pass, else grades it NOT_RUN without running it; the self-test never
packs two related tasks together and expects what the grader does.
On the CPU stand-in track: the grader's self-test (the exploits the stand-in can
show, the mistakes, the ghosts) with 0 unexpected grades; hidden seeds change the
data and stay out of the reports; a generated class (lab.py class) graded in two parts
and merged gives its expected grades, and a mistake graded PASS fails the comparison.
The export holds tracked files only: in a scratch repository it refuses (exit 2) an
untracked hidden.json, a submissions/ or grades/ folder, a nested student copy, an
untracked .json among the results, and leaves untracked sources out; without git it
refuses unless --without-git (check_export_strays).
"""
import contextlib
import csv
import filecmp
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from argparse import Namespace
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

INSTRUCTOR = Path(__file__).resolve().parent
LABS = INSTRUCTOR.parent
ROOT = LABS.parent.parent
sys.path.insert(0, str(LABS))
sys.path.insert(0, str(INSTRUCTOR))
import tasks as T  # noqa: E402
from labkit import check, regions, static  # noqa: E402

import corpus as C  # noqa: E402
import exploits as X  # noqa: E402
import export as E  # noqa: E402
import grade as G  # noqa: E402
import leaks as L  # noqa: E402
import mistakes as M  # noqa: E402
import selftest as S  # noqa: E402

failures = []
# A copy is built for the tests only: PTX for one target (no machine code), no
# optimisation of host or device code and no debug information.
COPY_SETUP = ["-Demulate=t4", "-Dbuildtype=plain", "-Dcuda_args=-Xcicc=-O0"]
SLOWEST_COPIES = ("scan", "gemm", "reduce")  # the longest copies (16-18 with CUB; 19-20 with cuBLAS; five chapters)
# What every copy compiles alike, compiled once into the shared ccache before the copies
# build side by side (else each of them misses it at the same time).
SHARED_TARGETS = ["common/libcommon_gpu.a", "common/libcommon_host.a", "common/device_query",
                  "chapters/00_first_program/first_program", "chapters/01_cpu_baseline"]
TRACK_JOBS = int(os.environ.get("LAB_TRACK_JOBS", "3"))  # copies checked side by side, each in a process
# Compilers per copy's build: the CPUs shared by the copies side by side (ninja's default, every
# core plus one for every copy, would run TRACK_JOBS times as many compilers as there are cores).
COPY_BUILD_JOBS = max(1, len(os.sched_getaffinity(0)) // TRACK_JOBS)
FULL_REBUILD_TRACK = os.environ.get("LAB_FULL_REBUILD_TRACK", "")  # a track whose edited copy is rebuilt too
# What the tests of chapters 00 and 01 read: their folders, common/, the build files and the
# tests' scripts. No track has a region there, and check_copy_files holds every copy to the
# repository's files, built with the same options: those tests (chapter 01's run-lines alone
# takes about 25 s of CPU) run in one copy, the first track's; the others leave SHARED_SUITES out.
SHARED_FILES = re.compile(r"chapters/0[01]_[^/]+/.*|common/.*|chapters/[^/]+\.py|(chapters/)?meson\.build"
                          r"|meson\.options")
SHARED_SUITES = ("ch00", "ch01")


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


@contextlib.contextmanager
def timed(what):
    """Prints a part's wall time and CPU time, this process's and its finished children's
    ("time  scan: build 95 s wall, 150 s CPU"): where the suite's minutes go. Each track runs in
    a process of its own."""
    wall, cpu = time.monotonic(), os.times()
    yield
    after = os.times()
    used = sum(after[:4]) - sum(cpu[:4])  # user, system, children's user, children's system
    print(f"time  {what}: {time.monotonic() - wall:.0f} s wall, {used:.0f} s CPU", flush=True)


def same_tree(a, b):
    stack = [filecmp.dircmp(a, b)]
    while stack:
        c = stack.pop()
        if c.left_only or c.right_only or c.diff_files:
            return False
        stack += c.subdirs.values()
    return True


def lab(copy, *args, env=None):
    return subprocess.run([sys.executable, str(copy / "chapters/labs/lab.py"), *args], cwd=copy, capture_output=True,
                          text=True, env=dict(os.environ, **(env or {})))


def statuses(text):
    return re.findall(r"^([A-Z_]+)\s+(\S+)", text, re.M)


def check_copy_files(track, copy, tmp):
    again = E.export(track, tmp / (track + "-again"))
    expect(same_tree(copy, again), f"{track}: two exports are identical (the stubs are generated, never edited)")
    shutil.rmtree(again)
    names = {p.name for p in copy.rglob("*")}
    expect(not ({".git", "build"} & names) and not any(n.endswith((".o", ".a", ".so")) for n in names),
           f"{track}: no git history, build folder or object file in the copy")
    instructor = [p for p in ("chapters/labs/instructor", "docs/instructor_answers.md", "docs/labs/README.md",
                              "docs/runs/labs", "docs/runs/test-logs") if (copy / p).exists()]
    expect(not instructor and not list(copy.rglob("*exploits*")) and not list(copy.rglob("*mistakes*"))
           and not list(copy.rglob("*selftest*")) and not list(copy.rglob("grade*.py")),
           f"{track}: no grader, self-test or catalogue in the copy {instructor}")
    others = {t.id for t in T.TASKS if t.track != track}
    foreign = [str(p.relative_to(copy)) for p in copy.rglob("*") if p.suffix in regions.SOURCE_SUFFIXES
               and any(r[0] in others for r in regions.find_regions(p.read_text().split("\n")))]
    expect(not foreign, f"{track}: no region of another track in the copy {foreign[:3]}")
    shared = sorted(f for f in E.repo_files(ROOT)[0] if SHARED_FILES.fullmatch(f) and E.allowed(f)
                    and E.keep_in_copy(f, track))
    held = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*")
                  if p.is_file() and SHARED_FILES.fullmatch(p.relative_to(copy).as_posix()))
    differ = [f for f in shared if (copy / f).is_file() and not filecmp.cmp(ROOT / f, copy / f, shallow=False)]
    expect(shared and held == shared and not differ,
           f"{track}: chapters 00 and 01, common/, the build files and the tests' scripts are the repository's "
           f"files (their tests run in one copy) {differ[:3]} {sorted(set(held) ^ set(shared))[:3]}")
    dead = E.dead_links(copy)
    expect(not dead, f"{track}: every link of the copy leads to a file it holds {dead[:4]}")
    handout = copy / "docs" / "labs" / f"{track}.md"
    text = handout.read_text() if handout.exists() else ""
    for task in T.track_tasks(track):
        named = [m.name for m in M.MISTAKES.get(task.id, []) if f"`{m.name}`" not in text]
        expect(f"`{task.id}`" in text and not named,
               f"{track}/{task.id}: the handout names the task and each of its mistakes" + (f" (missing {named})" if named else ""))
    checker = (copy / "docs/labs/checker.md").read_text() if (copy / "docs/labs/checker.md").exists() else ""
    rules = [r for r in static.RULE_TITLES if f"`{r}`" not in checker]
    expect("Without a GPU" in checker and "checker.md" in text and not rules,
           f"{track}: the copy's checker page explains every rule and hint, and the handout links to it {rules}")


def paraphrase(body, consts):
    """A paraphrase of a solution a leak must not hide behind: constants written as
    their values, literal suffixes changed, every line joined, a comment between tokens."""
    toks = check_tokens(body)
    out = []
    for k, t in enumerate(toks):
        text = t.text
        if t.kind == "id" and text in consts:
            text = consts[text] if "." not in consts[text] else text
        elif t.kind == "num" and text.endswith("f"):
            text = text[:-1]
        elif t.kind == "num" and text.endswith("u"):
            text = text[:-1] + "U"
        out.append(text)
        if k % 7 == 3:
            out.append("/* see above */")
    return " ".join(out)


def check_tokens(text):
    from labkit import cxx  # noqa: PLC0415
    return cxx.tokens(text)


def check_leaks(track, copy, consts):
    runs = L.solution_runs(track, consts=consts)
    found = L.find_leaks(copy, runs, consts)
    expect(not found, f"{track}: none of the {len(runs)} runs of 12 tokens of a solution is in the copy"
                      + "".join(f"\n        {f}:{line} ({task}) {text[:90]}" for f, line, task, text in found[:6]))
    for task in T.track_tasks(track):
        bodies = [b for b in regions.task_bodies(ROOT, task) if b]
        body = max(bodies, key=len)
        para = paraphrase("\n".join(body), consts)
        for where in ("docs/planted.md", "docs/planted_diagram.py", "chapters/planted.cu"):
            p = copy / where
            p.write_text({"docs/planted.md": f"# notes\n\n```cuda\n{para}\n```\n",
                          "docs/planted_diagram.py": f'LABEL = """{para}"""\n',
                          "chapters/planted.cu": f"// {para}\n"}[where])
            hit = L.leak_in(copy, p, runs, consts)
            p.unlink()
            expect(hit and task.id in hit[0][2].split(","), f"{track}/{task.id}: a paraphrase of the solution in {where} is found")


def check_static(track, tmp):
    ref = E.export(track, tmp / (track + "-static"), reference=True)
    for task in T.track_tasks(track):
        found = static.analyse(ref, task)
        expect(not found, f"{track}/{task.id}: the static pass finds nothing in the reference {[f.text() for f in found]}")
        for m in M.MISTAKES.get(task.id, []) + X.EXPLOITS.get(task.id, []) + C.CORRECT.get(task.id, []):
            before = (ref / m.file).read_text()
            try:
                S.apply(ref, task, m)
                applied = (ref / m.file).read_text() != before
            except SystemExit:
                applied = False
            expect(applied, f"{track}/{task.id}: '{m.name}' applies to the reference region")
            if applied:
                rules = {f.rule for f in static.analyse(ref, task)}
                if getattr(m, "static", ""):
                    expect(m.static in rules, f"{track}/{task.id}: the static pass flags '{m.name}' as {m.static} ({rules})")
                if getattr(m, "expect", "") == "PASS":
                    expect(not rules, f"{track}/{task.id}: the correct variant '{m.name}' gets no finding ({rules})")
            (ref / m.file).write_text(before)
        expect(len(M.MISTAKES.get(task.id, [])) >= 3, f"{track}/{task.id}: at least three catalogued mistakes")
        expect(len(C.CORRECT.get(task.id, [])) >= 5,
               f"{track}/{task.id}: at least five correct solutions unlike the reference (corpus.py)")
    shutil.rmtree(ref)


def copy_setup(tmp):
    """The meson options of a copy's build, and ccache where it is installed: the
    copies share common/, chapter 00 and chapter 01, which then compile once."""
    nvcc = shutil.which("nvcc")
    if not shutil.which("ccache") or not nvcc:
        return COPY_SETUP, {}
    native = tmp / "ccache-native.ini"
    part = tmp / f"ccache-native.{os.getpid()}"  # renamed into place: a copy being set up never reads half a file
    part.write_text(f"[binaries]\ncuda = ['ccache', '{nvcc}']\nc = ['ccache', 'cc']\ncpp = ['ccache', 'c++']\n")
    os.replace(part, native)
    env = {"CCACHE_DIR": str(tmp / "ccache"), "CCACHE_NOHASHDIR": "1", "CCACHE_BASEDIR": str(tmp)}
    return COPY_SETUP + ["--native-file", str(native)], env


def prime_cache(tmp):
    """Compiles SHARED_TARGETS once in a copy of the first track, into the copies' ccache."""
    options, cache = copy_setup(tmp)
    if not cache:
        return
    copy = E.export("histogram", tmp / "shared-objects")
    env = dict(os.environ, **cache)
    r = subprocess.run(["meson", "setup", "build"] + options, cwd=copy, capture_output=True, text=True, env=env)
    if r.returncode == 0:
        subprocess.run(["ninja", "-C", "build"] + SHARED_TARGETS, cwd=copy, capture_output=True, text=True, env=env)
    shutil.rmtree(copy, ignore_errors=True)  # a failure here shows again in every copy's own build


def check_statuses(track, copy):
    tasks = T.track_tasks(track)
    r = lab(copy, "check")
    st = dict((t, s) for s, t in statuses(r.stdout))
    first = tasks[0]
    expect(r.returncode == 1 and f"source {first.regions[0].file} sha256 " in r.stdout and
           all(st.get(t.id) == "NOT_IMPLEMENTED" for t in tasks) and not (copy / "build").exists(),
           f"{track}: in the fresh copy `check` says NOT_IMPLEMENTED for every task, names each source and its "
           f"SHA-256, and builds nothing ({st})")
    env = {"CUDA_VISIBLE_DEVICES": "", "REQUIRE_GPU": "0"}
    options, cache = copy_setup(copy.parent)
    with timed(f"{track}: meson setup"):
        r = subprocess.run(["meson", "setup", "build"] + options, cwd=copy, capture_output=True, text=True,
                           env=dict(os.environ, **cache))
    expect(r.returncode == 0, f"{track}: meson setup in the copy" + ("" if r.returncode == 0 else r.stdout[-2000:]))
    results = lab_suite(copy, env, rebuild=False)
    expect(results and set(results) == {"SKIP"}, f"{track}: the fresh copy's lab tests skip ({results})")
    with timed(f"{track}: build"):
        r = subprocess.run(["ninja", "-C", "build", "-j", str(COPY_BUILD_JOBS)], cwd=copy, capture_output=True,
                           text=True, env=dict(os.environ, **cache))
    expect(r.returncode == 0, f"{track}: the student copy builds" + ("" if r.returncode == 0 else "\n" + r.stdout[-3000:]))
    results = lab_suite(copy, env, rebuild=False)
    expect(results and set(results) == {"SKIP"}, f"{track}: the built copy's lab tests skip too ({results})")
    r = lab(copy, "check", "--no-build")
    expect(all(s == "NOT_IMPLEMENTED" for s, _ in statuses(r.stdout)) and statuses(r.stdout),
           f"{track}: the built copy's `check` still says NOT_IMPLEMENTED for every task")


def lab_suite(copy, env, rebuild):
    subprocess.run(["meson", "test", "-C", "build", "--suite", "lab"] + ([] if rebuild else ["--no-rebuild"]),
                   cwd=copy, capture_output=True, text=True, env=dict(os.environ, **env))
    log = copy / "build/meson-logs/testlog.json"
    return [json.loads(line)["result"] for line in open(log) if line.strip()] if log.exists() else []


def check_edits(track, copy, shared_tests):
    tasks = T.track_tasks(track)
    for t in tasks:  # every region written: the reference's bodies
        for f in dict.fromkeys(x.file for x in t.regions):
            mine = [b for b, x in zip(regions.task_bodies(ROOT, t), t.regions) if x.file == f]
            regions.replace_bodies(copy / f, t.id, mine)
    rebuild = track == FULL_REBUILD_TRACK
    env = {"CUDA_VISIBLE_DEVICES": "", "REQUIRE_GPU": "0"}
    leave_out = [] if shared_tests else [a for suite in SHARED_SUITES for a in ("--no-suite", suite)]
    with timed(f"{track}: meson test"):
        subprocess.run(["meson", "test", "-C", "build"] + ([] if rebuild else ["--no-rebuild"]) + leave_out,
                       cwd=copy, capture_output=True, text=True, env=dict(os.environ, **env))
    rows = [json.loads(line) for line in open(copy / "build/meson-logs/testlog.json") if line.strip()]
    bad = [x["name"] for x in rows if x["result"] not in ("OK", "SKIP") and "lab" not in x.get("suite", [])]
    ran_shared = any(":01_cpu_baseline" in x["name"] for x in rows)
    expect(rows and not bad and ran_shared == shared_tests,
           f"{track}: with every region written the copy's `meson test`{'' if rebuild else ' --no-rebuild'}"
           f"{' (with' if shared_tests else ' (without'} chapters 00 and 01) has no failure outside the lab suite {bad}")
    r = lab(copy, "check", *([] if rebuild else ["--no-build"]), env=env)
    got = {s for s, _ in statuses(r.stdout)}
    expect(got == {"SKIP"}, f"{track}: written tasks are SKIP without a GPU, after the source checks ({got})")
    # Then one region that does not compile: BUILD_FAIL, with the error placed in it.
    task = tasks[0]
    f = task.regions[0].file
    bodies = [b for b, x in zip(regions.task_bodies(copy, task), task.regions) if x.file == f]
    bodies[0] = bodies[0] + ["  this is not C++;"]
    regions.replace_bodies(copy / f, task.id, bodies)
    with timed(f"{track}: BUILD_FAIL check"):
        r = lab(copy, "check", "--task", task.id, env=env)
    expect("BUILD_FAIL" in r.stdout and "error" in r.stdout and f"your region of {task.id}" in r.stdout,
           f"{track}: a region that does not compile is BUILD_FAIL, with the compiler's error in the region\n"
           + "\n".join("        " + line for line in r.stdout.splitlines()[-4:]))


def catalogue_documented():
    readme = (ROOT / "docs" / "labs" / "README.md").read_text()
    missing = [c.cls for c in X.classes() if f"| {c.cls} |" not in readme]
    expect(len(X.classes()) >= 25 and not missing,
           f"the {len(X.classes())} exploit classes are at least 25, each in docs/labs/README.md's table {missing[:3]}")


def grader_on_standin(tmp):
    work = tmp / "selftest"
    hidden = tmp / "hidden.json"
    hidden.write_text(json.dumps({"seeds": [918273, 5550123], "cases": {"standin-sum": [["--n", "77777"], ["--n", "3"]]}}))
    with timed("standin: the grader's self-test"):
        r = subprocess.run([sys.executable, str(LABS / "lab.py"), "selftest", "standin", "--work", str(work), "--jobs",
                            "2", "--timeout", "10", "--hidden", str(hidden)], capture_output=True, text=True)
    print("\n".join(line for line in r.stdout.splitlines() if line.startswith(("BAD", "MISSING", "selftest"))),
          r.stderr[-3000:])
    expect(r.returncode == 0, "standin: the grader grades every planted submission, mistake and exploit as expected")
    rows = list(csv.DictReader(open(work / "grades" / "grades.csv")))
    ref = [x for x in rows if x["student"] == "reference"][0]
    expect(ref["hidden_total"] == "4" and ref["hidden_passed"] == "4",
           "standin: the reference ran the 2 hidden seeds x 2 hidden sizes")
    reports = "".join(p.read_text() for p in (work / "grades").glob("*.md"))
    expect("918273" not in reports and "5550123" not in reports and "77777" not in reports,
           "standin: hidden seeds and sizes stay out of the students' reports")
    expect(all(x["sources_sha256"] and x["seed"] == "42" and x["sandbox"] for x in rows),
           "standin: every row records the sources' SHA-256, the seed and whether the run was sandboxed")
    exe = next((p for p in work.rglob("standin") if p.is_file() and os.access(p, os.X_OK)), None)
    exe = exe or Path(os.environ.get("LAB_BUILD_DIR", ROOT / "build")) / "chapters/labs/standin"
    if exe.exists():
        d = [subprocess.run([str(exe), "--verify-only", "--n", "1000", "--seed", s], capture_output=True,
                            text=True).stdout for s in ("918273", "5550123")]
        expect(d[0].split("data digest")[1].split()[0] != d[1].split("data digest")[1].split()[0],
               "standin: two hidden seeds give different data")
    with timed("standin: grade in parts"):
        grade_in_parts(work, hidden)
    with timed("standin: grade --resume"):
        grade_resumed(work, hidden)
    with timed("standin: a class"):
        grade_a_class(work, hidden)
    expect(check.STATUSES == ["PASS", "FAIL", "NOT_IMPLEMENTED", "BUILD_FAIL", "CRASH", "TIMEOUT", "SANITIZER",
                              "SANITIZER_UNAVAILABLE", "SKIP", "NOT_RUN"], "the status set is the documented one")
    real = check.find_sanitizer
    check.find_sanitizer = lambda: None
    st, _ = check.sanitize(T.task("shared-tree"), [], check.Settings())
    check.find_sanitizer = real
    expect(st == "SANITIZER_UNAVAILABLE", "without compute-sanitizer the stage says SANITIZER_UNAVAILABLE, never PASS")


def grade_resumed(work, hidden):
    """grade --resume takes the results an earlier run left in <out>/checked/ (the sheet
    unchanged), and the verdicts of the runs of a task cut in its middle; it checks again a
    task whose code changed or whose stored key does not match; without --resume nothing is
    taken."""
    few, whole = work / "few", work / "part-whole"  # grade_in_parts's submissions and sheet
    lab = [sys.executable, str(LABS / "lab.py"), "grade", "standin"]
    common = ["--hidden", str(hidden), "--no-timing", "--timeout", "10"]
    keys = ("student", "task", "status", "public_passed", "public_total", "hidden_passed", "hidden_total")
    sheet = lambda d: [{k: r[k] for k in keys} for r in csv.DictReader(open(d / "grades.csv"))]  # noqa: E731
    stored = sorted(p.name for p in (whole / "checked").glob("*.checked.json"))
    expect("reference--standin-sum.checked.json" in stored, f"grade keeps each checked task's result ({stored})")
    again = work / "resumed"
    shutil.copytree(whole, again)
    r = subprocess.run(lab + [str(few), "--out", str(again), "--resume"] + common, capture_output=True, text=True)
    resumed = [x for x in r.stdout.splitlines() if x.strip().startswith("resumed ")]
    expect(r.returncode == 0 and len(resumed) == len(stored) and sheet(again) == sheet(whole),
           f"grade --resume takes every stored result and writes the same sheet ({len(resumed)} of {len(stored)})")
    subs = len([p for p in few.iterdir() if p.is_dir()])
    expect(f"resumed: {subs} of {subs} submissions settled by stored results, not built again" in r.stdout,
           f"grade --resume builds no submission whose every task is stored ({check.first_line(r.stdout, 'resumed:')})")
    # A task cut in its middle: its result not stored, its runs' verdicts kept as they ended.
    cut = work / "resumed-cut"
    shutil.copytree(whole, cut)
    runs = sorted((cut / "checked" / "runs" / "reference--standin-sum").glob("*.json"))
    (cut / "checked" / "reference--standin-sum.checked.json").unlink()
    r = subprocess.run(lab + [str(few), "--out", str(cut), "--resume"] + common, capture_output=True, text=True)
    expect(r.returncode == 0 and runs and sheet(cut) == sheet(whole) and
           f"reference/standin-sum: {len(runs)} of its runs' verdicts taken from an earlier run cut short" in r.stdout,
           f"grade --resume grades a task cut in its middle from the verdicts its runs left ({len(runs)} kept: "
           f"{check.first_line(r.stdout, 'reference/standin-sum')})")
    changed = work / "few-changed"
    shutil.copytree(few, changed)
    region = T.task("standin-sum").regions[0].file
    lines = (changed / "reference" / region).read_text().split("\n")
    begin = next(b for t, b, e, _ in regions.find_regions(lines) if t == "standin-sum")
    lines.insert(begin + 1, "  // a change to the region: its stored result no longer applies")
    (changed / "reference" / region).write_text("\n".join(lines))
    tampered = next(n for n in stored if not n.startswith("reference--"))
    data = json.loads((again / "checked" / tampered).read_text())
    (again / "checked" / tampered).write_text(json.dumps(dict(data, key="0" * 64)))
    r = subprocess.run(lab + [str(changed), "--out", str(again), "--resume"] + common, capture_output=True, text=True)
    resumed = {x.split()[1].split("/")[0] for x in r.stdout.splitlines() if x.strip().startswith("resumed ")}
    expect(r.returncode == 0 and "reference" not in resumed and tampered.split("--")[0] not in resumed,
           f"grade --resume checks again a changed region and a stored result whose key does not match "
           f"(resumed: {sorted(resumed)})")
    expect(f"resumed: {subs - 2} of {subs} submissions settled" in r.stdout,
           f"grade --resume builds exactly the submissions it must check again ({check.first_line(r.stdout, 'resumed:')})")
    r = subprocess.run(lab + [str(few), "--out", str(again)] + common, capture_output=True, text=True)
    expect(r.returncode == 0 and "resumed " not in r.stdout, "without --resume no stored result is taken")


def grade_in_parts(work, hidden):
    """grade --part 1/2, --part 2/2 and --merge write the sheet that one grading of the
    same submissions writes (three of the self-test's, untimed); --merge refuses a
    student graded in two parts."""
    few = work / "few"
    for name in ("reference", "stubs", "mistakes-1"):
        shutil.copytree(work / "submissions" / name, few / name)
    with open(few / "reference" / "answers.md", "a") as f:
        f.write("\nMeasured 1.9 GB/s against a predicted 2, since the loop is latency-bound.\n")
    lab = [sys.executable, str(LABS / "lab.py"), "grade", "standin"]
    common = ["--hidden", str(hidden), "--no-timing", "--timeout", "10"]
    runs = {"whole": [str(few)], "1": [str(few), "--part", "1/2"], "2": [str(few), "--part", "2/2"]}
    for name, args in runs.items():
        r = subprocess.run(lab + args + ["--out", str(work / f"part-{name}")] + common, capture_output=True, text=True)
        expect(r.returncode == 0, f"standin: grade {' '.join(args[1:]) or 'whole'} runs ({r.stderr[-300:]})")
    merged = subprocess.run(lab + ["--merge", str(work / "part-1"), str(work / "part-2"), "--out", str(work / "merged")],
                            capture_output=True, text=True)
    keys = ("student", "task", "status", "public_passed", "public_total", "hidden_passed", "hidden_total")
    sheet = lambda d: [{k: r[k] for k in keys} for r in csv.DictReader(open(d / "grades.csv"))]  # noqa: E731
    expect(merged.returncode == 0 and sheet(work / "merged") == sheet(work / "part-whole"),
           "standin: grading in two parts and merging gives the sheet of one grading")
    said = {r["student"]: r["answers"] for r in csv.DictReader(open(work / "merged" / "grades.csv"))}
    expect(said.get("stubs") == "blank" and said.get("reference", "").endswith(" words")
           and (work / "merged" / "reference.answers.md").is_file(),
           f"standin: the sheet says whether answers.md was written, and the file is collected ({said})")
    twice = subprocess.run(lab + ["--merge", str(work / "part-1"), str(work / "part-whole"), "--out", str(work / "bad")],
                           capture_output=True, text=True)
    expect(twice.returncode == 2 and "is in both" in twice.stderr, "standin: --merge refuses a student in two parts")


def grade_a_class(work, hidden):
    """A generated class (lab.py class: 4 students of the stand-in, half with a catalogued
    mistake; with seed 1 an off-by-one and a flood of output, one in each part) graded in two
    parts and merged gives every expected grade, with no two students' code the same; the
    comparison fails a sheet in which a mistake was graded PASS; and --record counts the
    students per GPU-hour from the parts' wall seconds."""
    lab = [sys.executable, str(LABS / "lab.py")]
    made = subprocess.run(lab + ["class", "standin", "4", str(work / "class"), "--seed", "1", "--mistakes", "0.5"],
                          capture_output=True, text=True)
    expect(made.returncode == 0, f"class: lab.py class writes 4 students ({made.stderr[-300:]})")
    expected = list(csv.DictReader(open(work / "class" / "expected.csv")))
    wrong = [r for r in expected if r["kind"] == "mistake"]
    expect(len({r["student"] for r in expected}) == 4 and len(wrong) == 2 and all(r["expected"] != "PASS" for r in wrong),
           f"class: 4 students, 2 of them with a mistake that must not pass ({[r['solution'] for r in wrong]})")
    parts = [work / "class" / f"part{k}" for k in (1, 2)]
    for k, d in enumerate(parts, 1):
        r = subprocess.run(lab + ["grade", "standin", str(work / "class" / "submissions"), "--part", f"{k}/2", "--out",
                                  str(d), "--hidden", str(hidden), "--no-timing", "--timeout", "10"],
                           capture_output=True, text=True)
        expect(r.returncode == 0, f"class: grade --part {k}/2 runs ({r.stderr[-300:]})")
    merged = work / "class" / "merged"
    subprocess.run(lab + ["grade", "standin", "--merge", *map(str, parts), "--out", str(merged)], capture_output=True)
    compared = subprocess.run(lab + ["class", "standin", "--compare", str(work / "class" / "expected.csv"), str(merged)],
                              capture_output=True, text=True)
    expect(compared.returncode == 0 and "standin: 0 unexpected grades" in compared.stdout,
           "class: the merged sheet of two parts gives every expected grade:\n"
           + "\n".join(line for line in compared.stdout.splitlines() if not line.startswith("ok")))
    rows = list(csv.DictReader(open(merged / "grades.csv")))
    expect(len({r["sources_sha256"] for r in rows}) == 4, "class: no two students hand in the same code")
    # A mistake graded PASS (a grader that missed it) must fail the comparison.
    shutil.copytree(merged, work / "class" / "missed")
    mistaken = {(r["student"], r["task"]) for r in wrong}
    for r in rows:
        if (r["student"], r["task"]) in mistaken:
            r["status"] = "PASS"
            break
    with open(work / "class" / "missed" / "grades.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    missed = subprocess.run(lab + ["class", "standin", "--compare", str(work / "class" / "expected.csv"),
                                   str(work / "class" / "missed")], capture_output=True, text=True)
    expect(missed.returncode == 1 and "standin: 1 unexpected grades" in missed.stdout,
           "class: a mistake graded PASS is an unexpected grade")
    rec = subprocess.run(lab + ["class", "standin", "--record", str(work / "class"), "--grades", str(merged), "--parts",
                                *map(str, parts), "--walls", "1.5", "2.5", "--options=--no-timing --timeout 10"],
                         capture_output=True, text=True)
    c = json.loads((work / "class" / "class.json").read_text())
    expect(rec.returncode == 0 and c["students_per_gpu_hour"] == 3600.0 and c["complete"] and c["unexpected"] == 0
           and c["timing_rounds"] == 0 and c["sanitizer"] and [p["students"] for p in c["parts"]] == [2, 2],
           f"class: --record writes 4 students / 4 s = 3600 per GPU-hour, no timing, 0 unexpected ({rec.stdout})")


def check_static_declaration(tmp):
    """A student's own __shared__ array of any element type, declared in the region, is a
    declaration and not an access past its end (the pass once read `uint32_t scratch[65536]`
    as scratch[65536]); an access past its end is still found."""
    ref = E.export("histogram", tmp / "static-declaration", reference=True)
    task = T.task("shared-privatized")
    f = task.regions[0].file
    for index, want in (("threadIdx.x", False), ("threadIdx.x + 65536", True)):
        body = ["  __shared__ uint32_t scratch[64 * 1024];", f"  scratch[{index}] = 0;"] + \
            regions.task_bodies(ROOT, task)[0]
        regions.replace_bodies(ref / f, task.id, [body])
        found = [x.text() for x in static.analyse(ref, task) if x.rule == "shared-out-of-bounds"]
        expect(bool(found) == want, f"static pass, a region's own uint32_t __shared__ array indexed by {index}: "
                                    f"{'found' if want else 'no finding'} ({found})")
    shutil.rmtree(ref)


def check_untimed_selftest(tmp):
    """selftest --no-timing plants no exploit that only the graded timing catches (it would
    pass ungraded and count as a false alarm: cache-by-pointer did on an H100); with timing
    it plants them all."""
    timed = {e.name for entries in X.EXPLOITS.values() for e in entries if e.timed}
    for timing in (True, False):
        expected, _ = S.plant("histogram", tmp / f"plant-{timing}", timing=timing)
        planted = {w.get("mistake") for per in expected.values() for w in per.values()}
        expect(bool(planted & timed) == timing, f"selftest {'with' if timing else 'without'} timing plants "
                                                f"{'the' if timing else 'none of the'} timed exploits "
                                                f"({sorted(planted & timed)})")
        shutil.rmtree(tmp / f"plant-{timing}")


def check_requirements():
    """The grader's order and NOT_RUN rule with the checks replaced by a table (no GPU),
    and the self-test's packing and expectations for the tracks whose tasks need others."""
    from argparse import Namespace
    tasks = T.track_tasks("scan")
    table = {("broken-scan", "warp-scan"): "FAIL", ("slow-lookback", "lookback"): "TIMEOUT",
             ("stub-scan", "warp-scan"): "NOT_IMPLEMENTED"}
    ran = []
    g = G.Grader.__new__(G.Grader)
    g.a = Namespace(seed=1, timeout=5, no_sanitizer=True, parallel=2, hidden=None, rounds=1, gpu_arch=None,
                    resume=False)
    g.tasks, g.reuse, g.same_code, g.without, g.without_for, g.hidden = tasks, False, {}, set(), {}, None
    g.hidden_digest, g.versions, g.settled = None, {}, set()
    g.work = Path(tempfile.mkdtemp(prefix="labs-req-"))
    g.out = g.work / "out"  # where each checked task's result is kept (grade --resume)
    g.ref_bin = g.work / "reference-bin"  # where build_all puts the reference programs
    subs = [Path(n) for n in ("all-pass", "broken-scan", "slow-lookback", "stub-scan")]
    stubs = {"warp-scan": ("NOT_IMPLEMENTED", "stub"), "lookback": ("NOT_IMPLEMENTED", "stub")}
    built = {s.name: (dict(stubs) if s.name == "stub-scan" else {},
                      {c.chapter: (True, "") for t in tasks for c in t.checks}) for s in subs}
    g.builds = dict(built)
    real_check, real_digest = G.check_task, G.regions.sources_digest

    def fake_check(task, sub, binary, settings, built=None):
        ran.append((Path(sub).name, task.id))
        return check.TaskResult(task.id, status=table.get((Path(sub).name, task.id), "PASS"))

    G.check_task = fake_check
    G.regions.sources_digest = lambda sub, task: [(f"chapters/{task.id}.cuh", "0" * 64)]
    try:
        first = g.check_all(subs)
        got = {(s, t): r.status for (s, t), r in first.items()}
        # --resume over what that run stored: every submission settled (a NOT_RUN task needs no
        # stored result), none built, none checked again, the same statuses
        g.a.resume, g.a.no_timing, before = True, True, len(ran)
        g.settled = {s.name for s in subs if g.all_stored(s)}
        g.builds = {s.name: ({}, {}) for s in subs}
        resumed = g.check_all(subs)
        again = {(s, t): r.status for (s, t), r in resumed.items()}
        expect(g.settled == {s.name for s in subs} and again == got and len(ran) == before,
               f"grade --resume: stored results settle every submission, NOT_RUN tasks included, and nothing runs "
               f"again (settled {sorted(g.settled)}, {len(ran) - before} runs)")
        # a stored result read back is the result that was stored, to its sources' (file, sha256)
        # pairs, and its sheet is written (a stub's own NOT_IMPLEMENTED below a stub is taken as read)
        differ = sorted(k for k in first if resumed[k] != first[k])
        try:
            for s in subs:
                G.write_report(g.work, s.name, "scan", [resumed[(s.name, t.id)] for t in tasks], {})
            wrote = ""
        except TypeError as e:
            wrote = f"; the sheet: {e}"
        expect(not differ and not wrote, f"grade --resume: every stored result reads back as it was stored "
               f"and the sheets are written (differ: {differ}{wrote})")
        # a run cut after the stub's first task, before its second was reached: nothing stored
        # for the second, so the submission is built again and the stub is still a stub
        for stage in ("checked", "blocked"):
            g.stored_path(Path("stub-scan"), tasks[1], stage).unlink(missing_ok=True)
        g.settled = {s.name for s in subs if g.all_stored(s)}
        g.builds = {s.name: ({}, {}) if s.name in g.settled else built[s.name] for s in subs}
        cut = {(s, t): r.status for (s, t), r in g.check_all(subs).items()}
        expect("stub-scan" not in g.settled and cut == got,
               f"grade --resume after a cut before a blocked task: the submission is built again and every grade "
               f"is the first run's (settled {sorted(g.settled)}, differ: {sorted(k for k in got if cut[k] != got[k])})")
    finally:
        G.check_task, G.regions.sources_digest = real_check, real_digest
        shutil.rmtree(g.work, ignore_errors=True)
    want = {("all-pass", "warp-scan"): "PASS", ("all-pass", "lookback"): "PASS", ("all-pass", "digit-scatter"): "PASS",
            ("broken-scan", "warp-scan"): "FAIL", ("broken-scan", "lookback"): "NOT_RUN",
            ("broken-scan", "digit-scatter"): "NOT_RUN", ("slow-lookback", "warp-scan"): "PASS",
            ("slow-lookback", "lookback"): "TIMEOUT", ("slow-lookback", "digit-scatter"): "NOT_RUN",
            ("stub-scan", "warp-scan"): "NOT_IMPLEMENTED", ("stub-scan", "lookback"): "NOT_IMPLEMENTED",
            ("stub-scan", "digit-scatter"): "NOT_RUN"}
    expect(got == want, "grader: a task whose required task does not pass is NOT_RUN"
           + ("" if got == want else f" (got {got})"))
    expect(not any(t != "warp-scan" for s, t in ran if s == "broken-scan") and
           ("slow-lookback", "digit-scatter") not in ran, "grader: a NOT_RUN task's checks are not run")
    for track in ("scan", "reduce"):
        by_id = {t.id: t for t in T.track_tasks(track)}
        packs = S.pack(track, M.MISTAKES) + S.pack(track, X.EXPLOITS)
        expect(all(not S.related(by_id[a], by_id[b]) for p in packs for a in p for b in p if a != b),
               f"{track}: no pack holds two tasks of which one needs the other")
    # a timed matrix product is quoted in TFLOP/s (GB/s of its bytes would say little), a stream in GB/s
    speeds = {"mma-fragments": {"gbps": 153.0, "tflops": 412.5}, "warp-scan": {"gbps": 3535.0, "tflops": None}}
    rows = [check.TaskResult(t, status="PASS", speed=dict(v, speed_ratio=1.0, speed_band="at reference"))
            for t, v in speeds.items()]
    folder = Path(tempfile.mkdtemp(prefix="labs-report-"))
    G.write_report(folder, "figures", "gemm", rows, {})
    report = (folder / "figures.md").read_text()
    shutil.rmtree(folder)
    expect("| 412.5 TFLOP/s, 1.00x reference" in report and "| 3535 GB/s, 1.00x reference" in report,
           "the report quotes a timed matrix product in TFLOP/s and a stream in GB/s")
    per = S.propagate(tasks, {"warp-scan": {"status": "FAIL"}, "lookback": {"status": "PASS"},
                              "digit-scatter": {"status": "PASS"}})
    expect([per[t]["status"] for t in ("lookback", "digit-scatter")] == ["NOT_RUN", "NOT_RUN"],
           "self-test: the tasks that need a failing task are expected NOT_RUN")


def check_run_log(tmp):
    """LAB_RUN_LOG: a line per program run (seconds, exit code, command), and the program
    does not see the variable."""
    from labkit import runner
    log = Path(tmp) / "runs.log"
    before = os.environ.get("LAB_RUN_LOG")
    os.environ["LAB_RUN_LOG"] = str(log)
    try:
        r = runner.run([sys.executable, "-c", "import os, sys; print('LAB_RUN_LOG' in os.environ); sys.exit(3)"],
                       30)
    finally:
        if before is None:
            os.environ.pop("LAB_RUN_LOG", None)
        else:
            os.environ["LAB_RUN_LOG"] = before
    lines = log.read_text().splitlines() if log.exists() else []
    expect(len(lines) == 1 and " exit 3 " in lines[0] and sys.executable in lines[0],
           f"LAB_RUN_LOG: one line with the exit code and the command (got {lines})")
    expect(r.out.strip() == "False", f"LAB_RUN_LOG is not passed to the program run (it printed {r.out.strip()!r})")


def check_sanitizer_verdict():
    """The sanitizer stage fails a task on its own steps only: a run whose exit code is 1
    because another task's check failed beside --variant passes (the scan self-test on an
    H200), and one where the task's own step fails does not."""
    from labkit.runner import Run
    task = T.task("warp-scan")
    c = task.checks[0]

    def fake(lines, code):
        return lambda *a, **k: Run(cmd=[], code=code, out="\n".join(json.dumps(x) for x in lines)).parse()

    own_ok = [{"record": "check", "what": c.steps[0] + " u32", "ok": True},
              {"record": "check", "what": "status-protocol", "ok": False}, {"record": "summary", "checks": 2}]
    own_bad = [{"record": "check", "what": c.steps[0] + " u32", "ok": False}, {"record": "summary", "checks": 1}]
    real_run, real_find = check.run, check.find_sanitizer
    check.find_sanitizer = lambda: "compute-sanitizer"
    try:
        check.run = fake(own_ok, 1)
        other = check.sanitize(task, [(c, ["prog"])], Namespace(seed=1, sandbox=None))[0]
        check.run = fake(own_bad, 1)
        mine = check.sanitize(task, [(c, ["prog"])], Namespace(seed=1, sandbox=None))[0]
    finally:
        check.run, check.find_sanitizer = real_run, real_find
    expect(other == "PASS", f"sanitizer stage: another task's failing check is not this task's failure (got {other})")
    expect(mine == "FAIL", f"sanitizer stage: the task's own failing step under the sanitizer fails it (got {mine})")


def check_build_error_without_file():
    """A build that fails with an error naming no file (ptxas on a kernel asking more shared
    memory than a block may have: the transpose self-test's launch-beyond-the-device) still
    says why, instead of 'does not compile: ' and nothing."""
    text = ("FAILED: chapters/10_transpose_shared.p/10_transpose_shared.cu.o\n"
            "ptxas error   : Entry function '_Z4tilePf' uses too much shared data (0xc100 bytes, 0xc000 max)\n"
            "ninja: build stopped: subcommands failed.")
    got = check.build_errors("10_transpose_shared", [], text, ROOT, [])
    expect("uses too much shared data" in got, f"a build error without a file is shown as printed (got '{got}')")


def check_selftest_merge(tmp):
    """A self-test split into parts (--part i/k: over GPUs, or over runs of a time-limited
    machine) is joined by --merge and compared as one: a submission no part graded is MISSING,
    an unexpected grade fails, and parts that planted different submissions are refused."""
    plan = {"reference": {"standin-sum": {"status": "PASS"}},
            "stubs": {"standin-sum": {"status": "NOT_IMPLEMENTED"}},
            "mistakes-1": {"standin-sum": {"status": "FAIL", "says": "wrong sum", "mistake": "off-by-one"}}}
    root = tmp / "selftest-parts"

    def part(name, rows, expected=plan):
        d = root / name
        d.mkdir(parents=True, exist_ok=True)
        lines = ["student,task,track,status,detail"] + [f"{st},standin-sum,standin,{g},{why}" for st, g, why in rows]
        (d / "grades.csv").write_text("\n".join(lines) + "\n")
        if expected is not None:
            (d / "expected.json").write_text(json.dumps(expected))
        return str(d)

    p1 = part("p1", [("mistakes-1", "FAIL", "a wrong sum at --n 31"), ("reference", "PASS", "")])
    p2 = part("p2", [("stubs", "NOT_IMPLEMENTED", "the stub")])

    def merge(*dirs):
        out = root / f"all-{len(list(root.glob('all-*')))}"
        r = subprocess.run([sys.executable, str(LABS / "lab.py"), "selftest", "standin", "--merge", *dirs,
                            "--out", str(out)], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    code, text = merge(p1, p2)
    expect(code == 0 and "selftest standin: 0 unexpected grades (merged from 2 parts)" in text,
           f"selftest --merge joins two parts that graded as expected (exit {code}):\n{text[-600:]}")
    code, text = merge(p1)
    expect(code == 1 and "MISSING stubs" in text, f"selftest --merge: a submission no part graded is MISSING (exit {code})")
    code, text = merge(p1, part("p3", [("stubs", "PASS", "")]))
    expect(code == 1 and "BAD stubs" in text, f"selftest --merge: a stub graded PASS is unexpected (exit {code})")
    other = dict(plan, **{"correct-1": {"standin-sum": {"status": "PASS"}}})
    code, text = merge(p1, part("p4", [("stubs", "NOT_IMPLEMENTED", "")], expected=other))
    expect(code == 2 and "planted different submissions" in text,
           f"selftest --merge refuses parts that planted different submissions, exit 2 (got {code})")
    code, text = merge(p1, part("p5", [("stubs", "NOT_IMPLEMENTED", "")], expected=None))
    expect(code == 2 and "no expected.json" in text,
           f"selftest --merge of a part that did not finish is a usage error, exit 2 (got {code})")


def check_race_diagnosis():
    """The repeats of a check are one run of --repeat 10 (a race-prone task; 2 otherwise) per
    check, and a race is diagnosed when that run's repeats ended differently (some passed, or
    two failed otherwise: common/bench/outputs.h, repeat_detail), not when two checks of a task
    differ (lookback's four checks run four steps: one step's repeats may all fail the same way
    while another's pass). The checks' runs replaced by a table (no GPU)."""
    task = T.task("lookback")
    first = task.checks[0]
    real = (check.gpu_present, check.run_verdict, check.classify)
    cases = (("repeat 1 of 10 (10 failed): got 7", "classified"),
             ("repeat 2 of 10 (5 failed): got 7", "a race"),
             ("repeat 1 of 10 (10 failed): got 7 | repeat 4: got 9", "a race"),
             ("repeat 1 of 10 (10 failed): got 7.0000001 | repeat 4: got 7", "classified"))
    for detail, want in cases:
        repeat_runs = []

        def fake(c, exe, args, settings, detail=detail, repeat_runs=repeat_runs):
            if "--repeat" not in args:  # the sweeps pass
                return "PASS", 1, 1, []
            repeat_runs.append((c, args[args.index("--repeat") + 1]))
            if c is not first:  # the other checks' repeats pass
                return "PASS", 1, 1, []
            return "FAIL", 0, 1, [f"FAIL lookback-vec u32: {detail}"]

        check.gpu_present, check.run_verdict = (lambda: (True, "")), fake
        check.classify = lambda task, exes, settings: "classified"
        try:
            res = check.check_task(task, ROOT, lambda ch: Path("/nonexistent") / ch,
                                   check.Settings(sanitizer=False, rules=False),
                                   built={c.chapter: (True, "") for c in task.checks})
        finally:
            check.gpu_present, check.run_verdict, check.classify = real
        expect(res.status == "FAIL" and want in res.diagnosis,
               f"checker: a --repeat run whose repeats say {detail!r} is diagnosed '{want}' beside other "
               f"checks that pass (got {res.status}, {res.diagnosis!r})")
        expect(sorted((task.checks.index(c), n) for c, n in repeat_runs) ==
               [(k, str(check.RACE_REPEATS)) for k in range(len(task.checks))],
               f"checker: one --repeat {check.RACE_REPEATS} run per check of a race-prone task (got "
               f"{[(c.steps[0], n) for c, n in repeat_runs]})")


def check_dump_budget():
    """The dumps on disk at once are bounded in bytes (LAB_DUMP_GB): a run waits until its
    expected dump fits, its repeats times the largest dump one repeat of the same program and
    sizes made (1 GB before the first); the seed and --repeat do not change what it dumps."""
    import threading
    budget = check.DumpBudget(4)  # 4 GB
    order = []
    key = check.dump_key(T.task("lookback").checks[0], ["--seed", "1", "--variant", "lookback-vec", "--n", "9",
                                                         "--repeat", "3"])
    expect(key == check.dump_key(T.task("lookback").checks[0], ["--seed", "7", "--variant", "lookback-vec", "--n", "9"]),
           f"checker: the seed and --repeat are not part of a dump's size key ({key})")
    with budget.hold(key, check.repeats_of(["--seed", "1", "--repeat", "3"])):
        expect(budget.used == 3e9, f"checker: a run of --repeat 3 expects 3 GB before anything is learned "
                                   f"({budget.used / 1e9:.1f} GB held)")

        def second():
            with budget.hold(key, 2):
                order.append("second")
        late = threading.Thread(target=second)
        late.start()
        late.join(0.2)
        expect(not order, "checker: a run that expects 2 GB waits while 1 GB of 4 is free")
        order.append("first")
    late.join(5)
    expect(order == ["first", "second"] and budget.used == 0,
           f"checker: the waiting run starts once the first is judged (order {order}, {budget.used} bytes held)")
    budget.learn(key, 3e8, 3)  # a --repeat 3 run that passed dumped 0.3 GB: 0.1 GB a repeat
    expect(budget.expected(key, 10) == 1e9, f"checker: ten repeats of a learned 0.1 GB expect 1 GB "
                                            f"({budget.expected(key, 10) / 1e9} GB)")
    with budget.hold(("18_radix_sort", ()), 10):
        expect(budget.used == 1e10, "checker: a run larger than the whole budget runs alone")
    expect(check.repeats_of(["--n", "5"]) == 1, "checker: a run without --repeat is one repeat")
    for bad in ("abc", "0", "-3"):
        r = subprocess.run([sys.executable, "-c", "from labkit import check"], cwd=ROOT / "chapters" / "labs",
                           env={**os.environ, "LAB_DUMP_GB": bad}, capture_output=True, text=True)
        expect(r.returncode == 2 and "LAB_DUMP_GB expects gigabytes from 1 to" in r.stderr
               and "Traceback" not in r.stderr,
               f"checker: LAB_DUMP_GB={bad} is refused with one line (exit {r.returncode}: {r.stderr.strip()[:80]})")


def check_tree_digest():
    """The stored results' tree digest leaves out the lab tools that grade nothing (the
    catalogues of plants, the class generator, the tests), and keeps every file that does:
    the grader, the checker, the chapters."""
    instructor, labkit = LABS / "instructor", LABS / "labkit"
    out = [instructor / f for f in ("corpus_scan.py", "mistakes.py", "exploits.py", "make_class.py", "test_labs.py")]
    kept = [instructor / f for f in ("grade.py", "audit.py", "selftest.py", "export.py", "check_hints.py")] + \
        sorted(labkit.glob("*.py")) + [LABS / "lab.py", LABS / "tasks.py", ROOT / "chapters/16_scan/16_scan.cu",
                                       ROOT / "common/bench/protocol.h"]
    expect(all(G.grades_nothing(f) for f in out) and not any(G.grades_nothing(f) for f in kept),
           f"tree digest: leaves out {[f.name for f in out if not G.grades_nothing(f)] or 'the plants and tests'}, "
           f"keeps {[f.name for f in kept if G.grades_nothing(f)] or 'the grader and the chapters'}")


def check_hidden_example():
    """The example hidden file gives every task of every GPU track hidden sizes (a task
    without cases would only run the public sweep again with other seeds)."""
    cases = json.loads((INSTRUCTOR / "hidden-example.json").read_text())["cases"]
    missing = [t.id for t in T.TASKS if t.track != "standin" and not cases.get(t.id)]
    expect(not missing, f"hidden-example.json: every GPU task has hidden cases {missing}")


def check_timing_for():
    """--timing-for names submissions, or their tasks as SUBMISSION/TASK (the self-test times a
    planted solution's own task, not the reference's regions beside it)."""
    from types import SimpleNamespace as NS
    sub, a, b = NS(name="correct-1"), NS(id="warp-scan"), NS(id="lookback")

    def timed(timing_for, task, no_timing=False):
        return G.Grader.timed(NS(a=NS(no_timing=no_timing, timing_for=timing_for)), sub, task)
    cases = [(None, a, True), ("correct-1", b, True), ("correct-1/warp-scan", a, True),
             ("correct-1/warp-scan", b, False), ("correct-1/warp-scan", None, True), ("correct-10/lookback", b, False),
             ("correct-10", None, False), ("reference,correct-1/lookback", b, True)]
    for timing_for, task, want in cases:
        expect(timed(timing_for, task) == want,
               f"grade: --timing-for {timing_for} {'times' if want else 'does not time'} "
               f"{sub.name}/{task.id if task else '(any task)'}")
    expect(not timed(None, a, no_timing=True), "grade: --no-timing times nothing")


def check_timed_one_step():
    """The grader's timed run of a task (its first check) times the task's first step alone:
    a chapter's other steps, each with the graded timing's new input and check per call, made
    one timed run of chapter 08 take seconds."""
    loose = [t.id for t in T.TASKS if t.checks and len(t.checks[0].steps) > 1
             and (t.checks[0].args + t.checks[0].time_args).count("--variant") != 1]
    expect(not loose, f"every task's timed run names its step with one --variant {loose}")


def check_stability_merge(tmp):
    """A stability run split over GPUs (--part i/k) is joined by --merge: it counts the copies
    graded and the ratio spread over all parts, and it fails when a copy is missing."""
    sheet = ["student,task,status,speed_ratio"]
    for k, (part, ratio) in enumerate([(1, "1.00"), (2, "0.99"), (1, "1.01")], 1):
        d = tmp / "stability-parts" / f"p{part}"
        d.mkdir(parents=True, exist_ok=True)
        rows = (d / "grades.csv").read_text().splitlines() if (d / "grades.csv").exists() else sheet
        (d / "grades.csv").write_text("\n".join(rows + [f"reference-{k:02d},standin-sum,PASS,{ratio}"]) + "\n")
    parts = [str(tmp / "stability-parts" / p) for p in ("p1", "p2")]

    def merge(n, *dirs):
        out = tmp / "stability-parts" / f"all-{n}-{len(dirs)}"
        r = subprocess.run([sys.executable, str(LABS / "lab.py"), "selftest", "standin", "--stability", str(n),
                            "--merge", *dirs, "--out", str(out)], capture_output=True, text=True)
        md = (out / "stability.md").read_text() if (out / "stability.md").exists() else ""
        return r.returncode, md

    code, md = merge(3, *parts)
    expect(code == 0 and "Copies graded: 3 of 3." in md and "| standin-sum | PASS | 0.990 | 1.000 | 1.010 | 1.0202 |" in md,
           f"stability --merge joins the parts: 3 of 3 copies, spread 1.0202 (exit {code}):\n{md}")
    code, md = merge(4, *parts)
    expect(code == 1 and "Copies graded: 3 of 4." in md, f"stability --merge fails with a copy missing (exit {code})")
    code, _ = merge(3, parts[0], str(tmp / "stability-parts" / "none"))
    expect(code == 2, f"stability --merge of a part without a sheet is a usage error, exit 2 (got {code})")


def check_track(track, tmp, consts, shared_tests):
    """Every check of one track's copy. With shared_tests the copy's `meson test` runs the tests
    of chapters 00 and 01 too (SHARED_FILES)."""
    with timed(f"{track}: export, files, leaks, static pass"):
        copy = E.export(track, tmp / track)
        check_copy_files(track, copy, tmp)
        check_leaks(track, copy, consts)
        check_static(track, tmp)
    if os.environ.get("LAB_SKIP_COPY_BUILD") != "1":
        with timed(f"{track}: statuses (setup, build, lab suite, check)"):
            check_statuses(track, copy)
        with timed(f"{track}: edits (meson test, check, BUILD_FAIL)"):
            check_edits(track, copy, shared_tests)
    shutil.rmtree(copy, ignore_errors=True)


def scratch_repo(tmp):
    """A git repository of this tree's tracked files (as they are now), for the tests that
    plant files where an instructor would: the checkout itself is never touched (the
    tracks' tests export from it side by side)."""
    repo = tmp / "export-repo"
    files, _ = E.repo_files(ROOT)
    for f in files:
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, repo / f)
    git = ["git", "-C", str(repo), "-c", "user.name=labs-tools", "-c", "user.email=labs-tools@localhost",
           "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the tracked files"]):
        subprocess.run(git + args, check=True, capture_output=True)
    return repo


def plant(repo, files):
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)


def unplant(repo, files):
    for rel in files:
        top = rel.split("/")[0]
        if top not in ("chapters", "common", "docs") and (repo / top).is_dir():
            shutil.rmtree(repo / top)  # a planted folder of its own
        elif (repo / rel).exists():
            (repo / rel).unlink()


def export_from(repo, tmp, name, *extra):
    dest = tmp / "export-out" / name
    r = subprocess.run([sys.executable, str(repo / "chapters/labs/lab.py"), "export", "reduce", str(dest), *extra],
                       capture_output=True, text=True)
    return r, dest


def copy_files(dest):
    return {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()}


def check_export_strays(tmp):
    """An export holds the track's tracked files and nothing else, and refuses (exit 2, one
    message naming them) while the repository holds what looks like hidden inputs,
    submissions, grades or another copy: each planted in a scratch repository as an
    instructor would have it (the README's grade command once put them in the root)."""
    tracked = E.repo_files(ROOT)[0]
    for track in T.TRACKS:  # the allowlist drops nothing keep_in_copy keeps
        dropped = [f for f in tracked if E.keep_in_copy(f, track) and not E.allowed(f)]
        expect(not dropped, f"export allowlist: every tracked file a {track} copy keeps is on COPY_ALLOWLIST "
                            f"(add it there, or leave it out in keep_in_copy) {dropped[:4]}")
    if not shutil.which("git"):
        print("skip  export strays: no git program")
        return
    repo = scratch_repo(tmp)
    tracked = set(E.repo_files(repo)[0])
    nested = E.export("scan", tmp / "nested-copy", root=repo)
    nested_files = {f"lab-scan/{f}": (nested / f).read_text(errors="replace") for f in copy_files(nested)}
    shutil.rmtree(nested)
    plants = [("an untracked hidden.json in the root", {"hidden.json": '{"seeds": [7], "cases": {}}'}, "hidden.json"),
              ("a submissions/ folder in the root", {"submissions/alice/chapters/02_reduce_global/02_reduce_global.cu":
                                                     "// alice", "submissions/bob/notes.txt": "bob"}, "submissions/"),
              ("a grades/ folder", {"grades/grades.csv": "student,task\n"}, "grades/"),
              ("a nested student copy (lab-scan/)", nested_files, "lab-scan/"),
              ("an untracked .json beside the results the copy takes",
               {"docs/runs/results/hidden-cases.json": '{"seeds": [7]}'}, "docs/runs/results/hidden-cases.json")]
    for k, (what, files, name) in enumerate(plants):
        plant(repo, files)
        r, dest = export_from(repo, tmp, f"plant-{k}")
        unplant(repo, files)
        ok = r.returncode == 2 and name in r.stderr and "Move them out of the repository" in r.stderr \
            and not dest.exists()
        why = f" (exit {r.returncode}, copy written: {dest.exists()}: {r.stderr.strip()[-300:]})"
        expect(ok, f"export refuses, exit 2, with {what}, naming {name}" + ("" if ok else why))
    every = {}
    for _, files, _ in plants:
        every.update(files)
    plant(repo, every)
    r, dest = export_from(repo, tmp, "plant-all")
    unplant(repo, every)
    named = [name for _, _, name in plants if f"  {name} (" in r.stderr]
    expect(r.returncode == 2 and len(named) == len(plants) and r.stderr.count("error:") == 1,
           f"export refuses every plant at once in one message naming each ({len(named)} of {len(plants)} named)")
    strays = {"chapters/02_reduce_global/stray_kernel.cu": "__global__ void stray() {}\n",
              "common/stray_helper.h": "#pragma once\n", "docs/stray_notes.md": "# notes\n",
              "chapters/labs/labkit/stray.py": "X = 1\n"}
    plant(repo, strays)  # untracked sources where the copy takes files: not suspicious, never copied
    r, dest = export_from(repo, tmp, "clean")
    held = copy_files(dest) if dest.exists() else set()
    extra = sorted(held - tracked - {E.TRACK_FILE, E.ANSWERS_FILE})  # written by the export, not in git
    expect(r.returncode == 0 and held and not extra and not (set(strays) & held),
           f"a clean export beside untracked source files holds tracked files only (exit {r.returncode}, "
           f"not tracked: {extra[:4]})")
    shutil.rmtree(repo / ".git")  # without git: refused unless --without-git, which still refuses strays
    r, dest = export_from(repo, tmp, "no-git")
    expect(r.returncode == 2 and "--without-git" in r.stderr and not dest.exists(),
           f"without git, export refuses and names --without-git (exit {r.returncode})")
    unplant(repo, strays)
    plant(repo, plants[0][1])
    r, dest = export_from(repo, tmp, "no-git-hidden", "--without-git")
    unplant(repo, plants[0][1])
    expect(r.returncode == 2 and "hidden.json" in r.stderr, f"without git, export still refuses a hidden.json "
                                                            f"(exit {r.returncode})")
    r, dest = export_from(repo, tmp, "no-git-clean", "--without-git")
    held = copy_files(dest) if dest.exists() else set()
    expect(r.returncode == 0 and held and held - {E.TRACK_FILE, E.ANSWERS_FILE} <= tracked,
           f"without git (--without-git) a clean tree exports the same kinds of file (exit {r.returncode}, "
           f"{sorted(held - {E.TRACK_FILE, E.ANSWERS_FILE} - tracked)[:4]})")
    shutil.rmtree(repo, ignore_errors=True)
    shutil.rmtree(tmp / "export-out", ignore_errors=True)


def check_standin(tmp):
    with timed("the stand-in (export strays, grader, class)"):
        with timed("export strays"):
            check_export_strays(tmp)
        catalogue_documented()
        check_requirements()
        check_sanitizer_verdict()
        check_run_log(tmp)
        check_build_error_without_file()
        check_static_declaration(tmp)
        check_untimed_selftest(tmp)
        check_stability_merge(tmp)
        check_selftest_merge(tmp)
        check_timed_one_step()
        check_race_diagnosis()
        check_dump_budget()
        check_timing_for()
        check_tree_digest()
        check_hidden_example()
        grader_on_standin(tmp)


def in_worker(check, *args):
    """Runs one part in a process of the pool; returns the failures it added (a process runs
    several parts in turn)."""
    before = len(failures)
    check(*args)
    return failures[before:]


def main():
    """The tracks run side by side, LAB_TRACK_JOBS at a time (default 3), each in its own
    process: while one copy compiles, another's Python checks run (one track alone keeps
    about 1.2 of 2 cores busy). The stand-in's checks run in one more process from the start:
    mostly one core for about 2 minutes (its grader builds some 50 submissions), they end
    beside the copies instead of after them. The compilers beside them change no grade: the
    stand-in has no exploit that only the timing catches, and its runs take milliseconds
    against a 10 s limit."""
    # The copies share a ccache: a caller that disables ccache for its own cold build must not
    # disable theirs.
    os.environ.pop("CCACHE_DISABLE", None)
    bad = E.strays(ROOT)  # every export below would refuse: say why once
    if bad:
        print("FAIL  the repository holds what an export refuses; move it out of the repository:\n"
              + "\n".join(f"        {k} ({why})" for k, why in sorted(bad.items())))
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="labs-tools-"))
    consts = L.repo_constants()
    only = os.environ.get("LAB_TRACKS", "").split(",") if os.environ.get("LAB_TRACKS") else None
    copy_setup(tmp)  # the shared ccache settings, written once before any copy reads them
    standin = not only or "standin" in only
    try:
        fork = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=TRACK_JOBS + standin, mp_context=fork) as pool:
            work = [pool.submit(in_worker, check_standin, tmp)] if standin else []
            if os.environ.get("LAB_SKIP_COPY_BUILD") != "1":
                with timed("the shared objects, into ccache"):
                    prime_cache(tmp)  # before any copy builds, beside the stand-in
            tracks = sorted((t for t in T.TRACKS if t != "standin" and (not only or t in only)),
                            key=lambda t: t not in SLOWEST_COPIES)  # the longest builds start first
            work += [pool.submit(in_worker, check_track, track, tmp, consts, track == tracks[0]) for track in tracks]
            for w in work:
                failures.extend(w.result())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
