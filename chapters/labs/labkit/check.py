"""Checking one task: the stages a student runs with `lab.py check` and the grader runs
on every submission.

  1. the source: marks intact, not the stub, the rules of a region, the hints
  2. the build of the task's chapters (BUILD_FAIL with the compiler's first errors),
     then the rules again on the region as compiled: after the compiler's own
     preprocessor, which expands the macros of the headers (labkit/expanded.py)
  3. a GPU? (SKIP without one: everything above still ran)
  4. the chapter's own sweep with the seed, then repeats on a grid of several waves
     (one run of --repeat N; grading: each run across the boundary, run_verdict: the
     student's program writes its outputs, the reference program judges them)
  5. hidden seeds and sizes (grading only)
  6. compute-sanitizer at a small size (memcheck; racecheck and synccheck for shared
     memory and atomics; initcheck where the launcher zeroes the output)
  7. the speed (asked for): GB/s, % of the copy, the ratio to the reference

Each stage stops the task at its first failure; the result says which and why.
"""
import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import expanded, regions, static
from .runner import EXIT_SKIP, OUTPUT_CAP, gpu_present, run

STATUSES = ["PASS", "FAIL", "NOT_IMPLEMENTED", "BUILD_FAIL", "CRASH", "TIMEOUT", "SANITIZER",
            "SANITIZER_UNAVAILABLE", "SKIP", "NOT_RUN"]
RUN_TIMEOUT = 120          # seconds per program run
SANITIZER_TIMEOUT = 600
BUILD_TIMEOUT = 900
RACE_REPEATS = 10          # repeats of a race-prone task's checked run on several waves
REPEATS = 2                # of any other task's


class DumpBudget:
    """The bytes of checked runs' dumps that may lie on disk at once (LAB_DUMP_GB, default 24):
    their dumps wait there until judged. A run waits until its expected dump fits: its
    repeats (--repeat) times the largest dump one repeat of the same program and sizes has
    made in a run that passed (the judge read every byte of it), 1 GB before the first (the
    most one step dumps: chapter 18's onesweep at 2^24 + 3 keys); a run larger than the whole
    budget waits until it is alone."""

    def __init__(self, gigabytes):
        self.total, self.used = gigabytes * 1e9, 0.0
        self.per_repeat = {}   # dump_key -> the largest bytes one repeat dumped
        self.cond = threading.Condition()

    def expected(self, key, repeats):
        return repeats * self.per_repeat.get(key, 1e9)

    def learn(self, key, dumped, repeats):
        with self.cond:
            self.per_repeat[key] = max(self.per_repeat.get(key, 0.0), dumped / max(1, repeats))

    @contextlib.contextmanager
    def hold(self, key, repeats):
        with self.cond:
            need = self.expected(key, repeats)
            self.cond.wait_for(lambda: self.used == 0 or self.used + need <= self.total)
            self.used += need
        try:
            yield
        finally:
            with self.cond:
                self.used -= need
                self.cond.notify_all()


def dump_gigabytes():
    text = os.environ.get("LAB_DUMP_GB") or "24"
    try:
        gb = float(text)
    except ValueError:
        gb = float("nan")
    if not 1 <= gb <= 1e6:  # bad input: one line, exit 2
        print(f"error: LAB_DUMP_GB expects gigabytes from 1 to 1000000, got '{text}'", file=sys.stderr)
        raise SystemExit(2)
    return gb


DUMPS = DumpBudget(dump_gigabytes())


def folder_bytes(folder):
    """The bytes of the regular files under a dump folder (links not followed)."""
    total = 0
    for top, _, files in os.walk(folder):
        for f in files:
            try:
                st = os.lstat(os.path.join(top, f))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                total += st.st_size
    return total


@dataclass
class Settings:
    seed: int = 42
    timeout: int = RUN_TIMEOUT
    sanitizer: bool = True
    hidden: dict = None      # {"seeds": [...], "cases": {task: [[args]]}} (grading)
    size_args: list = None   # one replayed size instead of the sweep
    sandbox: object = None   # runner.Sandbox (grading)
    rules: bool = True       # reject a region that breaks a rule (off only in the self-test's proofs)
    build_dir: str = None    # the build whose preprocessor reads the regions as compiled (lab.py check;
                             # the grader reads them itself, before the audit)
    # The boundary (grading): trusted(chapter) is the reference program of that chapter, built
    # from the clean tree; each checked run dumps its outputs into a fresh folder under `dumps`,
    # and trusted_sandbox (or none) holds the reference program's run that judges them.
    trusted: object = None
    dumps: str = None
    trusted_sandbox: object = None
    # Grading: the verdicts of this task's runs kept as they end (get(key) -> verdict or None,
    # put(key, verdict)), so that a grade cut short and resumed runs again only what had not
    # ended; get answers only with --resume.
    memo: object = None


@dataclass
class TaskResult:
    task: str
    status: str = "NOT_RUN"
    detail: str = ""
    public: list = field(default_factory=lambda: [0, 0])
    hidden: list = field(default_factory=lambda: [0, 0])
    hidden_classes: dict = field(default_factory=dict)
    sources: list = field(default_factory=list)
    seed: int = 42
    diagnosis: str = ""
    replay: str = ""
    sanitizer: str = ""
    findings: list = field(default_factory=list)   # static.Finding
    speed: dict = field(default_factory=dict)      # median_ms, gbps, pct_of_copy, speed_ratio, ...

    def fail(self, status, detail, **more):
        self.status, self.detail = status, detail
        for k, v in more.items():
            setattr(self, k, v)
        return self


# --- the verdict of one run -------------------------------------------------------------------

def mine(check, steps):
    return any(check.what == s or check.what.startswith(s + " ") for s in steps)


def verdict(r, steps):
    """(status, passed, total, lines) of one --verify-only --json run for the task's steps."""
    if r.timed_out:
        return "TIMEOUT", 0, 1, [f"no answer within {r.timeout:.0f} s: killed (an endless loop, or a deadlock at a "
                                 "barrier?)"]
    if r.code == EXIT_SKIP:
        return "SKIP", 0, 0, [r.out.strip().splitlines()[-1] if r.out.strip() else "skipped"]
    cuda = [line for line in r.out.splitlines() if line.startswith("CUDA error")]
    if r.code < 0 or r.code > 128 or cuda:
        return "CRASH", 0, 1, [cuda[0] if cuda else f"killed by signal {-r.code if r.code < 0 else r.code - 128}"]
    if r.dropped:
        return "FAIL", 0, 1, [f"the program printed {OUTPUT_CAP + r.dropped} bytes; only the first {OUTPUT_CAP} are "
                              f"kept, {r.dropped} were dropped: print nothing from the task"]
    if r.code not in (0, 1):
        last = r.out.strip().splitlines()[-1] if r.out.strip() else ""
        return "FAIL", 0, 1, [f"the program exited with code {r.code}: {last[:200]}"]
    ours = [c for c in r.checks if mine(c, steps)]
    if not ours:
        return "FAIL", 0, 1, [f"no check of {', '.join(steps)} was printed: the program ended early (exit code {r.code})"]
    if r.summary is None:
        return "FAIL", 0, 1, [f"the program ended before its summary (exit code {r.code})"]
    why = disagreement(r)
    if why:
        return "FAIL", 0, 1, [why]
    bad = [f"FAIL {c.what}" + (f": {c.detail}" if c.detail else "") for c in ours if not c.ok]
    return ("FAIL" if bad else "PASS"), len(ours) - len(bad), len(ours), bad[:3]


def disagreement(r):
    """Why a run's exit code and its printed records cannot both be true, or "". The
    harness exits 0 exactly when every check and result it printed is ok (and it ran
    one), 1 when one failed, and its summary counts the failures it printed: a run whose
    output says "ok" while it exits 1 had its output rewritten, one that exits 0 after a
    failing check had its exit code changed. Every record counts, not only this task's:
    the exit code covers them all."""
    failed = sum(not c.ok for c in r.checks) + sum(x.get("ok") is False for x in r.results)
    if r.code == 1 and failed == 0:
        return ("the program exited with code 1 (a failure) but every check it printed passed: its output and its "
                "exit code disagree (was its output rewritten?)")
    if r.code == 0 and failed:
        return (f"the program exited with code 0 (every check passed) but {failed} of the checks it printed failed: "
                "its exit code and its output disagree")
    summary = r.summary.get("failed") if r.summary else None
    if isinstance(summary, int) and not isinstance(summary, bool) and summary != failed:
        return (f"the program's summary counts {summary} failed checks but it printed {failed}: its records "
                "disagree (were some rewritten or added?)")
    return ""


def run_checks(exe, args, settings, env=None, timeout=None):
    return run(exe + ["--verify-only", "--json"] + args, timeout or settings.timeout, env=env,
               sandbox=settings.sandbox)


# --- the boundary: the verdict from a process that holds no student code ------------------------

def run_verdict(c, exe, args, settings):
    """verdict() of one checked run of the task's steps c.steps. Grading (settings.trusted),
    across the boundary: the student's program runs its checks with --dump-outputs into a fresh
    folder (inside the sandbox, the only writable place that outlives the run), then the
    reference program of the same chapter, built from the clean tree, runs the same checks
    with --check-outputs on that folder: it launches nothing, puts the dumped bytes into its
    poisoned outputs and judges them against its own reference for the same seed and sizes
    (common/bench/outputs.h). Elsewhere (lab.py check) the student's program alone."""
    if not settings.trusted:
        return verdict(run_checks(exe, args, settings), c.steps)
    key, repeats = dump_key(c, args), repeats_of(args)

    def judged():
        with DUMPS.hold(key, repeats):
            return across_the_boundary(c, exe, args, settings, lambda dumped: DUMPS.learn(key, dumped, repeats))
    return remembered(settings, ["verdict", c.chapter, args], judged)


def remembered(settings, what, run_it):
    """run_it()'s verdict (a list or tuple, its status first), or the one an earlier run of
    the same grade kept for `what` (settings.memo: grading, with --resume); every verdict but
    SKIP is kept as it ends."""
    kept = settings.memo.get(what) if settings.memo else None
    if kept is not None:
        return kept
    result = run_it()
    if settings.memo and result[0] != "SKIP":
        settings.memo.put(what, list(result))
    return result


def dump_key(c, args):
    """What a run's dump size depends on: its program and arguments but the seed and --repeat."""
    rest, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("--seed", "--repeat"):
            skip = True
        else:
            rest.append(a)
    return c.chapter, tuple(rest)


def repeats_of(args):
    """The --repeat of a run's arguments (the checker's own), 1 without one."""
    return int(args[args.index("--repeat") + 1]) if "--repeat" in args else 1


def across_the_boundary(c, exe, args, settings, learn=None):
    folder = Path(tempfile.mkdtemp(prefix="dump-", dir=settings.dumps))
    try:
        box = settings.sandbox.writing(folder) if settings.sandbox else None
        mine = run(exe + ["--verify-only", "--json"] + args + ["--dump-outputs", str(folder)], settings.timeout,
                   sandbox=box)
        own = verdict(mine, c.steps)
        if own[0] != "PASS":  # its own checks failed, or it crashed, hung or disagreed with itself
            return own
        tbox = settings.trusted_sandbox.showing(folder) if settings.trusted_sandbox else None
        judged = run([str(settings.trusted(c.chapter)), "--verify-only", "--json"] + args +
                     ["--check-outputs", str(folder)], settings.timeout, sandbox=tbox)
        result = across(mine, judged, c.steps)
        if learn and result[0] == "PASS":  # the judge read every byte: the dump's true size
            learn(folder_bytes(folder))
        return result
    finally:
        remove_folder(folder)


def across(mine, judged, steps):
    """The verdict of a checked run from the trusted run's records (judged: the reference
    program with --check-outputs on the outputs that `mine`, the student's run, dumped), and the
    student's run must have printed the same checks, in the same order."""
    st, passed, total, lines = verdict(judged, steps)
    if st in ("TIMEOUT", "CRASH", "SKIP") or not judged.checks or judged.summary is None:
        return "FAIL", 0, 1, ["the trusted check of your program's outputs (the reference program with "
                              f"--check-outputs) did not run to its end: {'; '.join(lines)[:200]}"]
    if st != "PASS":
        return "FAIL", passed, total, [f"judged from your program's outputs by the reference program: {x}"
                                       for x in lines]
    theirs, ours = [x.what for x in mine.checks], [x.what for x in judged.checks]
    if theirs != ours:
        k = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours)))
        got = repr(theirs[k][:120]) if k < len(theirs) else "nothing more"
        want = repr(ours[k][:120]) if k < len(ours) else "nothing more"
        bad = [x for x in judged.checks if not x.ok]
        return "FAIL", 0, 1, [f"your program printed other checks than the trusted check of its outputs: check "
                              f"{k + 1} is {got} where the reference has {want}"
                              + (f" ({bad[0].what}: {bad[0].detail[:160]})" if bad else "")]
    return st, passed, total, lines


def remove_folder(folder):
    """Removes a dump folder whatever the student's program left in it: folders it made
    unreadable are opened again first (links are never followed)."""
    try:
        os.chmod(folder, stat.S_IRWXU)
    except OSError:
        pass
    for top, dirs, _ in os.walk(folder):
        for d in [os.path.join(top, x) for x in dirs]:
            if not os.path.islink(d):
                try:
                    os.chmod(d, stat.S_IRWXU)
                except OSError:
                    pass
    shutil.rmtree(folder, ignore_errors=True)


# --- the size lattice and the diagnosis -------------------------------------------------------

def lattice(task):
    """[(args, tags)]: sizes around a warp, a block, the task's unit of work and
    several waves; tags say which leave a tail and which take several blocks."""
    u = task.unit
    if task.size == "gemm":  # m x n x k: whole tiles of u x u x u, and sides one past or short of them
        shapes = [(1, 1, 1), (1, 33, 7), (33, 1, 7), (u, u, u), (u - 1, u + 1, u + 1), (2 * u, 2 * u, 2 * u),
                  (2 * u + 1, 2 * u - 1, 2 * u), (2 * u, 2 * u, 2 * u - 3), (1, 4 * u + 3, 100), (4 * u + 3, 1, 100),
                  (4 * u, 4 * u, 2 * u), (4 * u - 1, 4 * u + 1, 2 * u + 5)]
        return [(["--m", str(m), "--n", str(n), "--k", str(k)],
                 {"tail": m % u != 0 or n % u != 0 or k % u != 0, "multi": m > u or n > u}) for m, n, k in shapes]
    if task.size == "shape":
        shapes = [(1, 1), (1, 33), (33, 1), (32, 32), (31, 33), (64, 64), (64, 96), (65, 97), (1, 1025),
                  (1025, 1), (1024, 1024), (1023, 1025)]
        return [(["--rows", str(r), "--cols", str(c)],
                 {"tail": r % u != 0 or c % u != 0, "multi": r > u or c > u}) for r, c in shapes]
    sizes = sorted({1, 31, 32, 33, u - 1, u, u + 1, 2 * u, 4 * u + 1, 1 << 20, 1000003} - {0})
    if task.min_size > 1:
        sizes = [n for n in sizes if n >= task.min_size]
    return [([task.size, str(n)], {"tail": n % u != 0, "multi": n > u}) for n in sizes]


def waves_args(task):
    """A size of several waves of blocks: where a missing barrier shows."""
    if task.size == "gemm":  # every entry checked (m n k under 2^29), several waves of 128 x 128 tiles
        return ["--m", "2047", "--n", "2049", "--k", "127"]
    if task.size == "shape":
        return ["--rows", "4099", "--cols", "4097"]
    return [task.size, str((1 << 24) + 3)]


GOT = re.compile(r"got (-?[\d.]+(?:e[-+]?\d+)?|nan|-?inf)")


def same_failure(a, b):
    """Whether two runs failed the same way: the same lines, every 'got' value equal
    to within 1e-3 (atomics may add in another order each run; a race changes more)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        gx, gy = GOT.findall(x), GOT.findall(y)
        if GOT.sub("", x) != GOT.sub("", y) or len(gx) != len(gy):
            return False
        for u, v in zip(gx, gy):
            u, v = float(u), float(v)
            if u != v and not abs(u - v) <= 1e-3 * max(abs(u), abs(v)):
                return False
    return True


REPEAT = re.compile(r"repeat (\d+) of (\d+) \((\d+) failed\): (.*)")


def repeats_differ(lines):
    """Whether a --repeat run's failing checks say that its repeats ended differently: some
    passed and some failed, or two failed otherwise (common/bench/outputs.h, repeat_detail)."""
    for line in lines:
        m = REPEAT.search(line)
        if not m:
            continue
        if int(m[3]) < int(m[2]):
            return True
        first, _, other = m[4].partition(" | repeat ")
        if other and not same_failure([first], [other.partition(": ")[2]]):
            return True
    return False


def side_by_side(fn, items, workers=4):
    """fn over items, a few at a time: the runs are separate processes, and the GPU
    takes several at once (nothing here is timed)."""
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return list(pool.map(fn, items))


def classify(task, exes, settings):
    """Reruns a failing task on the size lattice and names the class of the bug."""
    seed = ["--seed", str(settings.seed)]
    results = side_by_side(
        lambda point: (point[0], point[1],
                       all(verdict(run_checks(exe, seed + c.args + point[0], settings), c.steps)[0] == "PASS"
                           for c, exe in exes)),
        lattice(task))
    failing = [(a, t) for a, t, ok in results if not ok]
    if not failing:
        return "passes on the lattice; fails only on the chapter's own sizes or seeds"
    a0 = failing[0][0]
    seen = side_by_side(lambda _: [line for c, exe in exes
                                   for line in verdict(run_checks(exe, seed + c.args + a0, settings), c.steps)[3]],
                        range(4))  # the same run again: a different answer is a race
    if any(not same_failure(seen[0], other) for other in seen[1:]):
        return f"differs between repeats of one size ({' '.join(a0)}): a race"
    if all(verdict(run_checks(exe, seed + c.args + a0, settings, env={"STEPWISE_POISON": "zero"}), c.steps)[0] == "PASS"
           for c, exe in exes):
        return "passes when the outputs start zeroed, fails when they start poisoned: relies on zeroed memory"
    passing = [(a, t) for a, t, ok in results if ok]
    if all(t["tail"] for _, t in failing) and any(not t["tail"] and t["multi"] for _, t in passing):
        return f"only when the size is not a multiple of {task.unit}: the tail"
    if all(t["multi"] for _, t in failing) and any(not t["multi"] for _, t in passing):
        return "only with more than one block"
    if not passing:
        return "fails at every size"
    return "fails at " + "; ".join(" ".join(a) for a, _ in failing[:4])


def failing_programs(exes, outcomes, sweep):
    """The programs whose sweep failed (the lattice need not rerun the others)."""
    return [(c, exe) for (c, exe), (_, _, st, _) in zip(exes, outcomes[:len(sweep)]) if st != "PASS"]


def tail_of(task, args):
    for a, tags in lattice(task):
        if a == args:
            return tags["tail"]
    if task.size == "gemm":  # a hidden shape: a side past a whole tile
        sides = dict(zip(args[::2], args[1::2]))
        return any(int(sides.get(o, task.unit)) % task.unit != 0 for o in ("--m", "--n", "--k"))
    try:
        return int(args[-1]) % task.unit != 0
    except (ValueError, IndexError):
        return False


# --- compute-sanitizer ------------------------------------------------------------------------

def find_sanitizer():
    for p in [shutil.which("compute-sanitizer"), "/usr/local/cuda/bin/compute-sanitizer"]:
        if p and Path(p).exists():
            return p
    return None


def first_line(text, *needles):
    for line in text.splitlines():
        if any(n in line for n in needles) and not line.strip().endswith("ERROR SUMMARY: 0 errors"):
            return line.strip()[:200]
    return text.strip().splitlines()[-1][:200] if text.strip() else ""


# Outputs poisoned, shared memory not (common/data.h): under a sanitizer every store of
# the kernel that poisons shared memory is checked, and memcheck hid that poison anyway.
SANITIZER_ENV = {"STEPWISE_POISON": "outputs"}


def sanitize(task, exes, settings):
    """(status, detail): memcheck always; racecheck and synccheck for shared memory and
    atomics; initcheck where the launcher zeroes the output."""
    san = find_sanitizer()
    if not san:
        return "SANITIZER_UNAVAILABLE", "compute-sanitizer was not found"
    tools = ["memcheck"] + (["racecheck", "synccheck"] if task.races else []) + (["initcheck"] if task.initcheck else [])
    runs = [(tool, c, exe) for tool in tools for c, exe in exes]
    done = side_by_side(lambda x: run([san, "--tool", x[0], "--error-exitcode", "7", "--print-limit", "5"] + x[2] +
                                      ["--verify-only", "--json", "--seed", str(settings.seed)] + x[1].args +
                                      task.small, SANITIZER_TIMEOUT, sandbox=settings.sandbox,
                                      env=SANITIZER_ENV), runs)
    for (tool, c, exe), r in zip(runs, done):  # in order: the first tool that reports decides
        if r.timed_out:
            return "TIMEOUT", f"{tool} did not finish within {SANITIZER_TIMEOUT} s"
        if "Device not supported" in r.out or ("Unable to" in r.out and "sanitiz" in r.out.lower()):
            return "SANITIZER_UNAVAILABLE", f"{tool}: {first_line(r.out, 'Device not supported', 'Unable to')}"
        if r.code == 7:
            return "SANITIZER", f"{tool}: {first_line(r.out, '=========  ', 'Invalid', 'Race', 'Barrier', 'Uninitialized')}"
        if r.code == EXIT_SKIP:
            return "SKIP", "no GPU"
        # The program's exit code covers every check it ran; a check of another task's
        # step (a program may run one beside --variant's) is not this task's failure.
        if r.code != 0 and verdict(r, c.steps)[0] != "PASS":
            return "FAIL", f"under {tool} the program failed (exit code {r.code}): {first_line(r.out, 'FAIL', 'CUDA error')}"
    return "PASS", "clean: " + ", ".join(tools)


# --- the build --------------------------------------------------------------------------------

ERROR = re.compile(r"^(?P<file>[^\s:()]+)(?:\((?P<l1>\d+)\)|:(?P<l2>\d+)(?::\d+)?):\s*(?:fatal )?error\b(?P<msg>.*)$")


def build(build_dir, chapters, root, tasks, jobs=None):
    """{chapter: (ok, detail)}: rebuilds the chapters' programs with ninja (-k 0, so
    one broken chapter fails only its own tasks; `jobs` compilers at once, ninja's
    default when None). A failure's detail is the compiler's first errors, placed
    in the student's region where they fall."""
    targets = [f"chapters/{ch}" for ch in chapters]
    for ch in chapters:  # an older program must never stand in for code that does not compile
        (Path(build_dir) / "chapters" / ch).unlink(missing_ok=True)
    r = run(["ninja", "-C", str(build_dir), "-k", "0"] + (["-j", str(jobs)] if jobs else []) + targets,
            BUILD_TIMEOUT)
    out = {}
    errors = [m for m in (ERROR.match(line.strip()) for line in r.out.splitlines()) if m]
    for ch in chapters:
        exe = Path(build_dir) / "chapters" / ch
        failed_here = re.search(rf"^FAILED: (\[code=\d+\] )?chapters/{re.escape(ch)}\b", r.out, re.M) is not None
        if r.timed_out:
            out[ch] = (False, f"the build did not finish within {BUILD_TIMEOUT} s")
        elif failed_here or not exe.exists():
            out[ch] = (False, "does not compile: " + build_errors(ch, errors, r.out, root, tasks))
        else:
            out[ch] = (True, "")
    if r.code != 0 and not errors and all(ok for ok, _ in out.values()):
        out = {ch: (False, "the build failed: " + first_line(r.out, "error", "FAILED")) for ch in chapters}
    return out


def build_errors(ch, errors, text, root, tasks):
    """The compiler's first errors for chapter `ch`, placed in the student's regions; an error
    that names no file (ptxas: "uses too much shared data") as the tool printed it."""
    mine = [m for m in errors if f"chapters/{ch}" in m["file"] or "chapters/" not in m["file"]] or errors
    if mine:
        return "; ".join(describe_error(m, root, tasks) for m in mine[:3])
    return first_line(text, "ptxas error", "nvlink error", "error:", "error :") or "see the build log"


def describe_error(m, root, tasks):
    """'file:line (line k of your region of T): error ...' for one compiler error."""
    f = m["file"]
    line = int(m["l1"] or m["l2"])
    rel = f.split("../", )[-1] if "../" in f else f
    where = f"{rel}:{line}"
    for task in tasks:
        for file, first, body in regions.region_starts(root, task):
            if rel.endswith(file) and first <= line < first + len(body):
                where += f" (line {line - first + 1} of your region of {task.id})"
    return f"{where}: error{m['msg'][:160]}"


# --- one task ---------------------------------------------------------------------------------

def source_stage(root, task, res, rules=True):
    """Stage 1: marks, stub, rules, hints. Returns False when the task stops here."""
    st, why = regions.stub_status(root, task)
    if st:
        res.fail(st, why)
        return False
    res.findings = static.analyse(root, task)
    rejected = [f for f in res.findings if f.severity == "reject"] if rules else []
    if rejected:
        res.fail("FAIL", "; ".join(f"[{f.rule}] {f.message} ({f.file}:{f.line})" for f in rejected[:2]))
        return False
    return True


def compiled_stage(root, task, res, build_dir):
    """Stage 2b: the rules on the regions as the build compiles them (after the
    compiler's preprocessor). Returns False when the task stops here: a rule is broken,
    or the regions cannot be read as compiled (then they are not trusted)."""
    found, problems = expanded.findings(root, build_dir, task)
    seen = {(f.rule, f.line) for f in res.findings}
    res.findings += [f for f in found if (f.rule, f.line) not in seen]
    rejected = [f for f in found if f.severity == "reject"]
    if rejected:
        res.fail("FAIL", "; ".join(f"[{f.rule}] {f.message} ({f.file}:{f.line})" for f in rejected[:2]))
        return False
    if problems:
        res.fail("FAIL", "the region could not be read as compiled: " + "; ".join(problems[:2]))
        return False
    return True


def check_task(task, root, exe_of, settings, built=None):
    """Every stage for one task. exe_of(chapter) is the program's path; built, if
    given, is build()'s answer. Returns a TaskResult."""
    res = TaskResult(task.id, sources=regions.sources_digest(root, task), seed=settings.seed)
    if not source_stage(root, task, res, settings.rules):
        return res
    for c in task.checks:
        ok, why = (built or {}).get(c.chapter, (Path(exe_of(c.chapter)).exists(), "not built"))
        if not ok:
            return res.fail("BUILD_FAIL", why)
    if settings.rules and settings.build_dir and not compiled_stage(root, task, res, settings.build_dir):
        return res
    has, why = gpu_present() if task.track != "standin" else (True, "")  # the stand-in runs on the CPU
    if not has:
        return res.fail("SKIP", f"no GPU ({why}): the source checks passed"
                        + (" and the chapter builds" if built else "") + "; the GPU stages did not run")
    exes = [(c, [str(exe_of(c.chapter))]) for c in task.checks]
    # 4. the chapter's sweep (or one replayed size), then repeats on several waves
    seed = ["--seed", str(settings.seed)]
    size = settings.size_args or []
    sweep = [(c, exe, seed + c.args + size) for c, exe in exes]
    repeats = [] if size else [(c, exe, seed + c.args + waves_args(task) +
                                ["--repeat", str(RACE_REPEATS if task.races else REPEATS)]) for c, exe in exes]
    outcomes = []

    def take(k, c, exe, args, verdict_):
        st, passed, total, bad = verdict_
        res.public[0] += passed
        res.public[1] += total
        outcomes.append((k >= len(sweep), id(c), st, tuple(bad)))
        if st != "PASS" and res.status == "NOT_RUN":
            res.fail(st, "; ".join(bad), replay=" ".join([Path(exe[0]).name, "--verify-only"] + args))
        return st

    for k, (c, exe, args) in enumerate(sweep):  # the sweep first: stop at its first failure
        if take(k, c, exe, args, run_verdict(c, exe, args, settings)) != "PASS":
            break
    if res.status == "NOT_RUN" and repeats:  # then the repeats, side by side
        done = side_by_side(lambda x: run_verdict(x[0], x[1], x[2], settings), repeats)
        for k, ((c, exe, args), v) in enumerate(zip(repeats, done), len(sweep)):
            take(k, c, exe, args, v)
    if res.status == "SKIP":
        return res
    if res.status != "NOT_RUN":
        # A race: the repeats of one check (one program, one step, one --repeat run) end
        # differently. Two checks may differ from each other without one: their steps run
        # different code.
        if any(is_repeat and repeats_differ(bad) for is_repeat, _, _, bad in outcomes):
            res.diagnosis = (f"differs between repeats of one size ({' '.join(waves_args(task))}, seed "
                             f"{settings.seed}): a race")
        elif res.status == "FAIL" and not size:
            res.diagnosis = classify(task, failing_programs(exes, outcomes, sweep) or exes, settings)
        return res
    # 5. hidden seeds and sizes; never printed beyond their counts
    if settings.hidden:
        cases = [(hs, extra, c, exe) for hs in settings.hidden.get("seeds", [])
                 for extra in settings.hidden.get("cases", {}).get(task.id, [[]]) for c, exe in exes]
        done = side_by_side(lambda x: run_verdict(x[2], x[3], ["--seed", str(x[0])] + x[2].args + x[1],
                                                  settings)[0], cases)
        for (hs, extra, c, exe), st in zip(cases, done):
            res.hidden[1] += 1
            if st == "PASS":
                res.hidden[0] += 1
            else:
                cls = st.lower() if st != "FAIL" else ("tail" if extra and tail_of(task, extra) else "wrong")
                res.hidden_classes[cls] = res.hidden_classes.get(cls, 0) + 1
        if res.hidden[0] < res.hidden[1]:
            return res.fail("FAIL", f"hidden cases: {res.hidden[0]} of {res.hidden[1]} passed")
    # 6. the sanitizers at a small size
    if settings.sanitizer and not size and task.track != "standin":  # the stand-in runs on the CPU
        st, detail = remembered(settings, ["sanitize"], lambda: sanitize(task, exes, settings))
        res.sanitizer = detail
        if st != "PASS":
            return res.fail(st, detail)
    return res.fail("PASS", "")


# --- speed ------------------------------------------------------------------------------------

def timed_record(exe, c, settings, graded=True, reps=5, warmup=2, grading=False):
    """The result record of the task's first step in one timed run, the device
    record, and the run; graded adds --graded-timing, grading the grader's size."""
    args = exe + ["--json", "--reps", str(reps), "--warmup", str(warmup), "--seed", str(settings.seed)] + \
        (["--graded-timing"] if graded else []) + c.args + c.time_args + (c.grade_size if grading else [])
    r = run(args, 600, sandbox=settings.sandbox)
    device = None
    for line in r.out.splitlines():
        if line.startswith('{"record":"device"'):
            try:
                device = json.loads(line)
            except ValueError:
                pass
    recs = [x for x in r.results if x.get("variant") == c.steps[0] and x.get("role") == "step"]
    return (recs[-1] if recs else None), device, r


def speed_figure(speed):
    """A timed task's figure as its chapter prints it: TFLOP/s of the work for a row that
    counts operations (a matrix product), else GB/s of the bytes it must move."""
    if speed.get("tflops"):
        return f"{speed['tflops']:.1f} TFLOP/s"
    return f"{speed['gbps']:.0f} GB/s"


def physical_floor(rec, device):
    """Why a timed row cannot be right, or "": faster than the DRAM can deliver its
    bytes, or a wrong result or a gap in a graded timing."""
    extra = rec.get("extra") or {}
    if extra.get("graded_gaps"):  # checked first: a gap also clears the row's ok
        return (f"the timed window missed work: the device was busy {extra.get('graded_gap_ms', 0):.3f} ms after the "
                "stop event (another stream or a host thread?)")
    if not rec.get("ok", True):
        return "the result of a timed call was wrong (right when checked before timing)"
    peak = (device or {}).get("theoretical_gbps")
    if peak and rec.get("gbps", 0) > peak:
        return (f"timed at {rec['gbps']:.0f} GB/s, above the {peak:.0f} GB/s the DRAM can deliver: the timed calls "
                "did not do the work")
    return ""
