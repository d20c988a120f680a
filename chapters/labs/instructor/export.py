"""A student copy of one track: what a student needs and nothing else.

    export("reduce", "lab-reduce")                 # stubs in every region of the track
    export("reduce", "tree", reference=True)       # the grader's tree: the reference regions

The copy holds the track's chapters, the primer and chapter 01, common/, the build,
the checker (chapters/labs/lab.py, tasks.py, labkit/), the track's chapter docs and
handout, and the plots and results those docs show. It leaves out the grader, the
self-test and the mistakes and exploits catalogues (this folder), the instructors'
answers, the other tracks, and the later steps of a chapter that hold a task's
answer (`// lab <task>: hide` blocks). Docs are regenerated from the stubbed sources;
text marked `<!-- lab <task>: begin/end -->` gives way to a pointer to the handout,
and a link to a file the copy does not hold becomes plain text.
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path

LABS = Path(__file__).resolve().parent.parent
ROOT = LABS.parent.parent
sys.path.insert(0, str(LABS))
import tasks as T  # noqa: E402
from labkit import regions  # noqa: E402

TRACK_FILE = "chapters/labs/track.txt"   # present in a student copy only: its track
INSTRUCTOR = "chapters/labs/instructor"  # never exported
SKIP_DIRS = {".git", "__pycache__", "doctest", ".whl", "gpu-logs", "doctest-carry"}
MAINTAINERS = ("README.md", "docs/README.md")  # the copy gets its own README; docs/README.md is about the docs' upkeep
ASSETS = ("docs/plots/", "docs/evidence/", "docs/runs/evidence/")  # copied where a shipped doc links to them
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def repo_files(root):
    root = Path(root)
    if (root / ".git").exists():
        r = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, check=True)
        return sorted(f for f in r.stdout.decode().split("\0") if f and (root / f).is_file())
    files = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in SKIP_DIRS for part in rel.parts) or rel.parts[0].startswith("build") or not path.is_file():
            continue
        files.append(rel.as_posix())
    return files


def chapter_of(path):
    m = re.match(r"(?:chapters|docs|docs/evidence|docs/runs/evidence|docs/plots)/(\d\d)_", path)
    return m.group(1) if m else None


def track_numbers(track):
    return {c[:2] for c in T.TRACKS[track] if c[:2].isdigit()}


def keep_in_copy(path, track):
    """Whether a repository file belongs in the student copy of `track` (the docs'
    plots, the evidence scripts and their outputs are added later, where a shipped doc shows them)."""
    numbers = track_numbers(track) | {"00", "01"}
    if path.startswith((INSTRUCTOR + "/", ".ci/", "notebooks/", "common/tests/")) or path in MAINTAINERS:
        return False  # the instructor's tools, CI, the notebook, the harness's own unit tests, the maintainers' pages
    if path == "docs/instructor_answers.md" or path.startswith(ASSETS):
        return False
    if path.startswith("docs/runs/"):  # what runs wrote: only the GPUs' results, which the docs quote
        return path.startswith("docs/runs/results/") and path.endswith((".json", ".csv")) and "build-times" not in path
    if path.startswith("docs/labs/"):  # the track's handout; not the instructors' page, not the grade sheets
        return path in (f"docs/labs/{track}.md", "docs/labs/checker.md")
    if path.startswith("chapters/labs/standin/"):
        return track == "standin"
    num = chapter_of(path)
    if num is not None and num not in numbers:
        return False
    return True


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
python3 chapters/labs/lab.py check                 # rebuilds, then one line per task, why it fails, a summary
python3 chapters/labs/lab.py check --task {tasks[0].id}   # one task
meson test -C build --suite lab                    # one test per task (skipped without a GPU)
```

Without a GPU, `check` still reads your code (the region rules and the hints that
[docs/labs/checker.md](docs/labs/checker.md) lists under "Without a GPU") and builds
it; the GPU stages say SKIP. A stub reports `NOT_IMPLEMENTED` until you write it.

| task | what | files |
|---|---|---|
{rows}
"""


def export(track, dest, reference=False, root=ROOT):
    """Writes a copy of `track` to dest: stubs in place of the regions (or the
    reference code with reference=True: the tree the grader builds in)."""
    dest = Path(dest).resolve()
    if dest.exists() and any(dest.iterdir()):
        raise SystemExit(f"error: export: {dest} exists and is not empty; give a new folder")
    dest.mkdir(parents=True, exist_ok=True)
    for f in repo_files(root):
        if keep_in_copy(f, track):
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(root) / f, dest / f)
    (dest / TRACK_FILE).write_text(track + "\n")
    (dest / "README.md").write_text(student_readme(track))
    track_ids = {t.id for t in T.track_tasks(track)}
    for path in dest.rglob("*"):
        if path.is_file() and path.suffix in regions.SOURCE_SUFFIXES:
            text = path.read_text()
            if "// lab " in text:
                new = regions.drop_hidden(text, track_ids)
                if new != text:
                    path.write_text(new)
    if not reference:
        for task in T.track_tasks(track):
            for f in dict.fromkeys(r.file for r in task.regions):
                stub_file(dest / f, task)
        regenerate_docs(dest)
        for md in dest.rglob("*.md"):
            text = md.read_text()
            new = regions.redact_doc(text, lambda t: f"> *This part shows the answer of the lab task `{t}`: see "
                                                     f"the handout, docs/labs/{track}.md.*")
            if new != text:
                md.write_text(new)
    add_doc_assets(dest, root)
    unlink_missing(dest)
    return dest


def stub_file(path, task):
    specs = [r for r in task.regions if path.as_posix().endswith(r.file)]
    lines = path.read_text().split("\n")
    found = [r for r in regions.find_regions(lines) if r[0] == task.id]
    if len(found) != len(specs):
        raise SystemExit(f"error: {path}: {len(found)} regions of {task.id}, tasks.py lists {len(specs)}")
    for (t, b, e, indent), spec in reversed(list(zip(found, specs))):
        lines[b + 1:e] = regions.stub_body(task, spec, indent)
    path.write_text("\n".join(lines))


def regenerate_docs(dest):
    """The chapter docs quote the sources: rewrite them from the stubs (the plots, drawn from
    the same results as the repository's, are the repository's: add_doc_assets)."""
    gen = dest / "docs" / "generate.py"
    if gen.exists():
        r = subprocess.run([sys.executable, str(gen), "--no-plots", "--quiet"], cwd=dest, capture_output=True,
                           text=True)
        if r.returncode != 0:
            raise SystemExit(f"error: docs/generate.py failed in the copy:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")


def doc_links(md):
    """[(match, target path or None)] of the relative links of one doc."""
    out = []
    for m in LINK.finditer(md.read_text()):
        target = m.group(3)
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            out.append((m, None))
            continue
        out.append((m, (md.parent / target.split("#")[0]).resolve()))
    return out


def add_doc_assets(dest, root):
    """The plots and evidence files that a shipped doc shows or links to."""
    root = Path(root).resolve()
    for md in list(dest.rglob("*.md")):
        for m, target in doc_links(md):
            if target is None or target.exists():
                continue
            rel = target.relative_to(dest) if str(target).startswith(str(dest)) else None
            if rel and rel.as_posix().startswith(ASSETS) and (root / rel).is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(root / rel, dest / rel)


def unlink_missing(dest):
    """A link to a file the copy does not hold becomes its text (and says where)."""
    for md in dest.rglob("*.md"):
        text = md.read_text()

        def fix(m):
            target = m.group(3)
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                return m.group(0)
            path = (md.parent / target.split("#")[0]).resolve()
            if path.exists():
                return m.group(0)
            if m.group(1):  # an image the copy does not have
                return f"*({m.group(2) or 'a figure'}: in the full repository)*"
            return f"{m.group(2)} (in the full repository)"

        new = LINK.sub(fix, text)
        if new != text:
            md.write_text(new)


def dead_links(dest):
    """[(doc, target)] of the links inside a copy that point to no file of it."""
    out = []
    for md in Path(dest).rglob("*.md"):
        for m, target in doc_links(md):
            if target is not None and not target.exists():
                out.append((md.relative_to(dest).as_posix(), m.group(3)))
    return out
