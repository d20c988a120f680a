#!/usr/bin/env python3
"""Every hint compiles as written (meson test 'labs-hints').

The hints a student reads are the `hint` of each Region in chapters/labs/tasks.py (the
stub's `Hint:` comment) and the **Hint.** paragraph of each task in its track's handout,
docs/labs/<track>.md. Each code span in backticks of a hint (`sw::kFullMask`,
`__shfl_up_sync`, `cuda::atomic_ref<Count, cuda::thread_scope_device>`, `HistCount{1}`,
`*word`, `gridDim.x * kBlock`) is compiled where the student would write it: a probe

    (void)sizeof(<span>);

goes at the top of the region, in the region's file as the student copy has it (the
track's regions as their stubs, the hidden steps left out), and nvcc compiles that file
(a header through a translation unit that includes it alone) for sm_90 with
-fdevice-syntax-only, stopping after its host and device front ends (SENTINEL). A probe
passes when nvcc reports no error on its line, or only "cannot determine which instance
of overloaded function" (the name is found, and is an overloaded function such as
__shfl_sync). In a span with an operator, a single lowercase
letter is the hint's own variable (`in[r * cols + c]`): it becomes a parameter of a generic
lambda around the probe, so the names around it are still looked up. A bare keyword
(`if`) or number is not probed.

A region's hint in tasks.py must compile in that region; a handout's hint, which speaks of
every region of its task, in at least one of them. A hint may not hold code outside
backticks either (a `__name`, `ns::name`, `kName`, `camelCase`, `snake_case`, `name.x`
or `name()` word outside backticks fails), so that no identifier escapes the check.

--plant checks the check: hints planted good and bad (PLANTED, issue 47's `kFullMask` among
them) must be judged as expected.

Exit 0 every span resolves, 1 one does not, 77 no nvcc.
    python3 chapters/labs/instructor/check_hints.py [--plant] [--nvcc PATH] [--verbose]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

INSTRUCTOR = Path(__file__).resolve().parent
LABS = INSTRUCTOR.parent
ROOT = LABS.parent.parent
sys.path.insert(0, str(LABS))
import tasks as T  # noqa: E402
from labkit import regions  # noqa: E402

SPAN = re.compile(r"`([^`\n]+)`")
# Code outside backticks: what a hint must put in backticks so that it is checked.
LOOSE_CODE = re.compile(r"(?<![\w`])(__\w+|\w+::\w+|k[A-Z]\w*|[a-z]+[A-Z]\w*|[A-Za-z]+_\w+|[A-Za-z]\w*\.[xyz]\b"
                        r"|\w+\(\))")
# Words a hint may quote that are no name to look up: keywords and CUDA's qualifiers.
KEYWORDS = {"if", "else", "for", "while", "do", "return", "break", "continue", "switch", "case", "goto",
            "const", "volatile", "static", "inline", "auto", "void", "int", "unsigned", "float", "double",
            "bool", "char", "long", "short", "true", "false", "nullptr", "sizeof", "template", "typename",
            "using", "namespace", "struct", "class", "extern", "constexpr", "__shared__", "__device__",
            "__global__", "__host__", "__restrict__", "__forceinline__", "#pragma unroll"}
IDENT = re.compile(r"[A-Za-z_]\w*")
OPERATOR = re.compile(r"[-+*/%&|^!=?\[\]]|(?<!<)<(?!<)|(?<!>)>(?!>)")
DIAGNOSTIC = re.compile(r"^(?P<file>[^\s(]+)\((?P<line>\d+)\): (?P<kind>(?:catastrophic )?error|warning|remark)"
                        r"\b[^:]*: (?P<msg>.*)$")
INSTANTIATED_AT = re.compile(r"at line (?P<line>\d+) of (?P<file>\S+)")
FOUND_FUNCTION = "cannot determine which instance of overloaded function"


def plain_spans(text):
    """The code spans of a hint that are probed (not bare keywords or numbers)."""
    out = []
    for s in SPAN.findall(text):
        s = s.strip()
        if s in KEYWORDS or re.fullmatch(r"[\d.]+[uUfFlL]*", s):
            continue
        call = re.fullmatch(r"([\w:]+)\(\)", s)  # `__syncthreads()`: its name (a void call has no sizeof)
        out.append(call.group(1) if call else s)
    return out


def loose_code(text):
    """Code-looking words of a hint outside its backticks."""
    return LOOSE_CODE.findall(SPAN.sub(" ", text))


def placeholders(span):
    """The hint's own variables in an expression span: single lowercase letters that are
    not a member (after . or ->) or a qualified name's part."""
    if not OPERATOR.search(re.sub(r"<[^<>]*>", "", span)):
        return []
    out = []
    for m in IDENT.finditer(span):
        before = span[:m.start()].rstrip()
        after = span[m.end():].lstrip()
        if len(m.group()) == 1 and m.group().islower() and not before.endswith((".", "->", "::")) \
                and not after.startswith("::") and m.group() not in out:
            out.append(m.group())
    return out


def probe_line(span):
    """The probe of one span: a lambda of its own (nvcc reports an undefined name once per
    function), its placeholders as generic parameters."""
    names = ", ".join("auto " + n for n in placeholders(span))
    return f"(void)[&]({names}) {{ (void)sizeof({span}); }};"


def task_places(task):
    """[(file, k)] of the task's regions, k its index among the task's regions of that file."""
    out, seen = [], {}
    for r in task.regions:
        k = seen.get(r.file, 0)
        seen[r.file] = k + 1
        out.append((r.file, k))
    return out


def tasks_hints():
    """[(where, task, [(file, k)], hint text)] of tasks.py: each region's hint, in its region."""
    out = []
    for task in T.TASKS:
        for n, (r, place) in enumerate(zip(task.regions, task_places(task)), 1):
            out.append((f"chapters/labs/tasks.py, {task.id} region {n}", task, [place], r.hint))
    return out


def handout_hints(root=ROOT):
    """[(where, task, places, hint text)] of the handouts' **Hint.** paragraphs, each with
    every region of its task."""
    out = []
    for track in T.TRACKS:
        path = Path(root) / "docs" / "labs" / f"{track}.md"
        if track == "standin" or not path.exists():
            continue
        task = None
        lines = path.read_text().split("\n")
        for i, line in enumerate(lines):
            m = re.match(r"^## Task \d+ · `([a-z0-9-]+)`", line)
            if m:
                task = T.task(m.group(1))
                continue
            if line.startswith("**Hint.**") and task is not None:
                para = []
                for more in lines[i:]:
                    if not more.strip():
                        break
                    para.append(more)
                out.append((f"docs/labs/{track}.md:{i + 1}, {task.id}", task, task_places(task),
                            " ".join(para)[len("**Hint.**"):].strip()))
    return out


def student_text(root, file, track):
    """A region file as the track's student copy has it: the track's regions as stubs,
    its hidden steps left out."""
    text = (Path(root) / file).read_text()
    ids = {t.id for t in T.track_tasks(track)}
    text = regions.drop_hidden(text, ids)
    lines = text.split("\n")
    for task in T.track_tasks(track):
        specs = [r for r in task.regions if r.file == file]
        found = [r for r in regions.find_regions(lines) if r[0] == task.id]
        for (t, b, e, indent), spec in reversed(list(zip(found, specs))):
            lines[b + 1:e] = regions.stub_body(task, spec, indent)
    return lines


def probe_file(root, file, track, probes):
    """Writes the file with probes {(task id, k): [(probe id, span)]} at the top of those
    regions; returns (lines, {line number (1-based): probe id})."""
    lines = student_text(root, file, track)
    where = {}
    found = regions.find_regions(lines)
    per_task = {}
    inserts = []
    for t, b, e, indent in found:
        k = per_task.get(t, 0)
        per_task[t] = k + 1
        if (t, k) in probes:
            inserts.append((b, indent, probes[(t, k)]))
    for b, indent, items in sorted(inserts, reverse=True):
        lines[b + 1:b + 1] = [f"{indent}{probe_line(span)}  // probe {pid}" for pid, span in items]
    for n, line in enumerate(lines, 1):
        m = re.search(r"// probe (\d+)$", line)
        if m:
            where[n] = int(m.group(1))
    return lines, where


def diagnostics(out):
    """[(header match, following lines)] of nvcc's front-end diagnostics."""
    found = []
    for line in out.splitlines():
        m = DIAGNOSTIC.match(line)
        if m:
            found.append((m, []))
        elif found:
            found[-1][1].append(line)
    return found


# The end of every probed translation unit: an error that only the device pass meets, so
# that nvcc stops once both front ends (host and device) have read the whole file, before
# the host compiler and ptxas (a third of the time, and nothing they say is about names).
SENTINEL = "labs-hints: the end of the probed file"
SENTINEL_LINES = ["#ifdef __CUDA_ARCH__", f'static_assert(sizeof(char) == 0, "{SENTINEL}");', "#endif", ""]


def compile_probes(root, file, lines, nvcc, tmp):
    """nvcc's errors [(line, message)] in the probed file (line None: elsewhere)."""
    src = Path(root) / file
    d = Path(tempfile.mkdtemp(dir=tmp))
    probed = d / src.name
    if src.suffix in (".cu", ".cpp"):
        tu = probed
        probed.write_text("\n".join(lines + [""] + SENTINEL_LINES))
    else:
        tu = d / "probe_tu.cu"
        probed.write_text("\n".join(lines))
        tu.write_text("\n".join([f'#include "{src.name}"'] + SENTINEL_LINES))
    cmd = [nvcc, "-x", "cu", "--std=c++17", "-gencode=arch=compute_90,code=sm_90", "--expt-relaxed-constexpr",
           "-fdevice-syntax-only", f"-I{src.parent}", f"-I{root}", f"-I{Path(root) / 'chapters'}",
           "-c", str(tu), "-o", os.devnull]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=d)
    out = r.stdout + r.stderr
    errors, reached = [], False
    for first, rest in diagnostics(out):
        if "error" not in first["kind"]:
            continue
        if SENTINEL in first["msg"]:
            reached = True
            continue
        line = int(first["line"]) if (d / first["file"]).resolve() == probed.resolve() else None
        # An error inside another header, met while instantiating what a line of ours names:
        # that line's (the outermost "at line N of" the probed file).
        for m in INSTANTIATED_AT.finditer("\n".join(rest)):
            if (d / m["file"]).resolve() == probed.resolve():
                line = int(m["line"])
        errors.append((line, first["msg"].strip()))
    if not errors and not reached:  # neither an error of ours nor the device pass's end: say what nvcc said
        errors.append((None, out.strip().splitlines()[-1] if out.strip() else f"nvcc exit {r.returncode}, "
                                                                               f"the device pass did not end"))
    return errors


def resolve_file(root, file, track, per_region, nvcc, tmp):
    """{probe id: None (resolves) or why} for one file's probes, and the errors that are on
    no probe's line. One compile: each probe is a lambda of its own, and nvcc reports an
    undefined name once per function, so every probe's errors are its own."""
    lines, where = probe_file(root, file, track, {key: list(items.items()) for key, items in per_region.items()})
    errors = compile_probes(root, file, lines, nvcc, tmp)
    by_probe, elsewhere = {}, []
    for line, msg in errors:
        if line in where:
            by_probe.setdefault(where[line], []).append(msg)
        else:
            elsewhere.append(f"line {line}: {msg}" if line else msg)
    result = {}
    for items in per_region.values():
        for p in items:
            bad = [m for m in by_probe.get(p, []) if FOUND_FUNCTION not in m]
            result[p] = "; ".join(bad) if bad else ("the file does not compile apart from its probes"
                                                    if elsewhere else None)
    return result, elsewhere


def check(root=ROOT, nvcc="nvcc", verbose=False, hints=None):
    """[(where, span, why)] of the spans that do not resolve (and of code outside
    backticks), and the count of spans probed."""
    hints = hints if hints is not None else tasks_hints() + handout_hints(root)
    problems = []
    for where, task, places, text in hints:
        for word in loose_code(text):
            problems.append((where, word, "code outside backticks: put it in backticks so that it is checked"))
    probes = {}  # (file, track) -> {(task id, k): {probe id: span}}, one probe per span and region
    ids_of = {}  # (file, task id, k, span) -> probe id
    spans = []  # (hint index, span, [(file, probe id)])
    for h, (where, task, places, text) in enumerate(hints):
        for span in plain_spans(text):
            ids = []
            for file, k in places:
                key = (file, task.id, k, span)
                if key not in ids_of:
                    ids_of[key] = len(ids_of) + 1
                    probes.setdefault((file, task.track), {}).setdefault((task.id, k), {})[ids_of[key]] = span
                ids.append((file, ids_of[key]))
            spans.append((h, span, ids))
    tmp = Path(tempfile.mkdtemp(prefix="labs-hints-"))
    result = {}

    def run(item):
        (file, track), per_region = item
        return file, resolve_file(root, file, track, per_region, nvcc, tmp)

    try:
        with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
            for file, (got, elsewhere) in pool.map(run, sorted(probes.items())):
                if verbose:
                    print(f"compiled {file}: {len(got)} probes, {sum(v is not None for v in got.values())} fail",
                          flush=True)
                for msg in elsewhere[:3]:
                    problems.append((file, "", f"does not compile apart from its probes: {msg}"))
                result.update(got)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for h, span, ids in spans:
        where = hints[h][0]
        if any(result.get(p, "not compiled") is None for _, p in ids):
            continue
        why = "; ".join(f"{file}: {result.get(p) or 'not compiled'}" for file, p in ids)
        place = "its region" if len(ids) == 1 else "any region of its task"
        problems.append((where, span, f"does not resolve in {place} ({why})"))
    return problems, len(spans)


# --plant: hints that must fail and hints that must pass, so that the check is seen to work.
# (task, handout-style (every region of the task) or the first region only, hint, spans that must fail)
PLANTED = [
    ("warp-scan", False, "with `__shfl_up_sync` and the full mask `kFullMask`", {"kFullMask"}),  # issue 47's hint
    ("warp-scan", False, "with `__shfl_up_sync` and the full mask `sw::kFullMask`", set()),
    ("warp-scan", False, "with __shfl_up_sync and the full mask sw::kFullMask", {"__shfl_up_sync", "sw::kFullMask"}),
    ("lookback", True, "`cuda::atomic_ref<Count, cuda::thread_scope_device>` on `*word`", set()),
    ("lookback", True, "`cuda::atomic_ref<Count, cuda::thread_scope>` on `*tile_word`",
     {"cuda::atomic_ref<Count, cuda::thread_scope>", "*tile_word"}),
    ("naive", False, "element (r, c) is `in[r * cols + c]`; `__syncthreads()`", set()),
    ("naive", False, "element (r, c) is `in[r * colz + c]`; `__syncthread()`", {"in[r * colz + c]", "__syncthread"}),
]


def planted(root, nvcc, verbose):
    """Problems of the check itself: a planted hint it let through, or a good one it failed."""
    hints, want = [], {}
    for k, (task_id, handout, text, bad) in enumerate(PLANTED):
        task = T.task(task_id)
        places = task_places(task) if handout else task_places(task)[:1]
        hints.append((f"planted {k + 1}", task, places, text))
        want[f"planted {k + 1}"] = bad
    problems, n = check(root, nvcc, verbose, hints)
    got = {}
    for where, span, why in problems:
        got.setdefault(where, set()).add(span)
        if verbose:
            print(f"      {where}: `{span}` {why}")
    out = []
    for where, bad in want.items():
        if got.get(where, set()) != bad:
            out.append(f"{where} ({PLANTED[int(where.split()[1]) - 1][2]}): flagged {sorted(got.get(where, set()))}, "
                       f"expected {sorted(bad)}")
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nvcc", default=os.environ.get("NVCC", "nvcc"))
    p.add_argument("--root", default=str(ROOT))
    p.add_argument("--plant", action="store_true", help="check the check: planted hints, good and bad")
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args(argv)
    nvcc = shutil.which(a.nvcc) or (a.nvcc if Path(a.nvcc).is_file() else None)
    if not nvcc:
        print(f"skipped: no nvcc ({a.nvcc})")
        return 77
    if a.plant:
        wrong = planted(Path(a.root), nvcc, a.verbose)
        for line in wrong:
            print(f"FAIL  {line}")
        print(f"{len(PLANTED)} planted hints, {len(wrong)} judged wrongly")
        return 1 if wrong else 0
    problems, n = check(Path(a.root), nvcc, a.verbose)
    for where, span, why in problems:
        print(f"FAIL  {where}: `{span}` {why}")
    print(f"{n} code spans of the hints probed, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
