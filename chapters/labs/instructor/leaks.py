"""The leak check: no run of RUN tokens of a track's solutions anywhere in its student copy.

A solution is the reference body of a region. Both sides are compared in their
normalized token form (labkit/cxx.py): comments and whitespace gone, named constants
replaced by their values (kFullMask -> 4294967295, kWarp -> 32), casts, namespace
qualifiers and literal suffixes dropped, so `0xffffffff` and `kFullMask`, or
`static_cast<int64_t>(blockIdx.x)` and `blockIdx.x`, read the same. Every text file
of the copy is searched: sources outside the regions, docs, handouts and the
generators of images (an image cannot be searched, its generator's input can).
Runs that common/ or chapter 01 (the CPU baselines) also hold are the
specification every chapter shares, not a leak.
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


def form(text, consts, prose=False):
    return cxx.normalized(cxx.tokens(text, lenient=prose), consts)


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
    return {g: t for g, t in runs.items() if g not in spec}


def first_run(toks, runs, consts):
    """(line, run) of the first run of `runs` in the tokens, or None."""
    norm = cxx.normalized(toks, consts)
    for i in range(len(norm) - RUN + 1):
        g = tuple(norm[i:i + RUN])
        if g in runs:
            line = next((toks[j].line for j in range(i, min(len(toks), i + 400))
                         if tuple(cxx.normalized(toks[j:j + 3 * RUN], consts)[:RUN]) == g), 0)
            return line, g
    return None


def find_leaks(copy, runs, consts):
    """[(file, line, task, text)] of every place in the copy that holds a run."""
    out = []
    for p in sorted(Path(copy).rglob("*")):
        if not p.is_file() or p.suffix not in TEXT_SUFFIXES or "build" in p.relative_to(copy).parts[:1]:
            continue
        try:
            text = p.read_text()
        except UnicodeDecodeError:
            continue
        prose = p.suffix in (".md", ".txt", ".ipynb", ".json", ".csv", ".py", ".sh", "")
        readings = [cxx.tokens(text, lenient=prose)]
        if not prose:  # the code, then its comments read as code too (line comments, then block comments)
            no_blocks = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
            readings.append(cxx.tokens(re.sub(r"//", " ", no_blocks), lenient=True))
            readings.append(cxx.tokens(re.sub(r"//|/\*|\*/", " ", text), lenient=True))
        for toks in readings:
            hit = first_run(toks, runs, consts)
            if hit:
                out.append((p.relative_to(copy).as_posix(), hit[0], ",".join(runs[hit[1]]), " ".join(hit[1])))
                break  # one report per file is enough to fail it
    return out
