"""The leak check: no run of RUN tokens of a track's solutions anywhere in its student copy.

A token here is a name, a number or an operator; brackets, commas and semicolons
do not count (they carry no code of their own).

A solution is the reference body of a region. Both sides are compared in their
normalized token form (labkit/cxx.py): comments and whitespace gone, named constants
replaced by their values (kFullMask -> 4294967295, kWarp -> 32), casts, namespace
qualifiers and literal suffixes dropped, so `0xffffffff` and `kFullMask`, or
`static_cast<int64_t>(blockIdx.x)` and `blockIdx.x`, read the same. Every text file
of the copy is searched: sources outside the regions, docs, handouts and the
generators of images (an image cannot be searched, its generator's input can).
Two kinds of run are not a leak: those that common/ or chapter 01 (the CPU
baselines) also hold, the specification every chapter shares; and, for each task,
those that the code before its first region holds (the track's earlier chapters,
and the earlier steps of its own file) or the functions its regions sit in (the
given code around them, such as a kernel's epilogue after the region's loop): a
student may read every earlier step and the function being written, and a tree's
loop or a grid-stride loop that they share with the answer is the lesson before
this one, not this one's answer.
"""
import re
import sys
from pathlib import Path

LABS = Path(__file__).resolve().parent.parent
ROOT = LABS.parent.parent
sys.path.insert(0, str(LABS))
import tasks as T  # noqa: E402
from labkit import cxx, regions  # noqa: E402

RUN = 12
SPEC = ("common/", "chapters/01_cpu_baseline/")
TEXT_SUFFIXES = {".cu", ".cuh", ".cpp", ".h", ".py", ".md", ".txt", ".sh", ".json", ".csv", ".build", ".ipynb",
                 ".options", ".in", ""}


def repo_constants(root=ROOT):
    texts = [p.read_text() for d in ("common", "chapters") for p in sorted((Path(root) / d).rglob("*"))
             if p.suffix in (".cu", ".cuh", ".h", ".cpp")]
    return cxx.constants(texts)


PUNCTUATION = {"(", ")", "[", "]", "{", "}", ";", ",", "#", "`", "```"}


def significant(norm):
    """The tokens a run counts: names, numbers and operators. Brackets, commas and
    semicolons carry no code of their own, and runs of them (`] ; } ( ) ;`) are in
    every loop; nor does `#pragma unroll` (with or without its count), which stands
    before nearly every loop of a tiled kernel."""
    out, skip = [], 0
    for k, t in enumerate(norm):
        if skip:
            skip -= 1
            continue
        if t == "pragma" and k + 1 < len(norm) and norm[k + 1] == "unroll":
            skip = 2 if k + 2 < len(norm) and norm[k + 2].isdigit() else 1
            continue
        if t not in PUNCTUATION:
            out.append(t)
    return out


def form(text, consts, prose=False):
    return significant(cxx.normalized(cxx.tokens(text, lenient=prose), consts))


def solution_runs(track, root=ROOT, consts=None):
    """{run of RUN normalized tokens: (tasks)} of the track's reference regions, less the
    runs that the specification (common/, chapter 01) holds."""
    consts = consts if consts is not None else repo_constants(root)
    runs = {}
    for task in T.track_tasks(track):
        for body in regions.task_bodies(root, task):
            for g in cxx.ngrams(form("\n".join(body or []), consts), RUN):
                runs[g] = runs.get(g, ()) + ((task.id,) if task.id not in runs.get(g, ()) else ())
    spec = set()
    for p in sorted(Path(root).rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and rel.startswith(SPEC) and p.suffix in (".cu", ".cuh", ".h", ".cpp"):
            spec |= cxx.ngrams(form(p.read_text(), consts), RUN)
    before = {task.id: earlier_runs(track, task, root, consts) for task in T.track_tasks(track)}
    out = {}
    for g, tasks in runs.items():
        left = tuple(t for t in tasks if g not in before[t])
        if left and g not in spec:
            out[g] = left
    return out


def outside_regions(text):
    """A source's text with every region body blanked (the marks stay)."""
    lines = text.split("\n")
    for t, b, e, _ in regions.find_regions(lines):
        for k in range(b + 1, e):
            lines[k] = ""
    return "\n".join(lines)


def earlier_runs(track, task, root, consts):
    """The runs of the code a student reads before the task's first region: the
    track's earlier chapters and the lines above the region in its own file."""
    first = task.regions[0].file
    number = first.split("/")[1][:2]
    texts = []
    for chapter in T.TRACKS[track]:
        if chapter[:2] >= number:
            continue
        for p in sorted((Path(root) / "chapters" / chapter).glob("*")):
            if p.suffix in (".cu", ".cuh", ".cpp", ".h"):
                texts.append(regions.drop_hidden(outside_regions(p.read_text()), {t.id for t in T.TASKS}))
    lines = (Path(root) / first).read_text().split("\n")
    start = next(b for t, b, e, _ in regions.find_regions(lines) if t == task.id)
    texts.append(outside_regions("\n".join(lines[:start])))
    for f in dict.fromkeys(r.file for r in task.regions):
        texts += enclosing_functions(outside_regions((Path(root) / f).read_text()), task.id)
    return set().union(*(cxx.ngrams(form(t, consts), RUN) for t in texts))


def enclosing_functions(text, task_id):
    """The text of each function around a region of task_id (the regions blanked): the code a
    student writes the region into and reads while writing it, such as the epilogue after a
    kernel's main loop. A function starts at the last line above the region that begins in
    column 0 with a name (its signature or its template line) and ends at the first `}` in
    column 0 below it (the layout clang-format gives every chapter source)."""
    lines = text.split("\n")
    out = []
    for t, b, e, _ in regions.find_regions(lines):
        if t != task_id:
            continue
        top = b
        while top > 0 and not re.match(r"[A-Za-z_]", lines[top]):
            top -= 1
        while top > 0 and re.match(r"[A-Za-z_]", lines[top - 1]):  # a signature over several lines
            top -= 1
        end = next((i for i in range(e, len(lines)) if lines[i].startswith("}")), len(lines) - 1)
        out.append("\n".join(lines[top:end + 1]))
    return out


def first_run(toks, runs, consts):
    """(line, run) of the first run of `runs` in the tokens, or None."""
    norm = significant(cxx.normalized(toks, consts))
    for i in range(len(norm) - RUN + 1):
        g = tuple(norm[i:i + RUN])
        if g in runs:
            line = next((toks[j].line for j in range(i, min(len(toks), 2 * i + 400))
                         if tuple(significant(cxx.normalized(toks[j:j + 4 * RUN], consts))[:RUN]) == g), 0)
            return line, g
    return None


def find_leaks(copy, runs, consts):
    """[(file, line, task, text)] of every place in the copy that holds a run."""
    out = []
    for p in sorted(Path(copy).rglob("*")):
        if p.is_file() and p.suffix in TEXT_SUFFIXES and "build" not in p.relative_to(copy).parts[:1]:
            out += leak_in(copy, p, runs, consts)
    return out


def leak_in(copy, p, runs, consts):
    """[(file, line, task, text)] of the first run in one file of the copy, or []."""
    try:
        text = p.read_text()
    except UnicodeDecodeError:
        return []
    prose = p.suffix in (".md", ".txt", ".ipynb", ".json", ".csv", ".py", ".sh", "")
    readings = [cxx.tokens(text, lenient=prose)]
    if not prose:  # the code, then its comments read as code too (line comments, then block comments)
        no_blocks = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        readings.append(cxx.tokens(re.sub(r"//", " ", no_blocks), lenient=True))
        readings.append(cxx.tokens(re.sub(r"//|/\*|\*/", " ", text), lenient=True))
    for toks in readings:
        hit = first_run(toks, runs, consts)
        if hit:  # one report per file is enough to fail it
            return [(p.relative_to(copy).as_posix(), hit[0], ",".join(runs[hit[1]]), " ".join(hit[1]))]
    return []
