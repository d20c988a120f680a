"""Grading a folder of submissions (one student copy each) on this machine's GPU.

    python3 chapters/labs/lab.py grade reduce ~/course/submissions/ --out ~/course/grades/ --hidden ~/course/hidden.json
    ... --part 1/2 --out parts/1 (one GPU), ... --part 2/2 --out parts/2 (another); then
    python3 chapters/labs/lab.py grade reduce --merge parts/1 parts/2 --out ~/course/grades/

1. The hidden file is read once, before any submission's code runs, and its digest
   is checked again at the end.
2. Each submission is built in a clean reference tree with only its region bodies
   put in: the harness, the checks, the build and these tools come from the
   reference, whatever else the student changed. A region must parse as a piece of
   its function (labkit/static.py), as written and as compiled (after the
   compiler's own preprocessor, labkit/expanded.py), and its object files must
   define nothing beyond the task's own code and call nothing a region never needs
   (audit.py).
3. The checks of every (submission, task) run in parallel, each program in its own
   process group with a time limit, inside a bubblewrap sandbox: read-only files,
   an empty /tmp, no network, the hidden file and the other submissions hidden.
   The verdict of each checked run comes from a process that holds no student code:
   the submission's program writes its outputs into a fresh folder (--dump-outputs,
   the only writable place that outlives it), and the reference program of the same
   chapter, built from the clean tree, judges them (--check-outputs;
   labkit/check.py run_verdict, common/bench/outputs.h).
4. The timing runs one program at a time: the reference and the submission
   alternate, round after round, with --graded-timing (new input and a check for
   every timed call, the device idle at the end of each window, persisting L2 off);
   the speed ratio is the median of the rounds' ratios, and the GPU's clocks and
   throttle reasons are recorded.
"""
import concurrent.futures
import csv
import dataclasses
import datetime
import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

LABS = Path(__file__).resolve().parent.parent
ROOT = LABS.parent.parent
sys.path.insert(0, str(LABS))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tasks as T  # noqa: E402
from labkit import expanded, regions, static  # noqa: E402
from labkit.check import (RUN_TIMEOUT, Settings, TaskResult, build, check_task, disagreement,  # noqa: E402
                          physical_floor, speed_figure, timed_record)
from labkit.runner import Sandbox, run  # noqa: E402

import audit  # noqa: E402
from export import ANSWERS_FILE, answers_template, export  # noqa: E402

SHEET = ["student", "track", "task", "status", "score", "detail", "public_passed", "public_total", "hidden_passed",
         "hidden_total", "median_ms", "gbps", "tflops", "pct_of_copy", "speed_ratio", "speed_spread", "speed_band",
         "sources_sha256", "gpu", "driver", "nvcc", "clocks", "sandbox", "seed", "answers", "graded_at"]
DEFENCES = ("rules", "audit", "sandbox")  # what --without can switch off (the self-test's proofs only)


def say(line):
    """One line of progress from a thread of the checks: one write, so that two threads'
    lines do not interleave (print writes the text and its newline apart)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def usage_error(message):
    """A bad option: one line on stderr, exit code 2."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def first_words(detail, limit=300):
    """A failing task's detail for the progress line: its first line, cut at `limit`
    characters (the report keeps it whole)."""
    line = detail.strip().split("\n")[0]
    return line if len(line) <= limit else line[:limit - 3] + "..."


def parse_part(text):
    """--part i/k: (i, k), 1 <= i <= k; none: (1, 1)."""
    if not text:
        return 1, 1
    try:
        i, k = (int(x) for x in text.split("/"))
    except ValueError:
        usage_error(f"--part {text}: expected i/k, e.g. 1/4")
    if not 1 <= i <= k:
        usage_error(f"--part {text}: i must be 1 to k")
    return i, k


def nvidia_smi(query):
    r = run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"], 30)
    return r.out.strip().splitlines()[0] if r.code == 0 and r.out.strip() else ""


def gpu_arch():
    cap = nvidia_smi("compute_cap")
    return cap.replace(".", "") if re.fullmatch(r"\d+\.\d+", cap) else "portable"


def tool_versions():
    v = {"gpu": "", "driver": ""}
    line = nvidia_smi("name,driver_version")
    if line:
        v["gpu"], _, v["driver"] = line.partition(", ")
    m = re.search(r"release ([\d.]+)", run(["nvcc", "--version"], 30).out)
    v["nvcc"] = m.group(1) if m else ""
    return v


def clocks():
    """The SM and memory clocks (MHz), temperature and active throttle reasons now."""
    line = nvidia_smi("clocks.sm,clocks.mem,temperature.gpu,clocks_throttle_reasons.active")
    if not line:
        return ""
    sm, mem, temp, reasons = [x.strip() for x in line.split(",")]
    return f"sm {sm} MHz, mem {mem} MHz, {temp} C, throttle {reasons}"


class RunMemo:
    """The verdicts of one task's runs (a checked run across the boundary, the sanitizers),
    each kept as it ends in <out>/checked/runs/<student>--<task>/<key>.json, the key over the
    task's stored key (its code, the settings, the grading tree, the GPU) and the run's
    arguments: a grade cut short and resumed (--resume) takes them instead of running them
    again, so a task cut in its middle loses only the runs that had not ended."""

    def __init__(self, grader, sub, task):
        self.folder = grader.out / "checked" / "runs" / f"{sub.name}--{task.id}"
        self.base = grader.stored_key(sub, task, "runs")
        self.resume = getattr(grader.a, "resume", False)
        self.taken = 0
        self.lock = threading.Lock()  # a task's runs side by side take verdicts from several threads

    def path(self, what):
        text = json.dumps([self.base, what], sort_keys=True)
        return self.folder / f"{hashlib.sha256(text.encode()).hexdigest()}.json"

    def get(self, what):
        path = self.path(what)
        if not self.resume or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text())
        except ValueError:  # unreadable: run it
            return None
        with self.lock:
            self.taken += 1
        return data["verdict"]

    def put(self, what, verdict):
        path = self.path(what)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps({"what": what, "verdict": verdict}) + "\n")
        os.replace(tmp, path)  # whole or absent


# The lab tools' files that take no part in grading a submission: the self-test's catalogues
# of planted code and the class generator's, and the tests (Grader.tree_digest leaves them out).
PLANTS_AND_TESTS = re.compile(r"(corpus\w*|mistakes|exploits|make_class|test_\w+)\.py")


def grades_nothing(f):
    return f.parent.name == "instructor" and f.parent.parent.name == "labs" and bool(PLANTS_AND_TESTS.fullmatch(f.name))


def file_digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# --- building --------------------------------------------------------------------------------

def setup_tree(track, tree, arch, log):
    export(track, tree, reference=True)
    b = Path(tree) / "build"
    r = run(["meson", "setup", str(b), str(tree), f"-Dgpu_arch={arch}"], 900)
    log.write(f"$ meson setup {b} -Dgpu_arch={arch}\n{r.out}\n")
    if r.code != 0:
        raise SystemExit(f"error: meson setup of the grading tree failed; see {log.name}")
    return b


def overlay(student, tree, tasks):
    """Puts the student's region bodies into the reference tree. Returns ({task: the
    problem with its marks}, {file: original text} to restore)."""
    problems, originals = {}, {}
    for task in tasks:
        bodies = regions.task_bodies(student, task)
        if any(b is None for b in bodies):
            problems[task.id] = "the region marks of this task are missing or damaged in the submission"
            continue
        by_file = {}
        for body, region in zip(bodies, task.regions):
            by_file.setdefault(region.file, []).append(body)
        for f, new in by_file.items():
            originals.setdefault(f, (Path(tree) / f).read_text())
            regions.replace_bodies(Path(tree) / f, task.id, new)
    return problems, originals


def task_level(task):
    """0 for a task that needs no other, else one more than the deepest task it needs."""
    return 1 + max(task_level(T.task(r)) for r in task.requires) if task.requires else 0


def chapters_of(tasks):
    return list(dict.fromkeys(c.chapter for t in tasks for c in t.checks))


def region_chapters(task):
    """The chapters whose program compiles one of the task's region files."""
    files = {r.file for r in task.regions}
    return [c.chapter for c in task.checks if any(f.startswith(f"chapters/{c.chapter}/") for f in files)] or \
        [c.chapter for c in task.checks]


# --- grading ---------------------------------------------------------------------------------

class Grader:
    def __init__(self, a, without_for=None):
        """without_for: {submission: defences off} (the self-test's proofs only)."""
        self.a = a
        self.without_for = without_for or {}
        self.reuse = not getattr(a, "no_reuse", False)
        self.same_code = {}
        self.track = a.track
        self.tasks = T.track_tasks(self.track)
        self.chapters = chapters_of(self.tasks)
        self.without = set(a.without or [])
        self.hidden, self.hidden_digest = None, None
        if a.hidden:
            try:
                self.hidden_digest = file_digest(a.hidden)
                self.hidden = json.loads(Path(a.hidden).read_text())
            except (OSError, ValueError) as e:
                raise SystemExit(f"error: --hidden: cannot read {a.hidden}: {e}") from e
        self.out = Path(a.out)
        (self.out / "logs").mkdir(parents=True, exist_ok=True)
        self.work = Path(tempfile.mkdtemp(prefix="lab-grade-"))
        self.versions = tool_versions()
        self.settled = set()  # --resume: submissions whose stored results settle every task (not built)

    def off(self, sub_name):
        return self.without | set(self.without_for.get(sub_name, ()))

    def sandbox(self, bin_dir, sub_name=""):
        if "sandbox" in self.off(sub_name):
            return None
        hide = [self.work, ROOT]
        if self.a.hidden:
            hide.append(Path(self.a.hidden).resolve().parent)
        box = Sandbox(hide=hide, show=[bin_dir])
        return box if box.available else None

    def sandbox_note(self, sub_name=""):
        off = self.off(sub_name)
        if off:
            return "off: " + ", ".join(sorted(off)) + " (self-test)" if "sandbox" in off else \
                "bubblewrap; off: " + ", ".join(sorted(off)) + " (self-test)"
        box = Sandbox()
        return "bubblewrap" if box.available else f"not sandboxed: {box.why}"

    def build_all(self, subs):
        """Reference trees, the reference build, then every submission's build."""
        arch = self.a.gpu_arch or gpu_arch()
        jobs = max(1, min(self.a.jobs, len(subs)))
        # The builds share the CPUs this grader may use (LAB_CPUS, default all of them): ninja's
        # own default, every core for every build, would run jobs x cores compilers at once.
        cpus = int(os.environ.get("LAB_CPUS") or len(os.sched_getaffinity(0)))
        self.build_jobs = max(1, cpus // jobs)
        with open(self.out / "logs" / "setup.log", "w") as log:
            with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
                builds = list(pool.map(lambda k: setup_tree(self.track, self.work / f"tree{k}", arch, log),
                                       range(jobs)))
            self.trees = [(self.work / f"tree{k}", b) for k, b in enumerate(builds)]
            tree, b = self.trees[0]
            built = build(b, self.chapters, tree, self.tasks, cpus)  # alone: every core this grader may use
            log.write(json.dumps({ch: ok for ch, (ok, _) in built.items()}) + "\n")
            if not all(ok for ok, _ in built.values()):
                raise SystemExit(f"error: the reference does not build: {built}")
            self.ref_bin = self.work / "reference-bin"
            self.ref_obj = self.work / "reference-obj"
            for ch in self.chapters:
                (self.ref_bin / ch).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(b / "chapters" / ch, self.ref_bin / ch)
                for o in audit.objects(b, ch):
                    (self.ref_obj / ch).mkdir(parents=True, exist_ok=True)
                    shutil.copy2(o, self.ref_obj / ch / o.name)
        self.builds = {}
        queue, lock = list(subs), threading.Lock()

        def worker(k):
            while True:
                with lock:
                    if not queue:
                        return
                    sub = queue.pop(0)
                result = self.build_one(k, sub)
                with lock:
                    self.builds[sub.name] = result

        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            list(pool.map(worker, range(jobs)))

    def build_one(self, k, sub):
        """(per-task problems before running, {chapter: (ok, detail)}) of one submission."""
        tree, b = self.trees[k]
        early = {}
        for task in self.tasks:
            st, why = regions.stub_status(sub, task)
            if st:
                early[task.id] = (st, why)
                continue
            if "rules" not in self.off(sub.name):
                bad = [f for f in static.analyse(sub, task) if f.severity == "reject"]
                if bad:
                    early[task.id] = ("FAIL", "; ".join(f"[{f.rule}] {f.message} ({f.file}:{f.line})" for f in bad[:2]))
        runnable = [t for t in self.tasks if t.id not in early]
        built = {}
        if runnable:
            with open(self.out / "logs" / f"{sub.name}.build.log", "w") as log:
                problems, originals = overlay(sub, tree, runnable)
                for tid, why in problems.items():
                    early[tid] = ("FAIL", why)
                need = chapters_of([t for t in runnable if t.id not in problems])
                for ch in need:  # a program left from the previous submission must not count
                    (b / "chapters" / ch).unlink(missing_ok=True)
                built = build(b, need, tree, runnable, self.build_jobs)
                log.write(json.dumps({ch: v for ch, v in built.items()}, indent=1) + "\n")
                sub_bin = self.work / "subs" / sub.name / "bin"
                sub_bin.mkdir(parents=True, exist_ok=True)
                for ch, (ok, _) in built.items():
                    if ok:
                        (sub_bin / ch).parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy2(b / "chapters" / ch, sub_bin / ch)
                if "rules" not in self.off(sub.name):  # the rules again, on the regions as compiled
                    for task in runnable:
                        if task.id in early or not all(built.get(ch, (False,))[0] for ch in region_chapters(task)):
                            continue
                        found, problems = expanded.findings(tree, b, task, jobs=self.build_jobs)
                        bad = [f for f in found if f.severity == "reject"]
                        if bad or problems:
                            early[task.id] = ("FAIL", "; ".join(
                                [f"[{f.rule}] {f.message} ({f.file}:{f.line})" for f in bad[:2]] or
                                ["the region could not be read as compiled: " + "; ".join(problems[:2])]))
                            log.write(f"rules as compiled {task.id}: {[f.text() for f in bad]} {problems}\n")
                if "audit" not in self.off(sub.name):
                    own = audit.own_functions(originals.values())
                    for task in runnable:
                        if task.id in early:
                            continue
                        found = []
                        for ch in region_chapters(task):
                            if built.get(ch, (False,))[0]:
                                found += audit.audit(audit.objects(b, ch), sorted((self.ref_obj / ch).glob("*.o")),
                                                     own)
                        if found:
                            early[task.id] = ("FAIL", "symbol audit: " + "; ".join(dict.fromkeys(found)))
                            log.write(f"audit {task.id}: {found}\n")
                for f, text in originals.items():
                    (tree / f).write_text(text)
        return early, built

    def check_all(self, subs):
        """Every task of every submission, the checks in parallel."""
        items = [(sub, task) for sub in subs for task in self.tasks]
        results = {}
        self.dumps = self.work / "dumps"  # a fresh folder per checked run, removed after its verdict
        self.dumps.mkdir(exist_ok=True)
        self.tree_digest()  # for the stored results' keys, once, before the threads

        taken = set()  # the (student, task) pairs a stored result settled: printed once, as resumed

        def one(item):
            sub, task = item
            kept = self.stored(sub, task, "checked")
            if kept:
                taken.add((sub.name, task.id))
                say(f"  resumed {sub.name}/{task.id}: {kept.status} (checked by an earlier run)")
                return item, kept
            early, built = self.builds[sub.name]
            res = TaskResult(task.id, sources=regions.sources_digest(sub, task), seed=self.a.seed)
            unbuilt = [why for ok, why in (built.get(c.chapter, (False, "not built")) for c in task.checks) if not ok]
            if task.id in early:
                res.fail(*early[task.id])
            elif unbuilt:
                res.fail("BUILD_FAIL", unbuilt[0])
            else:
                bin_dir = self.work / "subs" / sub.name / "bin"
                settings = Settings(seed=self.a.seed, timeout=self.a.timeout, sanitizer=not self.a.no_sanitizer,
                                    hidden=self.hidden, sandbox=self.sandbox(bin_dir, sub.name),
                                    rules="rules" not in self.off(sub.name),
                                    trusted=lambda ch: self.ref_bin / ch, dumps=str(self.dumps),
                                    trusted_sandbox=self.sandbox(self.ref_bin, sub.name),
                                    memo=RunMemo(self, sub, task))
                res = check_task(task, sub, lambda ch: bin_dir / ch, settings, built=built)
                if settings.memo.taken:
                    say(f"  {sub.name}/{task.id}: {settings.memo.taken} of its runs' verdicts taken from an earlier "
                        "run cut short")
            self.store(sub, task, "checked", res)
            return item, res

        # Submissions whose code for a task is the same (every region its checks compile,
        # the same defences) get one run of the checks: a self-test's packs share the
        # reference's code for most tasks. (Not for a stability run, which is the repeat.)
        # Tasks run in the order of their requirements: a task whose required task did not
        # pass is NOT_RUN without running (its checks would run that broken code too, and a
        # broken look-back can hang until the time limit).
        start = time.monotonic()
        for level in sorted({task_level(t) for t in self.tasks}):
            groups = {}
            for sub, task in items:
                if task_level(task) != level:
                    continue
                blocked = [req for req in task.requires if results[(sub.name, req)].status != "PASS"]
                if blocked:
                    results[(sub.name, task.id)] = self.blocked_result(sub, task, blocked, results, one)
                    continue
                key = self.code_key(sub, task) if self.reuse else id((sub, task))
                groups.setdefault(key, []).append((sub, task))
            with concurrent.futures.ThreadPoolExecutor(max(1, self.a.parallel)) as pool:
                for members, ((sub, task), res) in zip(groups.values(),
                                                       pool.map(one, [m[0] for m in groups.values()])):
                    for other, t in members:
                        copy = dataclasses.replace(res, sources=regions.sources_digest(other, t))
                        results[(other.name, t.id)] = copy
                        self.same_code[(other.name, t.id)] = (sub.name, task.id)
                        if other is not sub:  # kept for --resume as the first member's is
                            self.store(other, t, "checked", copy)
                    if (sub.name, task.id) in taken:
                        continue
                    print(f"  checked {sub.name}/{task.id}: {res.status} ({time.monotonic() - start:.0f} s)"
                          + (f", the same code as {len(members) - 1} more" if len(members) > 1 else "")
                          + (f": {first_words(res.detail)}" if res.status != "PASS" and res.detail else ""),
                          flush=True)
        return results

    def known_without_running(self, sub, task):
        """Whether the task's status is settled before any run: a stub, a static finding,
        or a chapter of its checks that did not build."""
        if sub.name in self.settled:  # not built: what its stored results say
            return self.stored(sub, task, "checked") is not None
        early, built = self.builds[sub.name]
        return task.id in early or any(not built.get(c.chapter, (False,))[0] for c in task.checks)

    def blocked_result(self, sub, task, blocked, results, one):
        """A task whose required task did not pass: its own NOT_IMPLEMENTED or BUILD_FAIL where
        the source or the build settles it, else NOT_RUN. Kept for --resume (stage "blocked"),
        so that a resumed grade that builds nothing gives what the first run gave."""
        kept = self.stored(sub, task, "blocked")
        if kept is None:
            own = one((sub, task))[1] if self.known_without_running(sub, task) else None
            kept = own if own and own.status in ("NOT_IMPLEMENTED", "BUILD_FAIL") \
                else self.not_run(sub, task, blocked, results)
            self.store(sub, task, "blocked", kept)
        return kept if kept.status != "NOT_RUN" else self.not_run(sub, task, blocked, results)

    def not_run(self, sub, task, blocked, results):
        """NOT_RUN: a required task is not written, does not build or does not pass."""
        why = "; ".join(f"{req} is {results[(sub.name, req)].status}" for req in blocked)
        return TaskResult(task.id, status="NOT_RUN", sources=regions.sources_digest(sub, task), seed=self.a.seed,
                          detail=f"needs {', '.join(task.requires)} to pass first, since its checks run that code "
                                 f"too ({why})")

    # --- results kept for --resume ----------------------------------------------------------
    # Every task's checks, every task's timing, and what a task whose required task did not
    # pass was given (stage "blocked"), once done, are written to
    # <out>/checked/<student>--<task>.<stage>.json with a key: the task's code and the
    # defences off (code_key), the settings that change a verdict (whether bubblewrap runs
    # here among them), a digest of the tree that grades (the chapters, common/, the build
    # files, the grader itself) and the GPU. --resume takes a stored result whose key
    # matches instead of running it again; anything else runs. Within a task, each run's
    # verdict is kept as it ends (RunMemo), so a task cut in its middle resumes from there.

    def tree_digest(self):
        """Computed once (check_all asks before its threads start). Not in it: the self-test's
        catalogues of planted code (a plant's code is in its own key, code_key) and the lab
        tools' tests, which grade nothing; so a plant fixed between two runs of a self-test
        leaves every other stored result valid."""
        if not hasattr(self, "_tree_digest"):
            h = hashlib.sha256()
            files = [ROOT / "meson.build", ROOT / "meson.options"] + sorted(
                f for d in ("chapters", "common") for f in (ROOT / d).rglob("*")
                if f.is_file() and "__pycache__" not in f.parts and not grades_nothing(f))
            for f in files:
                if f.is_file():
                    h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
            self._tree_digest = h.hexdigest()
        return self._tree_digest

    def stored_key(self, sub, task, stage):
        if not hasattr(self, "_bwrap_runs"):
            self._bwrap_runs = Sandbox().available  # one probe, not one per stored result
        settings = [stage, self.a.seed, self.hidden_digest, not self.a.no_sanitizer, self.a.timeout,
                    self.a.rounds if stage == "timed" else None, self.a.gpu_arch, self.versions, self._bwrap_runs]
        text = json.dumps([self.code_key(sub, task), settings, self.tree_digest()], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def stored_path(self, sub, task, stage):
        return self.out / "checked" / f"{sub.name}--{task.id}.{stage}.json"

    def store(self, sub, task, stage, res):
        path = self.stored_path(sub, task, stage)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"key": self.stored_key(sub, task, stage), "result": asdict(res)}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n")
        os.replace(tmp, path)  # whole or absent: a run cut short leaves no half-written result

    def stored(self, sub, task, stage):
        """The result kept for this task and stage, if --resume and its key matches; else None."""
        path = self.stored_path(sub, task, stage)
        if not getattr(self.a, "resume", False) or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text())
            if data.get("key") != self.stored_key(sub, task, stage):
                return None
            fields = dict(data["result"])
            fields["findings"] = [static.Finding(**f) for f in fields.get("findings", [])]
            # JSON keeps a (file, sha256) pair as a list: back to the tuple that a fresh result
            # holds (the sheet's list of sources hashes it)
            fields["sources"] = [tuple(x) for x in fields.get("sources", [])]
            return TaskResult(**fields)
        except (ValueError, KeyError, TypeError):  # unreadable, or written by another version: run it
            return None

    def code_key(self, sub, task):
        """What a task's checks depend on in a submission: every region body in the
        files its chapters compile (its own, those of the tasks it requires, and other
        tasks' in the same chapter folders), and the defences in force."""
        files = {r.file for r in task.regions}
        for req in task.requires:
            files |= {r.file for r in T.task(req).regions}
        for c in task.checks:
            files |= {r.file for t in self.tasks for r in t.regions if r.file.startswith(f"chapters/{c.chapter}/")}
        bodies = {}
        for f in sorted(files):
            try:
                bodies[f] = regions.file_regions(Path(sub) / f)
            except (OSError, ValueError):
                bodies[f] = "unreadable"
        text = json.dumps([task.id, bodies, sorted(self.off(sub.name))], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def timed(self, sub, task=None):
        """Whether the speed of this submission's task (of any of its tasks, without one) is
        measured: unless --no-timing; with --timing-for, only the submissions it names, or
        their tasks named SUBMISSION/TASK."""
        if self.a.no_timing or not self.a.timing_for:
            return not self.a.no_timing
        names = self.a.timing_for.split(",")
        if sub.name in names:
            return True
        return f"{sub.name}/{task.id}" in names if task else any(n.startswith(sub.name + "/") for n in names)

    def all_stored(self, sub):
        """Whether --resume finds every task of this submission settled: a stored check for
        each task whose required tasks passed, a stored blocked result for each of the others,
        and a stored timing for each that passed where timing is asked."""
        if not getattr(self.a, "resume", False):
            return False
        status = {}
        for task in sorted(self.tasks, key=task_level):
            if any(status.get(req) != "PASS" for req in task.requires):
                # what it was when blocked (a stub's own NOT_IMPLEMENTED, say) must be stored:
                # a run cut before this task's level stored nothing, and an unbuilt
                # submission cannot tell a stub or a failed build from NOT_RUN
                if self.stored(sub, task, "blocked") is None:
                    return False
                status[task.id] = "NOT_RUN"
                continue
            kept = self.stored(sub, task, "checked")
            if kept is None or (kept.status == "PASS" and self.timed(sub, task) and not self.stored(sub, task, "timed")):
                return False
            status[task.id] = kept.status
        return True

    def time_all(self, subs, results):
        """The speed of every passing task, the reference and the submission in turns."""
        timed = [s for s in subs if self.timed(s)]
        timed_speed = {}
        for sub in timed:
            bin_dir = self.work / "subs" / sub.name / "bin"
            for task in self.tasks:
                res = results[(sub.name, task.id)]
                if res.status != "PASS" or not self.timed(sub, task):
                    continue
                first = self.same_code.get((sub.name, task.id))
                if first and first != (sub.name, task.id) and first in timed_speed:
                    res.speed = dict(timed_speed[first])  # the same code, timed once
                    self.store(sub, task, "timed", res)
                    continue
                kept = self.stored(sub, task, "timed")
                if kept:
                    res.status, res.detail, res.speed = kept.status, kept.detail, kept.speed
                    print(f"  resumed timing {sub.name}/{task.id}: {res.status} (timed by an earlier run)", flush=True)
                    if res.status == "PASS" and res.speed:
                        timed_speed[(sub.name, task.id)] = res.speed
                    continue
                c = task.checks[0]
                settings = Settings(seed=self.a.seed, sandbox=self.sandbox(bin_dir, sub.name))
                ref_settings = Settings(seed=self.a.seed, sandbox=self.sandbox(self.ref_bin))
                before = clocks()
                ratios, gbps, tflops, ms = [], [], [], []
                for _ in range(self.a.rounds):
                    ref, _, _ = timed_record([str(self.ref_bin / c.chapter)], c, ref_settings, grading=True)
                    rec, device, r = timed_record([str(bin_dir / c.chapter)], c, settings, grading=True)
                    if rec is None:
                        res.fail("FAIL", f"the timed run printed no result for {c.steps[0]} (exit code {r.code})")
                        break
                    why = disagreement(r) or physical_floor(rec, device)
                    if why:
                        res.fail("FAIL", why)
                        break
                    gbps.append(rec["gbps"])
                    tflops.append(rec.get("tflops") or 0.0)
                    ms.append(rec["ms_median"])
                    if ref and ref.get("gbps"):
                        ratios.append(rec["gbps"] / ref["gbps"])
                if res.status != "PASS" or not gbps:
                    print(f"  timed {sub.name}/{task.id}: {res.status}", flush=True)
                    self.store(sub, task, "timed", res)
                    continue
                res.speed = {"median_ms": statistics.median(ms), "gbps": statistics.median(gbps),
                             "tflops": statistics.median(tflops) or None, "pct_of_copy": rec.get("pct_of_copy"),
                             "clocks": f"{before} / {clocks()}"}
                print(f"  timed {sub.name}/{task.id}: {res.status} {speed_figure(res.speed)}, "
                      f"ratios {[round(x, 3) for x in ratios]}", flush=True)
                if ratios:
                    ratio = statistics.median(ratios)
                    res.speed.update(speed_ratio=ratio, speed_spread=max(ratios) / min(ratios),
                                     speed_band="at reference" if ratio >= 0.9 else "within 2x" if ratio >= 0.5
                                     else "below half")
                timed_speed[(sub.name, task.id)] = res.speed
                self.store(sub, task, "timed", res)

    def run(self):
        subs_dir = Path(self.a.submissions)
        if not subs_dir.is_dir():
            raise SystemExit(f"error: grade: {subs_dir} is not a folder of submissions")
        subs = sorted(p for p in subs_dir.iterdir() if p.is_dir())
        if not subs:
            raise SystemExit(f"error: grade: {subs_dir} holds no submission folders")
        part, parts = parse_part(getattr(self.a, "part", None))
        if parts > 1:  # every k-th submission in name order: one part per GPU, side by side
            print(f"part {part}/{parts}: {len(subs[part - 1::parts])} of {len(subs)} submissions", flush=True)
            subs = subs[part - 1::parts]
        # --resume: a submission whose every task a stored result settles is not built again
        # (a scan copy compiles ten CUDA files).
        self.settled = {s.name for s in subs if self.all_stored(s)}
        if self.settled:
            print(f"resumed: {len(self.settled)} of {len(subs)} submissions settled by stored results, not built again",
                  flush=True)
        self.build_all([s for s in subs if s.name not in self.settled])
        for name in self.settled:
            self.builds[name] = ({}, {})
        results = self.check_all(subs)
        self.time_all(subs, results)
        if self.hidden_digest and file_digest(self.a.hidden) != self.hidden_digest:
            raise SystemExit("error: the hidden file changed during grading: the grade sheet is not written")
        rows = []
        for sub in subs:
            per = [results[(sub.name, t.id)] for t in self.tasks]
            write_report(self.out, sub.name, self.track, per, self.versions)
            sandbox = self.sandbox_note(sub.name)
            answers = collect_answers(sub, self.out, self.track)
            rows += [sheet_row(sub.name, self.track, r, self.versions, self.a.seed, sandbox) | {"answers": answers}
                     for r in per]
            print(f"{sub.name}: " + ", ".join(f"{r.task} {r.status}" for r in per), flush=True)
        with open(self.out / "grades.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=SHEET)
            w.writeheader()
            w.writerows(rows)
        (self.out / "results.json").write_text(json.dumps(
            {f"{s}/{t}": {k: v for k, v in asdict(r).items() if k != "findings"} | {
                "findings": [f.text() for f in r.findings]} for (s, t), r in results.items()}, indent=1) + "\n")
        print(f"wrote {self.out / 'grades.csv'} ({len(rows)} rows) and {len(subs)} reports")
        if not self.a.keep_work:
            shutil.rmtree(self.work, ignore_errors=True)
        return 0


def collect_answers(sub, out, track):
    """The student's answers.md (predictions and answers, read by the instructor beside the
    grade: docs/labs/course.md's rubric), copied to <student>.answers.md; what the sheet's
    answers column says of it: missing, blank (the template as exported) or the words written."""
    path = Path(sub) / ANSWERS_FILE
    if not path.is_file():
        return "missing"
    text = path.read_text(errors="replace")
    shutil.copy(path, Path(out) / f"{Path(sub).name}.answers.md")
    blank = set(answers_template(track).split())
    written = [w for w in text.split() if w not in blank]
    return f"{len(written)} words" if written else "blank"


def sheet_row(student, track, r, versions, seed, sandbox):
    fmt = lambda v, f: (f.format(v) if v is not None else "")  # noqa: E731
    s = r.speed
    return {
        "student": student, "track": track, "task": r.task, "status": r.status,
        "score": 1 if r.status == "PASS" else 0, "detail": r.detail[:300],
        "public_passed": r.public[0], "public_total": r.public[1],
        "hidden_passed": r.hidden[0], "hidden_total": r.hidden[1],
        "median_ms": fmt(s.get("median_ms"), "{:.4f}"), "gbps": fmt(s.get("gbps"), "{:.1f}"),
        "tflops": fmt(s.get("tflops"), "{:.2f}"),
        "pct_of_copy": fmt(s.get("pct_of_copy"), "{:.1f}"), "speed_ratio": fmt(s.get("speed_ratio"), "{:.3f}"),
        "speed_spread": fmt(s.get("speed_spread"), "{:.3f}"), "speed_band": s.get("speed_band", ""),
        "sources_sha256": ";".join(f"{f}={h}" for f, h in r.sources),
        "gpu": versions.get("gpu", ""), "driver": versions.get("driver", ""), "nvcc": versions.get("nvcc", ""),
        "clocks": s.get("clocks", ""), "sandbox": sandbox, "seed": seed,
        "graded_at": datetime.date.today().isoformat(),
    }


def write_report(out, student, track, results, versions):
    """Public cases in full; hidden cases as counts by class only."""
    passed = sum(r.status == "PASS" for r in results)
    lines = [f"# Lab report: {student}, track {track}", "",
             f"{passed} of {len(results)} tasks pass. GPU: {versions.get('gpu') or 'none'}, "
             f"driver {versions.get('driver') or '-'}, nvcc {versions.get('nvcc') or '-'}.", "",
             "| task | status | public checks | hidden cases | speed |", "|---|---|---|---|---|"]
    for r in results:
        hid = f"{r.hidden[0]} of {r.hidden[1]}" if r.hidden[1] else "-"
        if r.hidden_classes:
            hid += " (failed: " + ", ".join(f"{k} {v}" for k, v in sorted(r.hidden_classes.items())) + ")"
        s = r.speed
        speed = f"{speed_figure(s)}, {s['speed_ratio']:.2f}x reference ({s['speed_band']})" \
            if s.get("speed_ratio") is not None else "-"
        lines.append(f"| {r.task} | {r.status} | {r.public[0]} of {r.public[1]} | {hid} | {speed} |")
    lines.append("")
    for r in results:
        warn = [f for f in r.findings if f.severity == "warn"]
        if r.status == "PASS" and not warn:
            continue
        lines += [f"## {r.task}: {r.status}", ""]
        if r.status != "PASS":
            lines.append(r.detail if not r.detail.startswith("hidden cases") else
                         "some hidden cases failed; the public checks passed. Test more sizes and seeds.")
        if r.diagnosis:
            lines += ["", f"Diagnosis: {r.diagnosis}."]
        if r.replay:
            lines += ["", f"Replay: `{r.replay}`"]
        for f in warn:
            lines += ["", f"Hint: {f.text()} (docs/labs/checker.md explains `{f.rule}`)"]
        lines.append("")
    lines.append("Sources graded: " + "; ".join(f"`{f}` sha256 {h[:16]}" for f, h in
                                                dict.fromkeys(x for r in results for x in r.sources)))
    (Path(out) / f"{student}.md").write_text("\n".join(lines) + "\n")


def add_arguments(s):
    s.add_argument("track")
    s.add_argument("submissions", nargs="?")
    s.add_argument("--out", required=True)
    s.add_argument("--part", help="i/k: grade every k-th submission from the i-th (in name order), one part per GPU")
    s.add_argument("--merge", nargs="+", metavar="DIR", help="join the graded parts' folders into --out")
    s.add_argument("--hidden", help='JSON file: {"seeds": [...], "cases": {task: [[args...]]}}')
    s.add_argument("--seed", type=int, default=42, help="seed of the public checks")
    s.add_argument("--jobs", type=int, default=1,
                   help="submissions built at once, each on its share of the cores (all, or LAB_CPUS)")
    s.add_argument("--parallel", type=int, default=max(1, min(8, (os.cpu_count() or 2) // 2)),
                   help="checks run at once (the timing always runs alone)")
    s.add_argument("--rounds", type=int, default=3, help="timing rounds, reference and submission in turns")
    s.add_argument("--gpu-arch", help="meson's gpu_arch (default: this GPU's)")
    s.add_argument("--no-sanitizer", action="store_true")
    s.add_argument("--no-timing", action="store_true")
    s.add_argument("--timing-for", help="time only these submissions, or their tasks as SUBMISSION/TASK (comma list)")
    s.add_argument("--keep-work", action="store_true")
    s.add_argument("--timeout", type=int, default=RUN_TIMEOUT, help="seconds per program run")
    s.add_argument("--no-reuse", action="store_true",
                   help="check every submission's tasks even where their code is the same as another's")
    s.add_argument("--resume", action="store_true",
                   help="reuse the results an earlier run left in <out>/checked/ where the code, the settings, "
                        "the tree and the GPU are the same: a grade cut short goes on where it stopped")
    s.add_argument("--without", action="append", choices=DEFENCES,
                   help="switch a defence off (the self-test proves each defence alone)")


def merge(a):
    """grade --merge DIR...: the parts' sheets, reports and results joined into --out, as
    one grading of every submission would have written them; each part must have graded
    this track, and no student may be in two parts."""
    dirs = [Path(d) for d in a.merge]
    missing = [str(d) for d in dirs if not (d / "grades.csv").is_file()]
    if missing:
        usage_error(f"--merge: no grades.csv in {', '.join(missing)} (did that part finish?)")
    rows, seen, results = [], {}, {}
    for d in dirs:
        mine = list(csv.DictReader(open(d / "grades.csv")))
        other = sorted({r["track"] for r in mine} - {a.track})
        if other:
            usage_error(f"--merge: {d} graded track {', '.join(other)}, not {a.track}")
        for student in sorted({r["student"] for r in mine}):
            if student in seen:
                usage_error(f"--merge: {student} is in both {seen[student]} and {d}")
            seen[student] = d
        rows += mine
        if (d / "results.json").is_file():
            results.update(json.loads((d / "results.json").read_text()))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for d in dirs:
        for report in d.glob("*.md"):
            shutil.copy(report, out / report.name)
    rows.sort(key=lambda r: r["student"])  # a stable sort: each student's tasks keep their order
    with open(out / "grades.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=SHEET)
        w.writeheader()
        w.writerows(rows)
    (out / "results.json").write_text(json.dumps(dict(sorted(results.items())), indent=1) + "\n")
    print(f"merged {len(dirs)} parts: {len(seen)} submissions, {len(rows)} rows into {out / 'grades.csv'}")
    return 0


def cmd_grade(a):
    if a.track not in T.TRACKS:
        raise SystemExit(f"error: grade: unknown track '{a.track}'")
    if a.merge:
        if a.submissions or a.part:
            usage_error("--merge joins graded parts: give no submissions folder and no --part")
        return merge(a)
    if not a.submissions:
        usage_error("grade: give the folder of submissions (or --merge DIR...)")
    return Grader(a).run()
