"""The instructor's proof that the tools grade known submissions as expected.

    python3 chapters/labs/lab.py selftest reduce --out results/reduce
    python3 chapters/labs/lab.py selftest reduce --stability 10 --out results/reduce-stability
    python3 chapters/labs/lab.py selftest reduce --stability 10 --part 1/4 --out parts/1   (one GPU each,
    ... --part 4/4 --out parts/4; then --stability 10 --merge parts/1 ... parts/4 --out results/reduce-stability)
    python3 chapters/labs/lab.py selftest scan --part 1/3 --out parts/1   (likewise the self-test: a part per
    GPU or per run; then selftest scan --merge parts/1 parts/2 parts/3 --out results/scan)

The repository keeps its GPU runs' folders in docs/runs/labs/<gpu>/<track>[-stability]/
(.ci/gpu-run's steps labs and stability write them there; docs/runs/README.md).

Planted submissions, each an export of the track with known changes:
  reference      the repository's code: every task PASS
  stubs          the export as a student gets it: every task NOT_IMPLEMENTED
  mistakes-K     the catalogued mistakes (mistakes.py), one per task per submission
  correct-K      correct solutions written differently from the reference (corpus.py):
                 every one must PASS
  exploits-K     the catalogued exploits (exploits.py): code that games the grader
  ghosts         every region replaced by its stub plus a comment: the code runs and
                 computes nothing, so the checks themselves must fail it
Then the grade sheet is compared line by line with the expected grades. An exploit
with `without` is graded once more with that defence switched off, to show that the
next defence catches it alone.
"""
import csv
import json
import shutil
import statistics
import sys
import tempfile
from argparse import Namespace
from pathlib import Path

LABS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(LABS))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tasks as T  # noqa: E402
from labkit import regions  # noqa: E402
from labkit.runner import Sandbox  # noqa: E402

import corpus  # noqa: E402
import exploits  # noqa: E402
import grade  # noqa: E402
from grade import parse_part, usage_error  # noqa: E402
import mistakes  # noqa: E402
from export import export  # noqa: E402


def apply(tree, task, m):
    """Applies one mutation (a Mistake or an Exploit) inside the task's regions of
    m.file; errors if `old` is not there (a catalogue that drifted from the code). `old`
    and `new` may be tuples: one change each, in turn, for a mistake that spans two regions
    of the file (a tile stored in another layout and read in it)."""
    pairs = zip(m.old, m.new) if isinstance(m.old, tuple) else [(m.old, m.new)]
    path = Path(tree) / m.file
    for old, new in pairs:
        lines = path.read_text().split("\n")
        for t, b, e, _ in regions.find_regions(lines):
            if t != task.id:
                continue
            body = "\n".join(lines[b + 1:e]) + "\n"
            if old in body:
                body = body.replace(old, new, 1)
                lines[b + 1:e] = body[:-1].split("\n") if body.endswith("\n") else body.split("\n")
                path.write_text("\n".join(lines))
                break
        else:
            raise SystemExit(f"error: {task.id}/{m.name}: its text is not in a region of {m.file}")


def related(a, b):
    """Whether task a needs task b or b needs a, directly or through another task."""
    def needs(x, y):
        return any(r == y.id or needs(T.task(r), y) for r in x.requires)
    return needs(a, b) or needs(b, a)


def pack(track, catalogue):
    """Few submissions: one entry per task per submission, none in a file that another
    task of the same submission compiles, and no two tasks of which one needs the other
    (a task whose required task fails is NOT_RUN, which would hide its own grade)."""
    tasks = {t.id: t for t in T.track_tasks(track)}
    files = {tid: {r.file for r in t.regions} | {f"chapters/{c.chapter}/" for c in t.checks}
             for tid, t in tasks.items()}
    packs = []
    for tid, entries in catalogue.items():
        if tid not in tasks:
            continue
        for m in entries:
            for p in packs:
                clash = any(other.file in files[tid] or any(m.file.startswith(d) for d in files[o] if d.endswith("/"))
                            or m.file in files[o] or related(tasks[tid], tasks[o]) for o, other in p.items())
                if tid not in p and not clash:
                    p[tid] = m
                    break
            else:
                packs.append({tid: m})
    return packs


def propagate(tasks, per_task):
    """The expected grades of one submission once its tasks' requirements are applied:
    a task that needs a task not expected to pass is NOT_RUN, unless it is itself a stub
    or does not build (the grader's rule; see grade.Grader.check_all)."""
    for t in sorted(tasks, key=grade.task_level):
        want = per_task.get(t.id)
        if want is None or not t.requires:
            continue
        req = [per_task[r]["status"].split("|") for r in t.requires if r in per_task]
        if not any(s != ["PASS"] for s in req) or want["status"] in ("NOT_IMPLEMENTED", "BUILD_FAIL"):
            continue
        blocked = [r for r, s in zip(t.requires, req) if s != ["PASS"]]
        may_pass = all("PASS" in s for s in req)  # every required task may still pass: either grade
        per_task[t.id] = {"status": f"{want['status']}|NOT_RUN" if may_pass else "NOT_RUN",
                          "mistake": want.get("mistake") or f"needs {', '.join(blocked)}"}
    return per_task


def ghost(tree, task):
    """Every region of the task: its stub, plus one comment so it is no longer the stub."""
    for f in dict.fromkeys(r.file for r in task.regions):
        specs = [r for r in task.regions if r.file == f]
        lines = (Path(tree) / f).read_text().split("\n")
        found = [x for x in regions.find_regions(lines) if x[0] == task.id]
        bodies = [regions.stub_body(task, spec, indent) + [indent + "// (a ghost: the stub, run)"]
                  for (t, b, e, indent), spec in zip(found, specs)]
        regions.replace_bodies(Path(tree) / f, task.id, bodies)


def plant(track, dest, timing=True):
    """A folder of submissions with known grades; returns (expected, second passes)."""
    dest = Path(dest)
    tasks = T.track_tasks(track)
    expected = {}
    export(track, dest / "reference", reference=True)
    expected["reference"] = {t.id: {"status": "PASS"} for t in tasks}
    export(track, dest / "stubs", check_strays=False)  # the self-test's own copy (see make_class.make)
    expected["stubs"] = {t.id: {"status": "NOT_IMPLEMENTED"} for t in tasks}
    # Ghosts in as few submissions as the packing rule allows: a task that needs another
    # is ghosted beside that task's reference code, so its own checks run.
    ghost_packs = pack(track, {t.id: [Namespace(file=t.regions[0].file)] for t in tasks})
    for k, p in enumerate(ghost_packs, 1):
        name = "ghosts" if len(ghost_packs) == 1 else f"ghosts-{k}"
        export(track, dest / name, reference=True)
        expected[name] = {}
        for t in tasks:
            if t.id in p:
                ghost(dest / name, t)
            # A ghost must not pass. A region that others wait on (the look-back's status
            # words) can instead leave them waiting: the watchdog's TIMEOUT fails it too.
            expected[name][t.id] = ({"status": "FAIL|CRASH|TIMEOUT", "mistake": "ghost"} if t.id in p
                                    else {"status": "PASS"})
        propagate(tasks, expected[name])
    needs = [t for t in tasks if t.requires]
    if needs:  # a task whose checks run a required task that is still the stub: NOT_RUN
        export(track, dest / "partial", reference=True)
        expected["partial"] = {t.id: {"status": "PASS"} for t in tasks}
        for t in needs:
            for req in t.requires:
                r = T.task(req)
                for f in dict.fromkeys(x.file for x in r.regions):
                    bodies = [regions.stub_body(r, spec, "  ") for spec in r.regions if spec.file == f]
                    regions.replace_bodies(dest / "partial" / f, r.id, bodies)
                expected["partial"][req] = {"status": "NOT_IMPLEMENTED"}
            expected["partial"][t.id] = {"status": "NOT_RUN", "mistake": "needs a stub"}
    passes = []
    box = Sandbox()
    if not box.available:
        print(f"the sandbox is not available here ({box.why}): the exploits it stops are graded as without it")
    # Without timing an exploit that only the graded timing catches would pass: leave it out.
    untimed = {tid: [e for e in entries if not e.timed] for tid, entries in exploits.EXPLOITS.items()}
    left_out = sorted(e.name for tid, entries in exploits.EXPLOITS.items() for e in entries
                      if e.timed and any(t.id == tid for t in tasks))
    if not timing and left_out:
        print(f"--no-timing: left out the exploits that only the graded timing catches: {', '.join(left_out)}")
    for kind, catalogue in (("mistakes", mistakes.MISTAKES), ("correct", corpus.CORRECT),
                            ("exploits", exploits.EXPLOITS if timing else untimed)):
        for k, p in enumerate(pack(track, catalogue), 1):
            name = f"{kind}-{k}"
            export(track, dest / name, reference=True)
            expected[name] = {}
            for t in tasks:
                if t.id in p:
                    apply(dest / name, t, p[t.id])
                    e = p[t.id]
                    sandboxed = "sandbox" in getattr(e, "without", []) and not box.available
                    expected[name][t.id] = {"status": e.expect_without if sandboxed else e.expect,
                                            "says": e.says_without if sandboxed else e.says, "mistake": e.name}
                else:
                    expected[name][t.id] = {"status": "PASS"}
                if t.id in p and getattr(p[t.id], "without", None) and not (
                        "sandbox" in p[t.id].without and not box.available):
                    e = p[t.id]
                    again = f"{name}--{t.id}--without-{'-'.join(e.without)}"
                    shutil.copytree(dest / name, dest / again)
                    expected[again] = {t.id: {"status": e.expect_without, "says": e.says_without,
                                              "mistake": f"{e.name} (without {', '.join(e.without)})"}}
                    passes.append((again, e.without))
            propagate(tasks, expected[name])
    return expected, passes


def compare(expected, grades_csv, out):
    """Every expected grade against the sheet; prints a line each, returns the misses."""
    rows = list(csv.DictReader(open(grades_csv)))
    got = {(r["student"], r["task"]): r for r in rows}
    bad, lines = 0, []
    for student, per_task in expected.items():
        report = (Path(out) / f"{student}.md").read_text() if (Path(out) / f"{student}.md").exists() else ""
        for task_id, want in per_task.items():
            r = got.get((student, task_id))
            if r is None:
                lines.append(f"MISSING {student} {task_id}")
                bad += 1
                continue
            says_ok = not want.get("says") or any(s in r["detail"] or s in report for s in want["says"].split("|"))
            ok = r["status"] in want["status"].split("|") and says_ok
            lines.append(f"{'ok  ' if ok else 'BAD '}{student:<12} {task_id:<18} {want.get('mistake', ''):<28} "
                         f"expected {want['status']:<16} got {r['status']:<10} {r['detail'][:90]}")
            bad += not ok
    print("\n".join(lines), flush=True)
    return bad


def grade_args(a, subs, out, **more):
    ns = Namespace(track=a.track, submissions=str(subs), out=str(out), hidden=a.hidden, seed=a.seed, jobs=a.jobs,
                   parallel=a.parallel, rounds=a.rounds, gpu_arch=a.gpu_arch, no_sanitizer=False,
                   no_timing=a.no_timing, timing_for=None, keep_work=False, timeout=a.timeout, without=None,
                   no_reuse=False, resume=getattr(a, "resume", False))
    for k, v in more.items():
        setattr(ns, k, v)
    return ns


def cmd_selftest(a):
    if a.track not in T.TRACKS:
        raise SystemExit(f"error: selftest: unknown track '{a.track}'")
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="lab-selftest-"))
    out = Path(a.out) if a.out else work / "grades"
    subs = work / "submissions"
    shutil.rmtree(subs, ignore_errors=True)
    if a.stability:
        return stability(a, work, out)
    if a.merge:
        return merge_parts(a, out)
    part, parts = parse_part(a.part)
    expected, passes = plant(a.track, subs, timing=not a.no_timing)
    timed_names = {e.name for entries in exploits.EXPLOITS.values() for e in entries if e.timed}
    # The reference's every task, and of the others the task each was planted for (a correct
    # solution, or an exploit of the speed): their other tasks hold the reference's regions,
    # timed with the reference.
    timed = ["reference"] + [f"{s}/{tid}" for s, per in expected.items()
                             if s != "reference" and "--without-" not in s for tid, w in per.items()
                             if w.get("mistake") and (w["status"] == "PASS" or w["mistake"] in timed_names)]
    grade.Grader(grade_args(a, subs, out, timing_for=",".join(timed), part=a.part), without_for=dict(passes)).run()
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    if parts > 1:  # the grader's own split: every k-th submission in name order
        mine = sorted(expected)[part - 1::parts]
        bad = compare({s: expected[s] for s in mine}, out / "grades.csv", out)
        print(f"selftest {a.track} part {part}/{parts}: {bad} unexpected grades in {len(mine)} of "
              f"{len(expected)} submissions: join the parts with --merge")
        return 0 if bad == 0 else 1
    bad = compare(expected, out / "grades.csv", out)
    print(f"selftest {a.track}: {bad} unexpected grades")
    return 0 if bad == 0 else 1


def merge_parts(a, out):
    """selftest --merge DIR...: the parts' sheets joined (grade --merge) and compared with the
    expected grades, which every part must have planted alike; a submission that no part
    graded counts as MISSING."""
    missing = [d for d in a.merge if not (Path(d) / "expected.json").is_file()]
    if missing:
        usage_error(f"--merge: no expected.json in {', '.join(missing)} (did that part finish?)")
    plans = [json.loads((Path(d) / "expected.json").read_text()) for d in a.merge]
    if any(p != plans[0] for p in plans[1:]):
        usage_error("--merge: the parts planted different submissions (graded from different trees?)")
    grade.merge(Namespace(merge=a.merge, out=str(out), track=a.track))
    (out / "expected.json").write_text(json.dumps(plans[0], indent=1) + "\n")
    bad = compare(plans[0], out / "grades.csv", out)
    print(f"selftest {a.track}: {bad} unexpected grades (merged from {len(a.merge)} parts)")
    return 0 if bad == 0 else 1


def stability(a, work, out):
    """The reference graded `a.stability` times: the same statuses, and the spread
    (max/min) of each task's speed ratio. With --part i/k this grades the copies
    i, i + k, ... only (one part per GPU, side by side); --merge joins the parts' sheets."""
    if a.merge:
        missing = [d for d in a.merge if not (Path(d) / "grades.csv").is_file()]
        if missing:
            usage_error(f"--merge: no grades.csv in {', '.join(missing)} (did that part finish?)")
        rows = [r for d in a.merge for r in csv.DictReader(open(Path(d) / "grades.csv"))]
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "grades.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["student", "task", "status"])
            w.writeheader()
            w.writerows(rows)
        return summarize_stability(a, rows, out)
    part, parts = parse_part(a.part)
    subs = work / "submissions"
    for k in range(part - 1, a.stability, parts):
        export(a.track, subs / f"reference-{k + 1:02d}", reference=True)
    grade.Grader(grade_args(a, subs, out, no_reuse=True, no_sanitizer=a.no_sanitizer)).run()
    if parts > 1:
        print(f"part {part}/{parts} of {a.stability} graded: join the parts with --merge")
        return 0
    return summarize_stability(a, list(csv.DictReader(open(out / "grades.csv"))), out)


def summarize_stability(a, rows, out):
    """stability.md from the sheet's rows: per task, the statuses and the speed ratio's spread.
    Passes only when every one of the a.stability copies was graded and every grade is PASS."""
    copies = sorted({r["student"] for r in rows})
    lines = [f"# Stability: the reference of track {a.track} graded {a.stability} times", "",
             f"Copies graded: {len(copies)} of {a.stability}.", "",
             "| task | statuses | speed ratio min | median | max | max/min |", "|---|---|---:|---:|---:|---:|"]
    ok = len(copies) == a.stability
    for t in T.track_tasks(a.track):
        mine = [r for r in rows if r["task"] == t.id]
        statuses = sorted({r["status"] for r in mine})
        ratios = [float(r["speed_ratio"]) for r in mine if r.get("speed_ratio")]
        spread = max(ratios) / min(ratios) if ratios else float("nan")
        ok = ok and statuses == ["PASS"]
        lines.append(f"| {t.id} | {', '.join(statuses)} | {min(ratios):.3f} | {statistics.median(ratios):.3f} | "
                     f"{max(ratios):.3f} | {spread:.4f} |" if ratios else f"| {t.id} | {', '.join(statuses)} | | | | |")
    (out / "stability.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if ok else 1


def add_arguments(s):
    s.add_argument("track")
    s.add_argument("--work", help="folder for the planted submissions (default: a temporary one)")
    s.add_argument("--out", help="folder for the grade sheet and reports (default: <work>/grades)")
    s.add_argument("--hidden")
    s.add_argument("--seed", type=int, default=42)
    s.add_argument("--jobs", type=int, default=1)
    s.add_argument("--parallel", type=int, default=4)
    s.add_argument("--rounds", type=int, default=3)
    s.add_argument("--gpu-arch")
    s.add_argument("--no-timing", action="store_true")
    s.add_argument("--timeout", type=int, default=120, help="seconds per program run")
    s.add_argument("--stability", type=int, default=0, help="grade the reference this many times instead")
    s.add_argument("--no-sanitizer", action="store_true", help="(stability) leave the sanitizers out")
    s.add_argument("--part", help="i/k: grade the submissions (or, with --stability, the copies) i, i + k, ... "
                                  "only, e.g. one part per GPU or per run")
    s.add_argument("--resume", action="store_true",
                   help="reuse the results an earlier run with the same --out left (grade --resume): a self-test "
                        "cut short goes on where it stopped")
    s.add_argument("--merge", nargs="+", metavar="DIR",
                   help="join the parts' grade sheets (their --out folders) into --out, and compare (or, with "
                        "--stability, sum up)")
