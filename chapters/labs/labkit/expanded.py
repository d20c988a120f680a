"""A region as the compiler sees it: its tokens after the compiler's own preprocessor.

The rules of static.py read a region's tokens as written. A macro of an included
header can hide from them what they look for: in a translation unit that includes
CUB, `CUB_NS_QUALIFIER` is `::cub`; libstdc++'s `_GLIBCXX_STD_A` is `std` and its
`_GLIBCXX_END_NAMESPACE_CXX11` is `}`. So the grader and `lab.py check` also read the region after the
preprocessor, with the commands of the build itself:

  - every translation unit of the build (compile_commands.json) that includes the
    region's file is preprocessed with its own compile command: for nvcc, the
    preprocessor runs that `nvcc --dryrun` shows for that command (the host pass and
    one device pass per architecture, each with its own __CUDA_ARCH__); for a host
    compiler, the command with -E in place of -c;
  - the preprocessor's line markers say which file and line each output line comes
    from; the tokens of the region's lines are the region as compiled (the sources
    are not changed to find them);
  - on those tokens: the brackets must balance (`leaves-function`), no library name
    may appear (`library`) and no assembler (`assembler`), and the barrier rule
    (`barrier-in-branch`) reads the function around the region as compiled; and a
    region may not write a brace through a macro (`leaves-function`), even a
    balanced one (a `do { ... } while (0)`).

A pass that cannot run, or a region that no pass shows, is a problem (a string),
which the grader counts as a failure: a region the checker cannot read as compiled
is not trusted.
"""
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

from . import cxx, static
from .regions import region_starts

LAUNCHERS = {"ccache", "sccache", "distcc", "icecc"}
MARKER_LINE = re.compile(r'^#(?:line)?[ \t]*(\d+)[ \t]+"((?:[^"\\\n]|\\.)*)"[^\n]*$', re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
PASS_TIMEOUT = 300
_CACHE = {}


# --- the build's commands ---------------------------------------------------------------------

def commands(build_dir):
    """[{file, directory, argv}] of the build's translation units (compile_commands.json)."""
    path = Path(build_dir) / "compile_commands.json"
    st = path.stat()
    key = ("commands", str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _CACHE:
        _CACHE[key] = _commands(path)
    return [dict(e) for e in _CACHE[key]]


def _commands(path):
    out = []
    for e in json.loads(path.read_text()):
        argv = e.get("arguments") or shlex.split(e["command"])
        directory = Path(e["directory"])
        out.append({"file": os.path.realpath(directory / e["file"]), "directory": str(directory), "argv": argv})
    return out


def _include_dirs(argv, cwd):
    """The folders of the -I, -isystem and -iquote options, in order."""
    dirs, k = [], 0
    while k < len(argv):
        a = argv[k]
        for flag in ("-isystem", "-iquote", "-I"):
            if a == flag and k + 1 < len(argv):
                dirs.append(os.path.join(cwd, argv[k + 1]))
                k += 1
                break
            if a.startswith(flag) and len(a) > len(flag):
                dirs.append(os.path.join(cwd, a[len(flag):]))
                break
        k += 1
    return dirs


def closure(tu, argv, cwd, root, memo=None):
    """The files under `root` that the translation unit `tu` includes, directly or not
    (an over-estimate: every #include line counts, whatever #if it is under). `memo`, a
    dict that one expand() shares across the build's 80-odd translation units, keeps each
    file's #include lines and each name's resolution, which most units repeat."""
    memo = {} if memo is None else memo
    root = os.path.realpath(root)
    dirs = _include_dirs(argv, cwd)
    seen, todo = set(), [os.path.realpath(tu)]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        if ("inc", f) not in memo:
            try:
                memo[("inc", f)] = INCLUDE.findall(Path(f).read_text(errors="replace"))
            except OSError:
                memo[("inc", f)] = []
        for kind, name in memo[("inc", f)]:
            places = ([os.path.dirname(f)] if kind == '"' else []) + dirs
            for d in places:
                key = ("path", d, name)
                if key not in memo:
                    p = os.path.realpath(os.path.join(d, name))
                    memo[key] = p if os.path.isfile(p) else None
                p = memo[key]
                if p:
                    if p.startswith(root + os.sep):
                        todo.append(p)
                    break
    return seen


def _strip(argv, source, cwd):
    """The compile command without its launcher, output, dependency files and source."""
    argv = list(argv)
    while argv and os.path.basename(argv[0]) in LAUNCHERS:
        argv = argv[1:]
    out, k = [argv[0]], 1
    while k < len(argv):
        a = argv[k]
        if a in ("-o", "-MF", "-MT", "-MQ", "--output-file", "--dependency-output"):
            k += 2
            continue
        if a in ("-c", "-MD", "-MMD", "--compile") or (a.startswith("-o") and len(a) > 2 and a[2] != "-") or \
                a.startswith(("-MF", "-MT", "-MQ", "--output-file=")):
            k += 1
            continue
        if not a.startswith("-") and os.path.realpath(os.path.join(cwd, a)) == source:
            k += 1
            continue
        out.append(a)
        k += 1
    return out


def passes(entry):
    """[(label, argv)] of the preprocessor runs of one translation unit; argv writes to
    the placeholder OUTPUT. nvcc: the -E runs of its own --dryrun (host and device), asked
    once per command and folder (the dry run reads no source)."""
    key = ("passes", tuple(entry["argv"]), entry["directory"], entry["file"])
    if key not in _CACHE:
        _CACHE[key] = _passes(entry)
    return _CACHE[key]


def _passes(entry):
    cwd = entry["directory"]
    src = entry["file"]
    rel = next((a for a in entry["argv"] if os.path.realpath(os.path.join(cwd, a)) == src), src)
    argv = _strip(entry["argv"], src, cwd)
    compiler = os.path.basename(argv[0])
    if not compiler.startswith("nvcc"):
        return [("host", argv + ["-E", rel, "-o", "OUTPUT"])]
    r = subprocess.run(argv + ["--dryrun", "-c", rel, "-o", os.devnull], cwd=cwd, capture_output=True, text=True,
                       timeout=PASS_TIMEOUT)
    out = []
    for line in (r.stderr + r.stdout).splitlines():
        if not line.startswith("#$ "):
            continue
        words = shlex.split(line[3:])
        if not words or "-E" not in words or "-o" not in words or re.match(r"^[A-Za-z_]\w*=", words[0]) or \
                any(tool in os.path.basename(words[0]) for tool in ("cicc", "cudafe", "nvcc")):
            continue  # an assignment, or a tool that is not the host preprocessor
        words[words.index("-o") + 1] = "OUTPUT"
        arch = next((w.split("=", 1)[1] for w in words if w.startswith("-D__CUDA_ARCH__=")), None)
        out.append((f"device {arch}" if arch else "host", words))
    if not out:
        raise RuntimeError(f"nvcc --dryrun shows no preprocessor run for {rel}: {(r.stderr or r.stdout)[-300:]}")
    return out


# --- running one pass and reading its line markers ---------------------------------------------

def _unescape(name):
    return re.sub(r"\\(.)", r"\1", name)


def _marker_lines(text, names):
    """The line markers whose file name ends in one of `names` (a string search for the
    name and its closing quote, then the marker pattern on that line), in text order."""
    found = {}
    for n in names:
        at = text.find(n + '"')
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            m = MARKER_LINE.match(text, start)
            if m and m.start(2) <= at < m.end(2):
                found[start] = m
            at = text.find(n + '"', at + 1)
    return [found[k] for k in sorted(found)]


def segments(text, cwd, wanted):
    """{file: [(first line, text)]}: the runs of output lines of each wanted file (real
    paths), numbered as in that file, from the preprocessor's line markers. Only markers
    whose name ends as a wanted file's does are read, each up to the marker after it: a
    unit's output has some 14,000 markers, a region's file a few hundred."""
    out = {f: [] for f in wanted}
    names = {os.path.basename(f) for f in wanted}
    marks = MARKER_LINE.finditer(text) if any('"' in n or "\\" in n for n in names) else _marker_lines(text, names)
    known = {}
    for m in marks:
        name = _unescape(m.group(2))
        if name not in known:
            known[name] = os.path.realpath(os.path.join(cwd, name))
        f = known[name]
        if f not in out:
            continue  # another file (my_scan.cuh beside scan.cuh)
        begin = m.end() + 1  # the line after the marker
        after = MARKER_LINE.search(text, m.end())
        stop = after.start() if after else len(text)
        if begin < stop:
            out[f].append((int(m.group(1)), text[begin:stop]))
    return out


def run_pass(argv, cwd, wanted):
    """segments() of one preprocessor run; raises RuntimeError when it fails."""
    with tempfile.TemporaryDirectory(prefix="lab-pp-") as d:
        target = os.path.join(d, "out.ii")
        cmd = [target if a == "OUTPUT" else a for a in argv]
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=PASS_TIMEOUT)
        if r.returncode != 0 or not os.path.exists(target):
            first = next((x for x in r.stderr.splitlines() if "error" in x), r.stderr.strip()[-300:])
            raise RuntimeError(f"the preprocessor failed: {first[:300]}")
        return segments(Path(target).read_text(errors="replace"), cwd, wanted)


def _digest(files):
    h = hashlib.sha256()
    for f in sorted(files):
        try:
            h.update(f.encode() + Path(f).read_bytes())
        except OSError:
            h.update(f.encode())
    return h.hexdigest()


def expand(root, build_dir, files, jobs=None):
    """{file: [(tu, label, [Token] of the file, numbered as in the file)]} for every
    preprocessor pass of every translation unit that includes one of `files` (paths
    from root), and [problem]. Passes run side by side (jobs), and are cached while
    the files a translation unit includes do not change."""
    root = Path(root).resolve()
    wanted = {os.path.realpath(root / f): f for f in files}
    try:
        entries = commands(build_dir)
    except (OSError, ValueError, KeyError) as e:
        return {}, [f"cannot read the build's compile commands in {build_dir}: {e}"]
    work, memo = [], {}
    for e in entries:
        if not e["file"].startswith(str(root) + os.sep):
            continue
        inc = closure(e["file"], e["argv"], e["directory"], root, memo)
        mine = [w for w in wanted if w in inc]
        if mine:
            work.append((e, mine, _digest(inc)))
    problems = []
    jobs_list = []
    for e, mine, digest in work:
        try:
            for label, argv in passes(e):
                jobs_list.append((e, mine, digest, label, argv))
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as err:
            problems.append(f"{os.path.relpath(e['file'], root)}: {err}")

    def one(job):
        e, mine, digest, label, argv = job
        key = (tuple(argv), e["directory"], digest, tuple(sorted(wanted)))
        if key not in _CACHE:
            _CACHE[key] = run_pass(argv, e["directory"], list(wanted))
        return _CACHE[key]

    out, tokenized = {f: [] for f in files}, {}
    workers = jobs or max(1, min(4, len(os.sched_getaffinity(0))))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [(job, pool.submit(one, job)) for job in jobs_list]
        for (e, mine, _, label, _), fut in futures:
            tu = os.path.relpath(e["file"], root)
            try:
                segs = fut.result()
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as err:
                problems.append(f"{tu} ({label}): {err}")
                continue
            for w in mine:
                key = tuple(segs.get(w, []))  # most units' passes show a header the same way
                if key not in tokenized:
                    tokenized[key] = [cxx.Token(t.kind, t.text, first + t.line - 1)
                                      for first, text in key for t in cxx.tokens(text)]
                out[wanted[w]].append((tu, label, tokenized[key]))
    for f in files:
        if not out[f] and not problems:
            problems.append(f"no translation unit of the build includes {f}")
    return out, problems


# --- the rules on the expanded tokens ----------------------------------------------------------

class _View:
    """What static's hints need of a file: its name and which tokens are the student's."""

    def __init__(self, rel, spans):
        self.rel = rel
        self.spans = spans

    def in_region(self, tok):
        return any(lo <= tok.line <= hi for lo, hi in self.spans)


def _macros_on(line, raw, expanded):
    """The names on a source line that the preprocessor replaced: the macros used there."""
    have = {t.text for t in expanded if t.line == line}
    return list(dict.fromkeys(t.text for t in raw if t.line == line and t.kind == "id" and t.text not in have))


def region_findings(rel, first, body, expanded, where):
    """The rules on one region's expanded tokens (`expanded`: the file's tokens in one pass)."""
    last = first + len(body) - 1
    raw = [cxx.Token(t.kind, t.text, first + t.line - 1) for t in cxx.tokens("\n".join(body))]
    mine = [t for t in expanded if first <= t.line <= last]
    out = []
    # A brace that a macro wrote: more braces after the preprocessor than in the text.
    for brace in ("{", "}"):
        have, want = 0, 0
        lines = sorted({t.line for t in raw + mine})
        for ln in lines:
            have += sum(t.text == brace for t in mine if t.line == ln)
            want += sum(t.text == brace for t in raw if t.line == ln)
            if have > want:
                names = _macros_on(ln, raw, mine)
                what = f"'{names[0]}' is a macro that expands to '{brace}'" if names else \
                    f"a macro on this line expands to '{brace}'"
                out.append(static.Finding("leaves-function", rel, ln,
                                          f"{what} ({where}): a region may not write a brace through a macro"))
                break
    depth = {"{": 0, "(": 0, "[": 0}
    pairs = {"}": "{", ")": "(", "]": "["}
    for t in mine:
        if t.text in depth:
            depth[t.text] += 1
        elif t.text in pairs:
            depth[pairs[t.text]] -= 1
            if depth[pairs[t.text]] < 0:
                out.append(static.Finding("leaves-function", rel, t.line,
                                          f"after the preprocessor ({where}), '{t.text}' closes a bracket opened "
                                          "before the region: the region would reach outside its function"))
                depth[pairs[t.text]] = 0
    for opener, d in depth.items():
        if d > 0:
            out.append(static.Finding("leaves-function", rel, last, f"after the preprocessor ({where}), {d} "
                                      f"'{opener}' left open at the end of the region"))
    for k, t in enumerate(mine):
        name = None
        if t.kind == "id" and t.text in ("asm", "__asm__", "__asm"):
            macros = _macros_on(t.line, raw, mine)
            via = f" through the macro '{macros[0]}'" if macros else ""
            out.append(static.Finding("assembler", rel, t.line, f"'{t.text}'{via} ({where}): inline assembler is not "
                                                                 "allowed in a region"))
        elif t.kind == "id" and static.LIBRARY.match(t.text):
            name = t.text
        elif t.kind == "id" and t.text == "std" and k + 2 < len(mine) and mine[k + 1].text == "::" and \
                mine[k + 2].text in static.STD_LIBRARY:
            name = f"std::{mine[k + 2].text}"
        if name:
            macros = _macros_on(t.line, raw, mine)
            via = f" through the macro '{macros[0]}'" if macros else ""
            out.append(static.Finding("library", rel, t.line, f"'{name}'{via} ({where}): the task must not call "
                                                               "a library"))
    return out


def findings(root, build_dir, task, jobs=None):
    """([Finding], [problem]) of the rules on the task's regions as the build compiles them."""
    starts = region_starts(root, task)
    files = list(dict.fromkeys(f for f, _, _ in starts))
    if not files:
        return [], []
    expanded, problems = expand(root, build_dir, files, jobs)
    out = []
    for f in files:
        spans = [(first, first + len(body) - 1) for g, first, body in starts if g == f]
        view = _View(f, spans)
        for tu, label, toks in expanded.get(f, []):
            where = f"as compiled in {tu}, {label} pass"
            for g, first, body in starts:
                if g == f:
                    out += region_findings(f, first, body, toks, where)
            for name, open_, close in static.functions(toks):
                if not any(view.in_region(t) for t in toks[open_:close]):
                    continue
                taint = static.tainted_names(toks, open_, close)
                ctrl = static.controls(toks, open_ + 1, close)
                for x in static._barrier_hints(view, toks, open_, close, taint, ctrl):  # noqa: SLF001
                    x.message += f" ({where})"
                    out.append(x)
    seen, unique = set(), []
    for x in out:
        if (x.rule, x.line) not in seen:
            seen.add((x.rule, x.line))
            unique.append(x)
    return unique, problems
