#!/usr/bin/env python3
"""Classroom labs made from the chapters: export a student copy, check it, grade many.

    python3 chapters/labs/lab.py export reduce ~/lab-reduce        # a student copy of the reduce track
    python3 chapters/labs/lab.py check --build-dir build           # in a copy: one line per task, a summary
    python3 chapters/labs/lab.py check --task shared-tree --n 257  # one task, one size (a replay)
    python3 chapters/labs/lab.py grade reduce submissions/ --out grades/ --hidden hidden.json
    python3 chapters/labs/lab.py tracks                             # the tracks and their tasks

The tasks are the marked regions of the chapter sources (chapters/labs/tasks.py).
A student copy has a stub in each; the checker runs the chapter's own program (its
--verify-only checks against the CPU reference) and adds what a grader needs:
repeats on a grid of several waves, compute-sanitizer at a small size, a size
lattice that names the class of a failure, an input-unchanged check (in the
programs), and the speed next to the reference. The grader builds each submission
in a clean reference tree with only the student's regions put in, so nothing
outside the regions (the harness, the checks, the build) can be changed by a
submission; every run has its own process group and time limit.

Exit codes (meson): 0 every task passed, 1 a task did not, 2 bad input, 77 no GPU.
"""
import argparse
import concurrent.futures
import csv
import datetime
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import tasks as T  # noqa: E402

STATUSES = ["PASS", "FAIL", "NOT_IMPLEMENTED", "BUILD_FAIL", "CRASH", "TIMEOUT", "SANITIZER",
            "SANITIZER_UNAVAILABLE", "SKIP", "NOT_RUN"]
EXIT_SKIP = 77
TRACK_FILE = "chapters/labs/track.txt"   # present in a student copy only: its track
INSTRUCTOR = "chapters/labs/instructor"  # never exported
OUTPUT_CAP = 1 << 20                      # bytes kept of a program's output; the rest is counted
RUN_TIMEOUT = 120                         # seconds per program run
SANITIZER_TIMEOUT = 600
BUILD_TIMEOUT = 600
RACE_REPEATS = 10                         # runs of a race-prone task on several waves
MARK = re.compile(r"^(?P<indent>\s*)// lab (?P<task>[a-z0-9-]+): (?P<what>begin|end)\s*$")
LIBRARY = re.compile(r"\b(cub|thrust|cublas\w*|cublasLt\w*|cutlass|cudnn\w*|nvcuda|std::sort|qsort)\b")
DIRECTIVE = re.compile(r"^\s*#\s*(?!pragma\b)\w+", re.M)


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


# --- regions ----------------------------------------------------------------------------

def find_regions(lines):
    """[(task, begin index, end index, indent)] of the marked regions in a file's lines."""
    out, open_ = [], None
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if not m:
            continue
        if m["what"] == "begin":
            if open_:
                raise ValueError(f"line {i + 1}: 'lab {m['task']}: begin' inside region {open_[0]}")
            open_ = (m["task"], i, m["indent"])
        else:
            if not open_ or open_[0] != m["task"]:
                raise ValueError(f"line {i + 1}: 'lab {m['task']}: end' without its begin")
            out.append((open_[0], open_[1], i, open_[2]))
            open_ = None
    if open_:
        raise ValueError(f"region {open_[0]} is not closed")
    return out


def wrap(text, indent, prefix, width=92):
    """Comment lines of at most `width` characters after the indent (the same breaks at any indent)."""
    lines, cur = [], ""
    for w in text.split():
        lead = prefix if not lines else "//   "
        if cur and len(lead) + len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return [f"{indent}{prefix if k == 0 else '//   '}{line}" for k, line in enumerate(lines)]


def stub_body(task, region, indent):
    """The lines that replace a region's body in a student copy."""
    body = wrap(region.text, indent, f"// TODO(lab {task.id}): ")
    body += wrap("Hint: " + region.hint, indent, "//   ")
    body += [indent + line for line in region.stub.splitlines() if line.strip()]
    return body


def file_regions(path, task_id=None):
    """{task: [body lines, ...]} of one file (bodies without the mark lines)."""
    lines = Path(path).read_text().split("\n")
    out = {}
    for t, b, e, _ in find_regions(lines):
        if task_id is None or t == task_id:
            out.setdefault(t, []).append(lines[b + 1:e])
    return out


def task_bodies(root, task):
    """The task's region bodies in `root`, in the order of task.regions; None where missing."""
    per_file = {}
    bodies = []
    for region in task.regions:
        path = Path(root) / region.file
        if region.file not in per_file:
            try:
                per_file[region.file] = file_regions(path, task.id).get(task.id, [])
            except (OSError, ValueError):
                per_file[region.file] = []
        found = per_file[region.file]
        bodies.append(found.pop(0) if found else None)
    return bodies


def normalized(lines):
    return "\n".join(line.strip() for line in lines if line.strip())


def strip_comments(code):
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    code = re.sub(r"//[^\n]*", " ", code)
    return re.sub(r'"(\\.|[^"\\])*"', '""', code)


def static_status(root, task):
    """(status, detail) decided from the source alone, or (None, '') when it must run."""
    bodies = task_bodies(root, task)
    if any(b is None for b in bodies):
        return "FAIL", "the region marks of this task are missing or damaged; restore the '// lab' lines"
    todo = [k for k, (b, r) in enumerate(zip(bodies, task.regions)) if normalized(b) == normalized(stub_body(task, r, ""))]
    if todo:
        where = ", ".join(f"{task.regions[k].file} (region {k + 1} of {len(task.regions)})" for k in todo)
        return "NOT_IMPLEMENTED", f"still the stub: {where}"
    for b, r in zip(bodies, task.regions):
        code = strip_comments("\n".join(b))
        if DIRECTIVE.search(code):
            return "FAIL", f"a preprocessor directive in the region of {r.file}: only #pragma is allowed"
        m = LIBRARY.search(code)
        if m:
            return "FAIL", f"'{m.group(0)}' in the region of {r.file}: the task must not call a library"
    return None, ""


def sources_digest(root, task):
    """'path sha256' of each file that holds the task's regions."""
    out = []
    for f in dict.fromkeys(r.file for r in task.regions):
        p = Path(root) / f
        h = hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else "missing"
        out.append((f, h))
    return out


# --- export -------------------------------------------------------------------------------

def repo_files(root):
    root = Path(root)
    if (root / ".git").exists():
        r = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, check=True)
        return sorted(f for f in r.stdout.decode().split("\0") if f and (root / f).is_file())
    skip = {".git", "__pycache__", "doctest", ".whl", "gpu-logs"}
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        dirnames[:] = [d for d in dirnames if d not in skip and not (rel == Path(".") and d.startswith("build"))]
        files += [str(rel / f) if str(rel) != "." else f for f in filenames]
    return sorted(files)


def chapter_of(path):
    m = re.match(r"(chapters|docs|docs/evidence|docs/plots)/(\d\d)_", path)
    return m.group(2) if m else None


def keep_in_copy(path, track):
    """Whether a repository file belongs in the student copy of `track`."""
    numbers = {c[:2] for c in T.TRACKS[track] if c[:2].isdigit()} | {"00", "01"}  # the primer, the CPU baselines
    if path.startswith(INSTRUCTOR + "/") or path.startswith(".ci/") or path == "README.md":
        return False
    if path in ("docs/instructor_answers.md",) or path.startswith("docs/results/") and path.endswith(".log"):
        return False
    if path.startswith("docs/labs/"):  # the track's handout and the overview, not the grade sheets
        return path in (f"docs/labs/{track}.md", "docs/labs/README.md")
    if path.startswith("chapters/labs/standin/"):
        return track == "standin"
    num = chapter_of(path)
    if num is not None and num not in numbers:
        # A header another chapter of the track includes (chapter 12 uses chapter 06's kernel).
        return path in SUPPORT.get(track, [])
    return True


SUPPORT = {"dot-top2": ["chapters/06_reduce_thread_overload/reduce_overload.cuh"]}


def student_readme(track):
    tasks = T.track_tasks(track)
    rows = "\n".join(f"| `{t.id}` | {t.title} | {', '.join(sorted({r.file for r in t.regions}))} |" for t in tasks)
    handout = f"docs/labs/{track}.md"
    return f"""# Stepwise CUDA lab: {track}

A student copy of the Stepwise CUDA tutorial, track `{track}`. Each task below is a
stub marked `TODO(lab <task>)` between `// lab <task>: begin` and `// lab <task>: end`
lines. Write the code between the marks and nowhere else; the grader takes only
what is between them. The handout is [{handout}]({handout}).

## Two commands

```sh
meson setup build && meson compile -C build tour   # build everything, run every chapter, print the table
meson setup build && meson test -C build           # build everything, run the tests (the lab tasks too)
```

## Working on the tasks

```sh
meson test -C build --suite lab                         # one test per task
python3 chapters/labs/lab.py check --build-dir build    # one line per task, why it fails, a summary
python3 chapters/labs/lab.py check --build-dir build --task {tasks[0].id} --n 257   # one task, one size
```

Without a GPU the lab tests are skipped (exit code 77). A stub reports
`NOT_IMPLEMENTED` until you write it.

| task | what | files |
|---|---|---|
{rows}
"""


def export(track, dest, reference=False, root=ROOT):
    """Writes a copy of `track` to dest: stubs in place of the regions (or the
    reference code with reference=True, which is what the grader builds in)."""
    dest = Path(dest).resolve()
    if dest.exists() and any(dest.iterdir()):
        fail(f"export: {dest} exists and is not empty; give a new folder")
    dest.mkdir(parents=True, exist_ok=True)
    for f in repo_files(root):
        if keep_in_copy(f, track):
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(root) / f, dest / f)
    (dest / TRACK_FILE).write_text(track + "\n")
    (dest / "README.md").write_text(student_readme(track))
    if not reference:
        for task in T.track_tasks(track):
            for path in dict.fromkeys(r.file for r in task.regions):
                stub_file(dest / path, task)
        regenerate_docs(dest)
        redact_docs(dest, unique_region_lines(track, root))
    return dest


FENCE = re.compile(r"^```[^\n]*\n.*?^```[ \t]*$", re.M | re.S)


def redact_docs(dest, solution_lines):
    """The chapter docs show each step's change as code: in a copy, a code block that
    holds a line of a task's solution gives way to a pointer to the handout."""
    track = tree_track(dest)
    for md in Path(dest).rglob("*.md"):
        text = md.read_text()

        def one(m):
            block = m.group(0)
            if any(sol in line for line in block.split("\n") for sol in solution_lines):  # diffs too
                return f"```\n(this code is a task of the lab: see docs/labs/{track}.md)\n```"
            return block

        new = FENCE.sub(one, text)
        if new != text:
            md.write_text(new)


def stub_file(path, task):
    lines = path.read_text().split("\n")
    specs = [r for r in task.regions if path.as_posix().endswith(r.file)]
    regions = [r for r in find_regions(lines) if r[0] == task.id]
    if len(regions) != len(specs):
        raise SystemExit(f"error: {path}: {len(regions)} regions of {task.id}, tasks.py lists {len(specs)}")
    for (t, b, e, indent), spec in reversed(list(zip(regions, specs))):
        lines[b + 1:e] = stub_body(task, spec, indent)
    path.write_text("\n".join(lines))


def regenerate_docs(dest):
    """The chapter docs show whole kernels copied from the sources: rewrite them from
    the stubs, so the solutions do not stay in the docs."""
    gen = dest / "docs" / "generate.py"
    if gen.exists():
        r = subprocess.run([sys.executable, str(gen)], cwd=dest, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"error: docs/generate.py failed in the copy:\n{r.stdout}{r.stderr}")


def unique_region_lines(track, root=ROOT):
    """Lines of the track's reference regions that appear nowhere else in the copy's
    files: the copy must not contain any of them (the solution would have leaked)."""
    region_lines, other = set(), set()
    for f in repo_files(root):
        if not keep_in_copy(f, track):
            continue
        try:
            lines = (Path(root) / f).read_text().split("\n")
        except UnicodeDecodeError:
            continue
        inside = [False] * len(lines)
        try:
            regions = find_regions(lines) if f.endswith((".cu", ".cuh", ".cpp", ".h")) else []
        except ValueError:
            regions = []
        for t, b, e, _ in regions:
            if T.task(t).track == track:
                for k in range(b, e + 1):
                    inside[k] = True
                region_lines |= {lines[k].strip() for k in range(b + 1, e)}
        if not f.endswith(".md"):  # the docs' code is copied from the sources (and rewritten in the copy)
            other |= {line.strip() for k, line in enumerate(lines) if not inside[k]}
    return {line for line in region_lines - other if len(line) > 8 and not line.startswith("//")}


# --- running a program ----------------------------------------------------------------------

class Run:
    def __init__(self, cmd, code, out, timed_out, elapsed, dropped):
        self.cmd, self.code, self.out, self.timed_out, self.elapsed, self.dropped = cmd, code, out, timed_out, elapsed, dropped


def run(cmd, timeout=None, env=None, cwd=None):
    """Runs cmd in its own process group; kills the whole group at the time limit.
    Keeps the first OUTPUT_CAP bytes of stdout+stderr and counts the rest."""
    timeout = timeout or RUN_TIMEOUT
    start = time.monotonic()
    full_env = dict(os.environ, **(env or {}))
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                             env=full_env, cwd=cwd)
    except OSError as e:
        return Run(cmd, 127, f"cannot run {cmd[0]}: {e}", False, 0.0, 0)
    kept, dropped = bytearray(), [0]

    def reader():
        while True:
            chunk = p.stdout.read(65536)
            if not chunk:
                return
            room = OUTPUT_CAP - len(kept)
            kept.extend(chunk[:max(room, 0)])
            dropped[0] += max(len(chunk) - max(room, 0), 0)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    timed_out = False
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    t.join(timeout=5)
    r = Run(cmd, p.returncode, kept.decode(errors="replace"), timed_out, time.monotonic() - start, dropped[0])
    r.timeout = timeout
    return r


CHECK_LINE = re.compile(r"^(PASS|FAIL) (.+?)(?:: (.*))?$")
SUMMARY = re.compile(r"^\S+: (\d+) checks, (\d+) failed$", re.M)


def verdict(r, steps):
    """(status, passed, total, lines) of one verify run for the task's steps."""
    if r.timed_out:
        return "TIMEOUT", 0, 1, [f"no answer within {r.timeout} s: killed (an endless loop, or a deadlock at a barrier?)"]
    if r.code == EXIT_SKIP:
        return "SKIP", 0, 0, [r.out.strip().splitlines()[-1] if r.out.strip() else "skipped"]
    cuda = [line for line in r.out.splitlines() if line.startswith("CUDA error")]
    if r.code < 0 or r.code in (134, 136, 139) or cuda:
        why = cuda[0] if cuda else f"killed by signal {-r.code if r.code < 0 else r.code - 128}"
        return "CRASH", 0, 1, [why]
    if r.dropped:
        return "FAIL", 0, 1, [f"the program printed {OUTPUT_CAP + r.dropped} bytes; only the first {OUTPUT_CAP} are "
                              f"kept, {r.dropped} were dropped: print nothing from the task"]
    mine, others = [], 0
    for line in r.out.splitlines():
        m = CHECK_LINE.match(line)
        if not m:
            continue
        if any(m.group(2) == s or m.group(2).startswith(s + " ") for s in steps):
            mine.append((m.group(1) == "PASS", line))
        elif m.group(1) == "FAIL":
            others += 1
    if not mine:
        return "FAIL", 0, 1, [f"no check of {', '.join(steps)} was printed: the program ended early "
                              f"(exit code {r.code})"]
    if not SUMMARY.search(r.out):
        return "FAIL", 0, 1, [f"the program ended before its summary line (exit code {r.code})"]
    bad = [line for ok, line in mine if not ok]
    return ("FAIL" if bad else "PASS"), len(mine) - len(bad), len(mine), bad[:3]


# --- checking one task --------------------------------------------------------------------

def lattice(task):
    """[(args, tags)] sizes from the task's own constants: around a warp, a block, its
    unit of work, several waves; tags say which contain a tail or several blocks."""
    u = task.unit
    if task.size == "shape":
        shapes = [(1, 1), (1, 33), (33, 1), (32, 32), (31, 33), (64, 64), (64, 96), (65, 97), (1, 1025),
                  (1025, 1), (1024, 1024), (1023, 1025)]
        return [(["--rows", str(r), "--cols", str(c)],
                 {"tail": r % u != 0 or c % u != 0, "multi": r > u or c > u}) for r, c in shapes]
    sizes = sorted({1, 31, 32, 33, u - 1, u, u + 1, 2 * u, 4 * u + 1, 1 << 20, (1 << 20) + 1, 1000003} - {0})
    if task.size == "--n" and task.track == "dot-top2" and 1 in sizes and task.id.startswith("top2"):
        sizes.remove(1)  # top-2 needs two elements
    return [([task.size, str(n)], {"tail": n % u != 0, "multi": n > u}) for n in sizes]


def waves_args(task):
    """A size of several waves of blocks: where a missing barrier shows."""
    if task.size == "shape":
        return ["--rows", "4099", "--cols", "4097"]
    return [task.size, str((1 << 24) + 3)]


GOT = re.compile(r"got (-?[\d.]+(?:e[-+]?\d+)?|nan|-?inf)")


def same_failure(a, b):
    """Whether two runs failed the same way: the same lines, with every 'got' value equal
    to within 1e-3 (atomics may add in another order each run; a race changes far more)."""
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


def classify(task, exes, seed):
    """Reruns a failing task on the size lattice and names the class of the bug."""
    results = []
    for args, tags in lattice(task):
        ok = all(verdict(run(exe + ["--verify-only", "--seed", str(seed)] + c.args + args), c.steps)[0] == "PASS"
                 for c, exe in exes)
        results.append((args, tags, ok))
    failing = [(a, t) for a, t, ok in results if not ok]
    if not failing:
        return "passes on the lattice; fails only on the chapter's own sizes or seeds"
    a0 = failing[0][0]
    seen = []
    for _ in range(4):  # the same run again: a different answer is a race
        seen.append([line for c, exe in exes
                     for line in verdict(run(exe + ["--verify-only", "--seed", str(seed)] + c.args + a0), c.steps)[3]])
    if any(not same_failure(seen[0], other) for other in seen[1:]):
        return f"differs between repeats of one size ({' '.join(a0)}): a race"
    zero_ok = all(verdict(run(exe + ["--verify-only", "--seed", str(seed)] + c.args + a0, env={"STEPWISE_POISON": "zero"}),
                          c.steps)[0] == "PASS" for c, exe in exes)
    if zero_ok:
        return "passes when the outputs start zeroed, fails when they start poisoned: relies on zeroed memory"
    passing = [(a, t) for a, t, ok in results if ok]
    if all(t["tail"] for _, t in failing) and any(not t["tail"] and t["multi"] for _, t in passing):
        return f"only when the size is not a multiple of {task.unit}: the tail"
    if all(t["multi"] for _, t in failing) and any(not t["multi"] for _, t in passing):
        return "only with more than one block"
    if not passing:
        return "fails at every size"
    return "fails at " + "; ".join(" ".join(a) for a, _ in failing[:4])


def find_sanitizer():
    for p in [shutil.which("compute-sanitizer"), "/usr/local/cuda/bin/compute-sanitizer"]:
        if p and os.path.exists(p):
            return p
    return None


def sanitize(task, exes, seed):
    """(status, detail): memcheck always; racecheck and synccheck for shared memory and
    atomics; initcheck where the launcher zeroes the output."""
    san = find_sanitizer()
    if not san:
        return "SANITIZER_UNAVAILABLE", "compute-sanitizer was not found"
    tools = ["memcheck"] + (["racecheck", "synccheck"] if task.races else []) + (["initcheck"] if task.initcheck else [])
    for tool in tools:
        for c, exe in exes:
            r = run([san, "--tool", tool, "--error-exitcode", "7", "--print-limit", "5"] + exe +
                    ["--verify-only", "--seed", str(seed)] + c.args + task.small, timeout=SANITIZER_TIMEOUT)
            if r.timed_out:
                return "TIMEOUT", f"{tool} did not finish within {SANITIZER_TIMEOUT} s"
            if "Device not supported" in r.out or "Unable to" in r.out and "sanitiz" in r.out.lower():
                return "SANITIZER_UNAVAILABLE", f"{tool}: {first_line(r.out, 'Device not supported', 'Unable to')}"
            if r.code == 7:
                return "SANITIZER", f"{tool}: {first_line(r.out, '=========  ', 'Invalid', 'Race', 'Barrier', 'Uninitialized')}"
            if r.code == EXIT_SKIP:
                return "SKIP", "no GPU"
            if r.code != 0:
                return "FAIL", f"under {tool} the program failed (exit code {r.code}): {first_line(r.out, 'FAIL', 'CUDA error')}"
    return "PASS", "clean: " + ", ".join(tools)


def first_line(text, *needles):
    for line in text.splitlines():
        if any(n in line for n in needles) and not line.strip().endswith("ERROR SUMMARY: 0 errors"):
            return line.strip()[:200]
    return text.strip().splitlines()[-1][:200] if text.strip() else ""


def gpu_slug():
    r = run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], timeout=30)
    name = r.out.strip().splitlines()[0] if r.code == 0 and r.out.strip() else ""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def reference_figure(root, chapter, variant, n, note):
    """GB/s of the repository's own run of this step on this GPU model (docs/results)."""
    path = Path(root) / "docs" / "results" / f"{gpu_slug()}.json"
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return None
    for rec in data.get("records", []):
        if rec.get("chapter") == chapter[:2] and rec.get("variant") == variant and rec.get("n") == n \
                and rec.get("note") == note and rec.get("role") == "step":
            return rec.get("gbps")
    return None


def time_task(task, exes, root, ref_exes=None):
    """Speed of the task's first step: GB/s, % of the copy measured in the same run,
    and the ratio to the reference (the reference build when grading, else the
    repository's committed figure for this GPU)."""
    c, exe = exes[0]
    step = c.steps[0]

    def one(cmd):
        r = run(cmd + ["--reps", "5", "--warmup", "2", "--json"] + c.args + c.time_args, timeout=600)
        for line in r.out.splitlines():
            if line.startswith("{"):
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("record") == "result" and rec.get("variant") == step and rec.get("role") == "step":
                    return rec
        return None

    rec = one(exe)
    if not rec:
        return {}
    out = {"median_ms": rec["ms_median"], "gbps": rec["gbps"], "pct_of_copy": rec.get("pct_of_copy")}
    ref = None
    if ref_exes:
        ref_rec = one(ref_exes[0][1])
        ref = ref_rec["gbps"] if ref_rec else None
    else:
        ref = reference_figure(root, c.chapter, step, rec["n"], rec.get("note"))
    if ref:
        ratio = rec["gbps"] / ref
        out["speed_ratio"] = ratio
        out["speed_band"] = "at reference" if ratio >= 0.9 else "within 2x" if ratio >= 0.5 else "below half"
    if (rec.get("pct_of_copy") or 0) > 125:  # faster than copying its bytes: it did not do the work
        out["implausible"] = True
    if not rec.get("ok", True):
        out["timed_result_wrong"] = True
    return out


def check_task(task, root, exe_of, seed, hidden=None, sanitizer=True, timing=True, ref_exe_of=None,
               size_args=None):
    """Every stage for one task. exe_of(chapter) is the program's path. Returns a dict."""
    res = {"task": task.id, "status": "NOT_RUN", "detail": "", "public": [0, 0], "hidden": [0, 0],
           "hidden_classes": {}, "sources": sources_digest(root, task), "seed": seed}
    status, detail = static_status(root, task)
    if status:
        res.update(status=status, detail=detail)
        return res
    exes = [(c, [str(exe_of(c.chapter))]) for c in task.checks]
    missing = [str(e[0]) for _, e in exes if not Path(e[0]).exists()]
    if missing:
        res.update(status="BUILD_FAIL", detail=f"not built: {', '.join(missing)}")
        return res
    # 1. the chapter's own sweep (or one replayed size), then repeats on several waves
    sweep = [(c, exe + ["--verify-only", "--seed", str(seed)] + c.args + (size_args or [])) for c, exe in exes]
    repeats = [] if size_args else \
        [(c, exe + ["--verify-only", "--seed", str(seed)] + c.args + waves_args(task))
         for c, exe in exes for _ in range(RACE_REPEATS if task.races else 2)]
    outcomes = []
    for k, (c, cmd) in enumerate(sweep + repeats):
        st, passed, total, bad = verdict(run(cmd), c.steps)
        res["public"][0] += passed
        res["public"][1] += total
        outcomes.append((k >= len(sweep), st, tuple(bad)))
        if st != "PASS" and res["status"] == "NOT_RUN":
            replay = " ".join(Path(x).name if j == 0 else x for j, x in enumerate(cmd))
            res.update(status=st, detail="; ".join(bad), replay=replay)
        if st != "PASS" and (k < len(sweep) or st in ("SKIP", "TIMEOUT", "CRASH")):
            break  # the sweep failed, or a repeat cannot be repeated usefully
    if res["status"] == "SKIP":
        return res
    if res["status"] != "NOT_RUN":
        repeated = [(st, bad) for is_repeat, st, bad in outcomes if is_repeat]
        if any(st != repeated[0][0] or not same_failure(bad, repeated[0][1]) for st, bad in repeated[1:]):
            res["diagnosis"] = (f"differs between repeats of one size ({' '.join(waves_args(task))}, seed {seed}): "
                                "a race")
        elif res["status"] == "FAIL" and not size_args:
            res["diagnosis"] = classify(task, exes, seed)
        return res
    # 2. hidden seeds and sizes (grading only); never printed beyond their counts
    if hidden:
        for hs in hidden.get("seeds", []):
            for extra in hidden.get("cases", {}).get(task.id, [[]]):
                for c, exe in exes:
                    st, passed, total, bad = verdict(run(exe + ["--verify-only", "--seed", str(hs)] + c.args + extra),
                                                     c.steps)
                    res["hidden"][1] += 1
                    if st == "PASS":
                        res["hidden"][0] += 1
                    else:
                        cls = st.lower() if st != "FAIL" else ("tail" if extra and tail_of(task, extra) else "wrong")
                        res["hidden_classes"][cls] = res["hidden_classes"].get(cls, 0) + 1
        if res["hidden"][0] < res["hidden"][1]:
            res.update(status="FAIL", detail=f"hidden cases: {res['hidden'][0]} of {res['hidden'][1]} passed")
            return res
    # 3. the sanitizers at a small size
    if sanitizer and not size_args and task.track != "standin":  # the stand-in runs on the CPU
        st, detail = sanitize(task, exes, seed)
        res["sanitizer"] = detail
        if st != "PASS":
            res.update(status=st, detail=detail)
            return res
    # 4. speed, next to the reference; it never decides correctness, but a time below
    #    the physical floor or a wrong timed result does
    if timing and not size_args:
        speed = time_task(task, exes, root, [(c, [str(ref_exe_of(c.chapter))]) for c in task.checks] if ref_exe_of else None)
        res.update(speed)
        if speed.get("implausible"):
            res.update(status="FAIL", detail="timed faster than copying its bytes: the timed runs did not do the work")
            return res
        if speed.get("timed_result_wrong"):
            res.update(status="FAIL", detail="the result of the timed runs was wrong (right when checked once)")
            return res
    res.update(status="PASS", detail="")
    return res


def tail_of(task, args):
    for a, tags in lattice(task):
        if a == args:
            return tags["tail"]
    try:
        n = int(args[-1])
        return n % task.unit != 0
    except (ValueError, IndexError):
        return False


# --- commands -------------------------------------------------------------------------------

def tree_track(root):
    p = Path(root) / TRACK_FILE
    return p.read_text().strip() if p.exists() else None


def present_tasks(root):
    """Tasks whose regions are all in this tree, in the tracks' order."""
    track = tree_track(root)
    out = []
    for t in T.TASKS:
        if track and t.track != track:
            continue
        if not track and t.track == "standin":
            continue
        if all(b is not None for b in task_bodies(root, t)):
            out.append(t)
    return out


def exe_in(build):
    return lambda chapter: Path(build) / "chapters" / chapter


def print_result(r):
    line = f"{r['status']:<21} {r['task']:<18}"
    if r["public"][1]:
        line += f" {r['public'][0]}/{r['public'][1]} checks"
    if r.get("gbps") is not None:
        line += f"  {r['gbps']:.0f} GB/s"
        if r.get("pct_of_copy") is not None:
            line += f" ({r['pct_of_copy']:.0f}% of copy)"
        if r.get("speed_ratio") is not None:
            line += f", {r['speed_ratio']:.2f}x the reference ({r['speed_band']})"
    print(line)
    if r["detail"]:
        print(f"    {r['detail']}")
    if r.get("diagnosis"):
        print(f"    diagnosis: {r['diagnosis']}")
    if r.get("replay"):
        print(f"    replay: {r['replay']}")


def cmd_check(a):
    root = Path(a.root).resolve()
    build = Path(a.build_dir).resolve()
    tasks = present_tasks(root)
    if a.task:
        tasks = [t for t in tasks if t.id == a.task]
        if not tasks:
            fail(f"--task: '{a.task}' is not a task of this tree (tasks: {', '.join(t.id for t in present_tasks(root))})")
    size_args = None
    if a.n is not None:
        size_args = [tasks[0].size, str(a.n)] if tasks[0].size != "shape" else fail("--n: this task takes --rows and --cols")
    if a.rows is not None or a.cols is not None:
        size_args = ["--rows", str(a.rows or 1), "--cols", str(a.cols or 1)]
    results = []
    for t in tasks:
        for f, h in sources_digest(root, t):
            print(f"source {f} sha256 {h}")
        r = check_task(t, root, exe_in(build), a.seed, sanitizer=not a.no_sanitizer, timing=a.time,
                       size_args=size_args)
        print_result(r)
        results.append(r)
    passed = sum(r["status"] == "PASS" for r in results)
    print(f"{passed} of {len(results)} tasks pass")
    if results and all(r["status"] == "SKIP" for r in results):
        return EXIT_SKIP
    return 0 if passed == len(results) else 1


def has_gpu(build):
    probe = Path(build) / "common" / "device_query"
    if not probe.exists():
        return True
    return run([str(probe)], timeout=60).code != EXIT_SKIP


def cmd_test(a):
    """One task as a meson test: 77 without a GPU, even for a stub (the copy's CI has none)."""
    if not has_gpu(a.build_dir) and T.task(a.task).track != "standin":
        print("no usable GPU: the lab test is skipped")
        return EXIT_SKIP
    a.n = a.rows = a.cols = None
    a.no_sanitizer, a.time = False, False
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


def cmd_export(a):
    if a.track not in T.TRACKS:
        fail(f"export: unknown track '{a.track}' (tracks: {', '.join(k for k in T.TRACKS if k != 'standin')})")
    dest = export(a.track, a.dest, reference=a.reference)
    if a.archive:
        out = shutil.make_archive(str(dest), "gztar", root_dir=dest.parent, base_dir=dest.name)
        print(f"wrote {out}")
    print(f"wrote {dest}: {len(T.track_tasks(a.track))} tasks")
    return 0


# --- grading --------------------------------------------------------------------------------

def gpu_arch():
    r = run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"], timeout=30)
    if r.code == 0 and re.match(r"^\d+\.\d+$", r.out.strip().splitlines()[0] if r.out.strip() else ""):
        return r.out.strip().splitlines()[0].replace(".", "")
    return "portable"


def tool_versions():
    v = {}
    r = run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], timeout=30)
    if r.code == 0 and r.out.strip():
        name, _, driver = r.out.strip().splitlines()[0].partition(", ")
        v["gpu"], v["driver"] = name, driver
    r = run(["nvcc", "--version"], timeout=30)
    m = re.search(r"release ([\d.]+)", r.out)
    v["nvcc"] = m.group(1) if m else ""
    return v


def overlay(student, tree, tasks):
    """Puts the student's region bodies into the reference tree; returns per task the
    problem with the marks, if any. Nothing outside the regions is taken."""
    problems = {}
    originals = {}
    for task in tasks:
        bodies = task_bodies(student, task)
        if any(b is None for b in bodies):
            problems[task.id] = "the region marks of this task are missing or damaged in the submission"
            continue
        by_file = {}
        for body, region in zip(bodies, task.regions):
            by_file.setdefault(region.file, []).append(body)
        for f, new_bodies in by_file.items():
            path = Path(tree) / f
            originals.setdefault(f, path.read_text())
            lines = path.read_text().split("\n")
            regions = [r for r in find_regions(lines) if r[0] == task.id]
            for (t, b, e, _), body in reversed(list(zip(regions, new_bodies))):
                lines[b + 1:e] = body
            path.write_text("\n".join(lines))
    return problems, originals


def build_chapters(tree, build, chapters, log):
    """{chapter: ok}: one ninja run over every chapter's program, going on past a
    failure (-k 0), so that one broken chapter fails only its own tasks."""
    for ch in chapters:  # a program left from the previous submission must not count
        (Path(build) / "chapters" / ch).unlink(missing_ok=True)
    r = run(["ninja", "-C", str(build), "-k", "0"] + [f"chapters/{ch}" for ch in chapters], timeout=BUILD_TIMEOUT)
    log.write(f"$ ninja -k 0 {' '.join('chapters/' + ch for ch in chapters)}\n{r.out}\n")
    return {ch: not r.timed_out and (Path(build) / "chapters" / ch).exists() for ch in chapters}


def setup_tree(track, tree, arch, log):
    export(track, tree, reference=True)
    build = Path(tree) / "build"
    r = run(["meson", "setup", str(build), str(tree), f"-Dgpu_arch={arch}"], timeout=BUILD_TIMEOUT)
    log.write(f"$ meson setup\n{r.out}\n")
    if r.code != 0:
        raise SystemExit(f"error: meson setup of the grading tree failed; see {log.name}")
    return build


def cmd_grade(a):
    track = a.track
    if track not in T.TRACKS:
        fail(f"grade: unknown track '{track}'")
    subs_dir = Path(a.submissions)
    if not subs_dir.is_dir():
        fail(f"grade: {subs_dir} is not a folder of submissions")
    subs = sorted(p for p in subs_dir.iterdir() if p.is_dir())
    if not subs:
        fail(f"grade: {subs_dir} holds no submission folders")
    hidden = None
    if a.hidden:
        try:
            hidden = json.loads(Path(a.hidden).read_text())
        except (OSError, ValueError) as e:
            fail(f"--hidden: cannot read {a.hidden}: {e}")
    global RUN_TIMEOUT
    RUN_TIMEOUT = a.timeout
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "logs").mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="lab-grade-"))
    tasks = T.track_tasks(track)
    chapters = list(dict.fromkeys(c.chapter for t in tasks for c in t.checks))
    arch = a.gpu_arch or gpu_arch()
    versions = tool_versions()
    jobs = max(1, min(a.jobs, len(subs)))
    # Build: `jobs` reference trees, each builds its share of the submissions in turn and
    # keeps their programs; one reference build is kept for the speed ratio.
    ref_bin = work / "reference-bin"
    trees = []
    with open(out / "logs" / "setup.log", "w") as log:
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            builds = list(pool.map(lambda k: setup_tree(track, work / f"tree{k}", arch, log), range(jobs)))
        trees = [(work / f"tree{k}", b) for k, b in enumerate(builds)]
        ok = build_chapters(trees[0][0], trees[0][1], chapters, log)
        if not all(ok.values()):
            raise SystemExit(f"error: the reference does not build; see {out / 'logs' / 'setup.log'}")
        ref_bin.mkdir()
        for ch in chapters:
            (ref_bin / ch).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(trees[0][1] / "chapters" / ch, ref_bin / ch)

    def build_one(k, sub):
        tree, build = trees[k]
        sub_work = work / "subs" / sub.name
        sub_work.mkdir(parents=True)
        with open(out / "logs" / f"{sub.name}.build.log", "w") as log:
            problems, originals = overlay(sub, tree, tasks)
            built = build_chapters(tree, build, chapters, log)
            for ch, good in built.items():
                if good:
                    (sub_work / "bin" / ch).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(build / "chapters" / ch, sub_work / "bin" / ch)
            for f, text in originals.items():
                (tree / f).write_text(text)
        return sub, problems, built

    built_all = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        queue = list(subs)
        lock = threading.Lock()

        def worker(k):
            while True:
                with lock:
                    if not queue:
                        return
                    sub = queue.pop(0)
                s, problems, built = build_one(k, sub)
                with lock:
                    built_all[s.name] = (problems, built)

        list(pool.map(worker, range(jobs)))

    # Check: one submission after another on the GPU, each run in its own process group.
    rows = []
    for sub in subs:
        problems, built = built_all[sub.name]
        results = []
        done = {}
        for task in tasks:
            bin_dir = work / "subs" / sub.name / "bin"
            st, why = static_status(sub, task)
            if task.id in problems or st:
                r = {"task": task.id, "status": st or "FAIL", "detail": why or problems[task.id], "public": [0, 0],
                     "hidden": [0, 0], "hidden_classes": {}, "sources": sources_digest(sub, task), "seed": a.seed}
            elif not all(built.get(c.chapter) for c in task.checks):
                r = {"task": task.id, "status": "BUILD_FAIL",
                     "detail": f"does not compile; see logs/{sub.name}.build.log", "public": [0, 0],
                     "hidden": [0, 0], "hidden_classes": {}, "sources": sources_digest(sub, task), "seed": a.seed}
            elif any(done.get(req) in ("NOT_IMPLEMENTED", "BUILD_FAIL") for req in task.requires):
                r = {"task": task.id, "status": "NOT_RUN",
                     "detail": f"needs {', '.join(task.requires)} written first (its checks run that code too)",
                     "public": [0, 0], "hidden": [0, 0], "hidden_classes": {}, "sources": sources_digest(sub, task),
                     "seed": a.seed}
            else:
                timed = not a.no_timing and (not a.timing_for or sub.name in a.timing_for.split(","))
                r = check_task(task, sub, lambda ch, b=bin_dir: b / ch, a.seed, hidden=hidden,
                               sanitizer=not a.no_sanitizer, timing=timed,
                               ref_exe_of=(lambda ch: ref_bin / ch))
            done[task.id] = r["status"]
            results.append(r)
        write_report(out, sub.name, track, results, versions)
        for r in results:
            rows.append(sheet_row(sub.name, track, r, versions, a.seed))
        print(f"{sub.name}: " + ", ".join(f"{r['task']} {r['status']}" for r in results), flush=True)
    fields = ["student", "track", "task", "status", "score", "detail", "public_passed", "public_total",
              "hidden_passed", "hidden_total", "median_ms", "gbps", "pct_of_copy", "speed_ratio", "speed_band",
              "sources_sha256", "gpu", "driver", "nvcc", "seed", "graded_at"]
    with open(out / "grades.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out / 'grades.csv'} ({len(rows)} rows) and {len(subs)} reports")
    if not a.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def sheet_row(student, track, r, versions, seed):
    fmt = lambda v, f: (f.format(v) if v is not None else "")  # noqa: E731
    return {
        "student": student, "track": track, "task": r["task"], "status": r["status"],
        "score": 1 if r["status"] == "PASS" else 0, "detail": r["detail"][:300],
        "public_passed": r["public"][0], "public_total": r["public"][1],
        "hidden_passed": r["hidden"][0], "hidden_total": r["hidden"][1],
        "median_ms": fmt(r.get("median_ms"), "{:.4f}"), "gbps": fmt(r.get("gbps"), "{:.1f}"),
        "pct_of_copy": fmt(r.get("pct_of_copy"), "{:.1f}"), "speed_ratio": fmt(r.get("speed_ratio"), "{:.3f}"),
        "speed_band": r.get("speed_band", ""),
        "sources_sha256": ";".join(f"{f}={h}" for f, h in r["sources"]),
        "gpu": versions.get("gpu", ""), "driver": versions.get("driver", ""), "nvcc": versions.get("nvcc", ""),
        "seed": seed, "graded_at": datetime.date.today().isoformat(),
    }


def write_report(out, student, track, results, versions):
    """Public cases in full; hidden cases as counts by class only."""
    passed = sum(r["status"] == "PASS" for r in results)
    lines = [f"# Lab report: {student}, track {track}", "",
             f"{passed} of {len(results)} tasks pass. GPU: {versions.get('gpu', 'none')}, "
             f"driver {versions.get('driver', '-')}, nvcc {versions.get('nvcc', '-')}.", "",
             "| task | status | public checks | hidden cases | speed |", "|---|---|---|---|---|"]
    for r in results:
        hid = f"{r['hidden'][0]} of {r['hidden'][1]}" if r["hidden"][1] else "-"
        if r["hidden_classes"]:
            hid += " (failed: " + ", ".join(f"{k} {v}" for k, v in sorted(r["hidden_classes"].items())) + ")"
        speed = f"{r['gbps']:.0f} GB/s, {r['speed_ratio']:.2f}x reference ({r['speed_band']})" \
            if r.get("speed_ratio") is not None else "-"
        lines.append(f"| {r['task']} | {r['status']} | {r['public'][0]} of {r['public'][1]} | {hid} | {speed} |")
    lines.append("")
    for r in results:
        if r["status"] != "PASS":
            lines.append(f"## {r['task']}: {r['status']}")
            lines.append("")
            detail = r["detail"] if not r["detail"].startswith("hidden cases") else \
                "some hidden cases failed; the public checks passed. Test more sizes and seeds."
            lines.append(detail)
            if r.get("diagnosis"):
                lines += ["", f"Diagnosis: {r['diagnosis']}."]
            if r.get("replay"):
                lines += ["", f"Replay: `{r['replay']}`"]
            lines.append("")
    lines.append("Sources graded: " + "; ".join(f"`{f}` sha256 {h[:16]}" for r in results[:1]
                                                for f, h in r["sources"]))
    (Path(out) / f"{student}.md").write_text("\n".join(lines) + "\n")



# --- planted submissions (instructor only) ------------------------------------------------------

def instructor():
    if not (ROOT / INSTRUCTOR / "mistakes.py").exists():
        fail("this command needs chapters/labs/instructor/, which a student copy does not have")
    sys.path.insert(0, str(ROOT / INSTRUCTOR))
    import mistakes  # noqa: E402
    return mistakes


def apply_mistake(tree, task, m):
    """Applies one mutation inside the task's region of m.file; errors if `old` is not
    there (a catalogue that drifted from the code)."""
    path = Path(tree) / m.file
    lines = path.read_text().split("\n")
    for t, b, e, _ in find_regions(lines):
        if t != task.id:
            continue
        body = "\n".join(lines[b + 1:e]) + "\n"
        if m.old in body:
            body = body.replace(m.old, m.new, 1)
            lines[b + 1:e] = body[:-1].split("\n") if body.endswith("\n") else body.split("\n")
            path.write_text("\n".join(lines))
            return
    raise SystemExit(f"error: mistake {task.id}/{m.name}: its text is not in a region of {m.file}")


def pack(track, catalogue):
    """Groups the mistakes into few submissions: one mistake per task per submission,
    and none in a file that another task of the same submission compiles."""
    tasks = {t.id: t for t in T.track_tasks(track)}
    regions = {r.file for t in tasks.values() for r in t.regions}
    files = {tid: {f for f in regions if any(f.startswith(f"chapters/{c.chapter}/") for c in t.checks)}
             for tid, t in tasks.items()}  # the region files each task's checks compile
    packs = []
    for tid, ms in catalogue.items():
        if tid not in tasks:
            continue
        for m in ms:
            for p in packs:
                clash = any(other.file in files[tid] or m.file in files[o] for o, other in p.items())
                if tid not in p and not clash:
                    p[tid] = m
                    break
            else:
                packs.append({tid: m})
    return packs


def plant(track, dest):
    """A folder of submissions with known grades: the reference, the stubs, and every
    catalogued mistake; writes expected.json beside them."""
    mistakes = instructor()
    dest = Path(dest)
    expected = {}
    tasks = T.track_tasks(track)
    export(track, dest / "reference", reference=True)
    expected["reference"] = {t.id: {"status": "PASS"} for t in tasks}
    export(track, dest / "stubs")
    expected["stubs"] = {t.id: {"status": "NOT_IMPLEMENTED"} for t in tasks}
    for k, p in enumerate(pack(track, mistakes.MISTAKES), 1):
        name = f"mistakes-{k}"
        export(track, dest / name, reference=True)
        expected[name] = {}
        for t in tasks:
            if t.id in p:
                apply_mistake(dest / name, t, p[t.id])
                expected[name][t.id] = {"status": p[t.id].expect, "says": p[t.id].says, "mistake": p[t.id].name}
            else:
                expected[name][t.id] = {"status": "PASS"}
    (dest / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    return expected


def compare(expected, grades_csv, out):
    """Every row of the grade sheet against expected.json; prints one line per
    difference and returns their count."""
    rows = list(csv.DictReader(open(grades_csv)))
    got = {(r["student"], r["task"]): r for r in rows}
    bad = 0
    lines = []
    for student, per_task in expected.items():
        for task_id, want in per_task.items():
            r = got.get((student, task_id))
            if r is None:
                lines.append(f"MISSING {student} {task_id}")
                bad += 1
                continue
            report = (Path(out) / f"{student}.md").read_text() if (Path(out) / f"{student}.md").exists() else ""
            says_ok = not want.get("says") or want["says"] in r["detail"] or want["says"] in report
            ok = r["status"] in want["status"].split("|") and says_ok
            tag = "ok  " if ok else "BAD "
            lines.append(f"{tag}{student:<12} {task_id:<18} {want.get('mistake', ''):<26} expected {want['status']:<10}"
                         f" got {r['status']:<10} {r['detail'][:90]}")
            bad += not ok
    print("\n".join(lines))
    return bad


def cmd_selftest(a):
    if a.track not in T.TRACKS:
        fail(f"selftest: unknown track '{a.track}'")
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="lab-selftest-"))
    subs = work / "submissions"
    if subs.exists():
        shutil.rmtree(subs)
    expected = plant(a.track, subs)
    (work / "expected.json").write_text((subs / "expected.json").read_text())
    (subs / "expected.json").unlink()
    out = Path(a.out) if a.out else work / "grades"
    args = ["grade", a.track, str(subs), "--out", str(out), "--jobs", str(a.jobs), "--seed", str(a.seed),
            "--timeout", str(a.timeout)]
    if a.hidden:
        args += ["--hidden", a.hidden]
    if a.no_timing:
        args += ["--no-timing"]
    else:  # the speed column where it says something: the reference and the correct variants
        timed = ["reference"] + [s for s, per in expected.items() if any(w.get("mistake") and w["status"] == "PASS"
                                                                         for w in per.values())]
        args += ["--timing-for", ",".join(timed)]
    if a.gpu_arch:
        args += ["--gpu-arch", a.gpu_arch]
    main(args)
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    bad = compare(expected, out / "grades.csv", out)
    print(f"selftest {a.track}: {bad} unexpected grades")
    return 0 if bad == 0 else 1


# --- main -----------------------------------------------------------------------------------

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("tracks", help="list the tracks and their tasks")
    s.set_defaults(fn=cmd_tracks)
    s = sub.add_parser("tasks", help="the tasks present in a tree, one per line (for meson)")
    s.add_argument("--root", default=str(ROOT))
    s.set_defaults(fn=cmd_tasks)
    s = sub.add_parser("export", help="write a student copy of a track")
    s.add_argument("track")
    s.add_argument("dest")
    s.add_argument("--archive", action="store_true", help="also write <dest>.tar.gz")
    s.add_argument("--reference", action="store_true", help="keep the reference code (the grader's tree)")
    s.set_defaults(fn=cmd_export)
    for name, fn in (("check", cmd_check), ("test", cmd_test)):
        s = sub.add_parser(name, help="check this tree's tasks" if name == "check" else "one task, as a meson test")
        if name == "test":
            s.add_argument("task")
        else:
            s.add_argument("--task")
            s.add_argument("--n", type=int, help="replay one size (elements or bytes)")
            s.add_argument("--rows", type=int)
            s.add_argument("--cols", type=int)
            s.add_argument("--no-sanitizer", action="store_true")
            s.add_argument("--time", action="store_true", help="also time each passing task")
        s.add_argument("--build-dir", default="build")
        s.add_argument("--root", default=str(ROOT))
        s.add_argument("--seed", type=int, default=42)
        s.set_defaults(fn=fn)
    s = sub.add_parser("grade", help="grade a folder of submissions (one student copy each)")
    s.add_argument("track")
    s.add_argument("submissions")
    s.add_argument("--out", required=True)
    s.add_argument("--hidden", help="JSON file: {\"seeds\": [...], \"cases\": {task: [[args...]]}}")
    s.add_argument("--seed", type=int, default=42, help="seed of the public checks")
    s.add_argument("--jobs", type=int, default=1, help="submissions built at once")
    s.add_argument("--gpu-arch", help="meson's gpu_arch (default: this GPU's, else portable)")
    s.add_argument("--no-sanitizer", action="store_true")
    s.add_argument("--no-timing", action="store_true")
    s.add_argument("--timing-for", help="time only these submissions (comma list)")
    s.add_argument("--keep-work", action="store_true")
    s.add_argument("--timeout", type=int, default=RUN_TIMEOUT, help="seconds per program run")
    s.set_defaults(fn=cmd_grade)
    s = sub.add_parser("selftest", help="instructor: grade planted submissions and compare with the expected grades")
    s.add_argument("track")
    s.add_argument("--work", help="folder for the planted submissions (default: a temporary one)")
    s.add_argument("--out", help="folder for the grade sheet and reports (default: <work>/grades)")
    s.add_argument("--hidden")
    s.add_argument("--seed", type=int, default=42)
    s.add_argument("--jobs", type=int, default=1)
    s.add_argument("--gpu-arch")
    s.add_argument("--no-timing", action="store_true")
    s.add_argument("--timeout", type=int, default=RUN_TIMEOUT, help="seconds per program run")
    s.set_defaults(fn=cmd_selftest)
    a = p.parse_args(argv)
    if getattr(a, "task", None) and a.cmd in ("check", "test"):
        try:
            T.task(a.task)
        except KeyError:
            fail(f"--task: unknown task '{a.task}' (see 'lab.py tracks')")
    return a.fn(a)


if __name__ == "__main__":
    sys.exit(main())
