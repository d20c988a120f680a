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

A copy is made of tracked files only (git ls-files --cached), of the kinds COPY_ALLOWLIST
names, filtered by keep_in_copy. A student copy is refused (exit 2) while the repository
holds untracked things that look like a course's private files or another copy (strays:
a .json file, a folder named submissions, grades or hidden*, a tree with chapters/labs/lab.py):
the instructor moves them out of the repository. Without git the export takes the
allowlisted files on disk, says so, and refuses the same strays (the repository's own
records excepted, KNOWN_WITHOUT_GIT).
"""
import json
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
ANSWERS_FILE = "answers.md"               # the student's written predictions and answers (grade collects it)
INSTRUCTOR = "chapters/labs/instructor"  # never exported
SKIP_DIRS = {".git", "__pycache__", "doctest", ".whl", "gpu-logs", "doctest-carry"}
MAINTAINERS = ("README.md", "docs/README.md")  # the copy gets its own README; docs/README.md is about the docs' upkeep
ASSETS = ("docs/plots/", "docs/evidence/", "docs/runs/evidence/")  # copied where a shipped doc links to them
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


# What a track's copy may hold, as paths from the repository root (`*` inside one folder,
# `**` at any depth): a file goes into the copy only when it matches one of these AND
# keep_in_copy keeps it for the track. With git, only tracked files are candidates.
COPY_ALLOWLIST = (
    "meson.build", "meson.options", ".clang-format", ".clangd", ".gitignore",  # the build, the editors' settings
    "common/**",                                   # the harness (keep_in_copy leaves out its unit tests)
    "chapters/meson.build", "chapters/*.py",       # the chapters' build, the tour, the tests' scripts
    "chapters/[0-9][0-9]_*/**",                    # the chapters (keep_in_copy keeps the track's, 00 and 01)
    "chapters/labs/meson.build", "chapters/labs/lab.py", "chapters/labs/tasks.py",  # the checker
    "chapters/labs/labkit/*.py",
    "chapters/labs/standin/*",                     # the CPU stand-in (its own copy only: keep_in_copy)
    "docs/*.md", "docs/*.py", "docs/meson.build", "docs/run_notes.json",  # the pages, their generator, its notes
    "docs/labs/*.md",                              # the track's handout and checker.md (keep_in_copy picks)
    "docs/runs/results/*.json", "docs/runs/results/*.csv",  # the measured results the docs quote
)
# Untracked things an export refuses to run beside: the grader's inputs and outputs and other
# copies belong outside the repository. Folders named so, any .json file, another tree with
# the lab tools (a student copy, a submission, an old checkout).
STRAY_FOLDER = re.compile(r"^(submissions?|grades?|hidden.*)$", re.I)
NESTED_TREE = re.compile(r"^(?P<top>.+?)/chapters/labs/(?:lab\.py|track\.txt)$")
# Without git nothing says what is tracked: the repository's own JSON files and grade sheets
# (the runs' records, the example hidden file) are known by their place.
KNOWN_WITHOUT_GIT = ("docs/runs/**", "docs/run_notes.json", "chapters/labs/instructor/**")
NO_GIT = ("no git repository at {root} (or no git program, or git cannot read it): without git the export "
          "cannot tell a tracked file from an untracked one, and takes every file on disk of the kinds "
          "chapters/labs/instructor/export.py's COPY_ALLOWLIST names")


_said_no_git = []  # the note above, once per process (the self-test exports many copies)


def glob_re(pattern):
    """A path pattern of COPY_ALLOWLIST as a regular expression."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "[":
            j = pattern.index("]", i)
            out, i = out + pattern[i:j + 1], j + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


ALLOWLIST_RE = [glob_re(p) for p in COPY_ALLOWLIST]
KNOWN_WITHOUT_GIT_RE = [glob_re(p) for p in KNOWN_WITHOUT_GIT]


def allowed(path):
    """Whether a path is one of the kinds of file a copy may hold (COPY_ALLOWLIST)."""
    return any(r.match(path) for r in ALLOWLIST_RE)


def git_files(root, *args):
    """git ls-files of root with args, or None without git (no repository, or no git program)."""
    root = Path(root)
    if not (root / ".git").exists():
        return None
    try:
        r = subprocess.run(["git", "-C", str(root), "ls-files", "-z", *args], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return sorted(f for f in r.stdout.decode().split("\0") if f)


def skipped(rel):
    """A path under a hidden folder (.git, .venv, a carried tree), a build folder or a cache."""
    parts = rel.rstrip("/").split("/")
    return (any(p.startswith(".") for p in parts[:-1]) or parts[0].startswith("build")
            or any(p in SKIP_DIRS for p in parts[:-1]))


def disk_files(root):
    """Every file under root, without hidden, build and cache folders (the walk without git)."""
    root = Path(root)
    files = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not skipped(rel) and not any(p in SKIP_DIRS for p in rel.split("/")):
            files.append(rel)
    return files


def repo_files(root):
    """(files, with_git): the tracked files of root, or without git every file on disk (not
    under hidden, build or cache folders)."""
    tracked = git_files(root, "--cached")
    if tracked is not None:
        return [f for f in tracked if (Path(root) / f).is_file()], True
    return disk_files(root), False


def strays(root):
    """{what: why} of the files and folders inside root that look like a course's private
    files or another copy: untracked files git does not ignore (every file without git, but
    for the repository's own records: KNOWN_WITHOUT_GIT), under no hidden or build folder."""
    root = Path(root)
    untracked = git_files(root, "--others", "--exclude-standard")
    with_git = untracked is not None
    if not with_git:
        untracked = [f for f in disk_files(root) if not any(r.match(f) for r in KNOWN_WITHOUT_GIT_RE)]
    found = {}
    nested = set()
    for rel in untracked:
        if skipped(rel):
            continue
        m = NESTED_TREE.match(rel)
        if m:
            nested.add(m["top"])
        elif rel.endswith("/") and ((root / rel / "chapters/labs/lab.py").exists()
                                    or (root / rel / "chapters/labs/track.txt").exists()):
            nested.add(rel.rstrip("/"))  # a nested git repository, listed as its folder
    counts = {}
    for rel in untracked:
        if skipped(rel):
            continue
        parts = rel.rstrip("/").split("/")
        top = next((t for t in nested if rel == t or rel.startswith(t + "/")), None)
        folder = next((k for k in range(len(parts) - 1) if STRAY_FOLDER.match(parts[k])), None)
        if top is not None:
            key, why = top + "/", "another copy of the repository: a student copy, a submission or a checkout"
        elif folder is not None:
            key, why = "/".join(parts[:folder + 1]) + "/", f"a folder named {parts[folder]}"
        elif rel.endswith(".json"):
            key, why = rel, "an untracked .json file" if with_git else "a .json file"
        else:
            continue
        found[key] = why
        counts[key] = counts.get(key, 0) + 1
    return {k: why + (f", {counts[k]} file{'s' if counts[k] > 1 else ''}" if k.endswith("/") else "")
            for k, why in found.items()}


def hidden_shaped(path):
    """Whether a JSON file reads as a grader's hidden file ({"seeds": ..., "cases": ...})."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool({"seeds", "cases"} & set(data))


def refuse_strays(root, files, with_git):
    """Stops the export (exit 2) when the repository holds what looks like a course's private
    files or another copy (strays), or when a file the copy would take reads as a hidden file."""
    bad = strays(root)
    for f in files:
        if f.endswith(".json") and hidden_shaped(Path(root) / f):
            bad[f] = "reads as a hidden file (seeds, cases), and the copy would take it"
    if bad:
        listing = "\n".join(f"  {k} ({why})" for k, why in sorted(bad.items()))
        why = ("a copy takes tracked files only, but a course's files and copies have no place in the tree "
               "it is exported from" if with_git else "without git a copy cannot tell them from the repository's")
        print(f"error: export: the repository holds what looks like hidden inputs, submissions, grades or "
              f"another copy:\n{listing}\nMove them out of the repository (e.g. to ~/course/) and export again: "
              f"{why}.", file=sys.stderr)
        raise SystemExit(2)


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

Before you measure a task, write your prediction in `answers.md` (the handout's
"Predict before you measure"), and after it your measurements and what they show (its
"Answer from measurements" questions): the instructor grades that file beside the checks.

| task | what | files |
|---|---|---|
{rows}
"""


def plain(text):
    """One line of a handout's text, its links reduced to their words (the file sits
    elsewhere in the copy)."""
    return " ".join(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).split())


def answers_template(track, root=ROOT):
    """answers.md of a student copy: per task, the handout's "Predict before you measure"
    paragraph (its blanks ____ to fill) and its "Answer from measurements" questions, each
    followed by room for the answer. The grader copies the file beside the student's report."""
    handout = Path(root) / "docs" / "labs" / f"{track}.md"
    text = handout.read_text() if handout.exists() else ""
    out = [f"# Predictions and answers: track {track}", "",
           "Write your prediction before you measure, then your measurements and what they show. "
           "The instructor reads this file beside the automatic grade (the rubric: docs/labs/course.md).", ""]
    for t in T.track_tasks(track):
        out += [f"## `{t.id}`: {t.title}", ""]
        part = re.search(rf"^## Task \d+ · `{re.escape(t.id)}`.*?(?=^## )", text + "\n## ", re.M | re.S)
        section = part.group(0) if part else ""
        predict = re.search(r"\*\*Predict before you measure\.\*\*(.*?)(?=\n\n)", section, re.S)
        answer = re.search(r"\*\*Answer from measurements\.\*\*\s*\n\n(.*?)(?=\n\n[^-\s])", section + "\n\nX", re.S)
        if predict:
            out += ["**Prediction.** " + plain(predict.group(1)), "", "My reasoning: ", ""]
        if answer:
            for q in re.split(r"\n- ", "\n" + answer.group(1).strip()):
                if q.strip():
                    out += ["**Question.** " + plain(q.strip().lstrip("- ")), "", "Answer: ", ""]
        if not predict and not answer:
            out += ["Notes: ", ""]
    return "\n".join(out)


def export(track, dest, reference=False, root=ROOT, check_strays=None, need_git=False):
    """Writes a copy of `track` to dest: stubs in place of the regions (or the
    reference code with reference=True: the tree the grader builds in). The copy takes
    the tracked files that COPY_ALLOWLIST and keep_in_copy admit (without git, those files
    found on disk). A student copy (check_strays, by default when not reference) is refused,
    exit 2, while the repository holds what looks like a course's private files or another
    copy (strays). Without git it takes the allowlisted files on disk, or with need_git
    (lab.py export, unless --without-git) refuses, exit 2."""
    dest = Path(dest).resolve()
    if dest.exists() and any(dest.iterdir()):
        raise SystemExit(f"error: export: {dest} exists and is not empty; give a new folder")
    every, with_git = repo_files(root)
    if not with_git and need_git:
        print(f"error: export: {NO_GIT.format(root=root)}. Export from a git checkout of the repository, or "
              f"pass --without-git to take those files (and check the copy yourself).", file=sys.stderr)
        raise SystemExit(2)
    if not with_git and not _said_no_git:
        print(f"note: export: {NO_GIT.format(root=root)}", file=sys.stderr)
        _said_no_git.append(root)
    files = [f for f in every if allowed(f) and keep_in_copy(f, track)]
    if check_strays if check_strays is not None else not reference:
        refuse_strays(root, files, with_git)
    dest.mkdir(parents=True, exist_ok=True)
    for f in files:
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(root) / f, dest / f)
    (dest / TRACK_FILE).write_text(track + "\n")
    (dest / "README.md").write_text(student_readme(track))
    (dest / ANSWERS_FILE).write_text(answers_template(track, root))
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
    add_doc_assets(dest, root, set(every))
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


def add_doc_assets(dest, root, files):
    """The plots and evidence files that a shipped doc shows or links to (of `files`, the
    repository's tracked files, or without git those on disk)."""
    root = Path(root).resolve()
    for md in list(dest.rglob("*.md")):
        for m, target in doc_links(md):
            if target is None or target.exists():
                continue
            rel = target.relative_to(dest) if str(target).startswith(str(dest)) else None
            if rel and rel.as_posix().startswith(ASSETS) and rel.as_posix() in files and (root / rel).is_file():
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
