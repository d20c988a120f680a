#!/usr/bin/env python3
"""Host tests of issue 47's defences, without a GPU (meson test 'labs-rules').

  bounds      the shared-memory bounds pass evaluates a region's locals for every
              iteration of the loops around them: chapter 03's interleaved-strided
              tree (index = 2 * stride * tid, guarded by index < kBlock) gets no
              finding; the same tree reading one element past the array still does,
              and a local of a sibling block or one assigned again is not taken as
              the access's value
  guards      the global-store hint (store-without-guard) takes a guard through a name
              assigned a comparison (const bool inside = r < rows && c < cols; if
              (inside) ..., and if (!inside) return;) as the comparison itself: chapter
              09's write-coalesced kernel so written gets no finding; the same name
              assigned no comparison (a cast's angle brackets are none), or no guard
              at all, is still flagged
  agreement   a run whose exit code disagrees with its printed records (exit 1 and
              every check ok; exit 0 and a check or result row failed; a summary
              that counts other failures than those printed) is FAIL
  audit       the symbol audit allows only what the reference defines (and what is
              local to the region's function, the optimizer's clones and out-of-line
              copies of the reference's functions, weak std:: and sw:: instances):
              puts, printf, fwrite and malloc defined at namespace scope, a constructor, an
              atexit handler and a static object at namespace scope are each named, and
              calls to _Exit and to exit (a passing run's records printed, then
              exit(0)); correct variants of the stand-in and a clone of a clone of its
              function are not; on the scan track, a puts defined at namespace scope
              in scan_lookback.cuh is named
  as compiled the rules on a region after the compiler's own preprocessor, on the
              stand-in (g++), the scan track and the dot-top2 track (nvcc): a library
              reached through libstdc++'s _GLIBCXX_STD_A (stand-in) and through CUB's
              CUB_NS_QUALIFIER (chapter 12's kernel, whose file includes CUB), a
              function left through _GLIBCXX_END_NAMESPACE_CXX11, a balanced macro of
              braces, and a barrier under a condition on __cudaGet_threadIdx() are each
              found after the preprocessor and not before; the references get no
              finding; a raw string that would forge a line marker is rejected as
              written; on the scan track std::sort in the warp scan does not compile
              (no library is in reach of a kernel there)
  segments    the preprocessor output's runs of a region's file, found by a search for
              its name, are those a read of every line marker finds: with a file
              whose name ends the same way (my_scan.cuh), `#line` and `# N` markers,
              a name that a marker escapes, and a file the output does not show
  fortified   a plant that defines a C library function (REWRITING_PUTS) compiles where
              glibc's stdio is fortified, as on the GPU machines; a printf plant, the
              control, does not
  catalogue   every issue-47 exploit of exploits.py is rejected by the host stages its
              entry names: the rules (as written or as compiled), and without the rules
              the symbol audit, each with the line the entry expects; the stand-in
              built with `rewrites-its-output` (a filter on stdout that turns every
              failing record into a passing one) prints only passing checks, exits 1,
              and its verdict is FAIL
  boundary    the verdict from a process that holds no student code (check.run_verdict):
              the stand-in built with each `-boundary` exploit of exploits.py (a forged
              passing run: records, summary and exit code agree) passes its own verdict,
              and fails across the boundary, where the reference stand-in judges what it
              dumped; the reference passes both ways; a dump that lists other checks than
              the reference's, or a reference run that did not end, fails (check.across)

The copies (the stand-in's, and the scan and dot-top2 tracks' built for PTX without
device optimisation) compile through ccache where it is installed: about a minute cold.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INSTRUCTOR = Path(__file__).resolve().parent
LABS = INSTRUCTOR.parent
ROOT = LABS.parent.parent
sys.path.insert(0, str(LABS))
sys.path.insert(0, str(INSTRUCTOR))
import tasks as T  # noqa: E402
from labkit import check, expanded, regions, static  # noqa: E402
from labkit.runner import Run, run  # noqa: E402

import audit as A  # noqa: E402
import exploits as X  # noqa: E402
import selftest as S  # noqa: E402
from export import export  # noqa: E402

failures = []
# The scan copy is built as the tools' own tests build copies (test_labs.py): PTX for one
# target, no optimisation of device code.
from test_labs import COPY_SETUP as SCAN_SETUP  # noqa: E402
STANDIN_SETUP = ["-Dgpu_arch=portable"]
STANDIN_TU = "chapters/labs/standin/standin.cpp"


def expect(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


def texts(findings):
    return [f.text() for f in findings]


def timed(fn, *args):
    t0 = time.monotonic()
    out = fn(*args)
    print(f"      ({fn.__name__}: {time.monotonic() - t0:.1f} s)", flush=True)
    return out


def rejects(findings):
    return [f for f in findings if f.severity == "reject"]


def short(problems):
    return [p[:160] for p in problems[:4]] if problems else problems


def plant(copy, task, old, new, name="planted"):
    """Replaces `old` by `new` in the task's region of the copy (selftest.apply)."""
    from argparse import Namespace  # noqa: PLC0415
    file = next(r.file for r in task.regions if old in (Path(copy) / r.file).read_text())
    S.apply(copy, task, Namespace(name=name, file=file, old=old, new=new))


def saved_files(copy, task):
    return {r.file: (Path(copy) / r.file).read_text() for r in task.regions}


def restore(copy, saved):
    for f, text in saved.items():
        (Path(copy) / f).write_text(text)


def ccache_env(tmp):
    return dict(os.environ, CCACHE_BASEDIR=str(tmp), CCACHE_NOHASHDIR="1")


def setup_copy(track, tmp, options):
    copy = export(track, tmp / track, reference=True)
    r = subprocess.run(["meson", "setup", "build"] + options, cwd=copy, capture_output=True, text=True,
                       env=ccache_env(tmp))
    if r.returncode != 0:
        raise SystemExit(f"meson setup of the {track} copy failed:\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}")
    return copy


def compile_object(copy, tu, out, tmp):
    """Compiles one translation unit of the copy's build, with the build's own command
    (its launcher, ccache, kept), into `out`."""
    import json  # noqa: PLC0415
    import shlex  # noqa: PLC0415
    src = os.path.realpath(copy / tu)
    entry = next(e for e in json.loads((copy / "build/compile_commands.json").read_text())
                 if os.path.realpath(os.path.join(e["directory"], e["file"])) == src)
    argv, k, keep = shlex.split(entry["command"]), 0, []
    while k < len(argv):
        a = argv[k]
        if a in ("-o", "-MF", "-MT", "-MQ"):
            k += 2
            continue
        if a not in ("-c", "-MD", "-MMD") and os.path.realpath(os.path.join(entry["directory"], a)) != src:
            keep.append(a)
        k += 1
    r = subprocess.run(keep + ["-c", src, "-o", str(out)], cwd=entry["directory"], capture_output=True, text=True,
                       env=ccache_env(copy.parent))
    return r.returncode == 0, (r.stderr or r.stdout)[-2000:]


def obj_path(tmp, label, name):
    """tmp/objects/<label>/<name>: the audit matches a submission's object with the
    reference's by name."""
    d = tmp / "objects" / label
    d.mkdir(parents=True, exist_ok=True)
    return d / name


# --- bounds ------------------------------------------------------------------------------------

STRIDED = ["#pragma unroll 1",
           "  for (int stride = 1; stride < kBlock; stride *= 2) {",
           "    const int index = 2 * stride * tid;",
           "    if (index < kBlock) s[index] += s[index + stride];",
           "    __syncthreads();",
           "  }"]


def test_bounds(tmp):
    ref = export("reduce", tmp / "bounds", reference=True)
    task = T.task("shared-tree")
    f = task.regions[0].file
    original = (ref / f).read_text()
    cases = [
        ("chapter 03's interleaved-strided tree (index = 2 * stride * tid, if (index < kBlock))", STRIDED, None),
        ("the same tree guarded by index <= kBlock (reads s[256])",
         [x.replace("index < kBlock", "index <= kBlock") for x in STRIDED], "s[256]"),
        ("the same tree reading s[index + 2 * stride] (one past the end)",
         [x.replace("s[index + stride]", "s[index + 2 * stride]") for x in STRIDED], "s[256]"),
        ("a local declared in a sibling loop is not the access's (no finding)",
         ["  for (int k = 0; k < 1; ++k) {", "    const int index = 999;", "    (void)index;", "  }"] + STRIDED, None),
        ("a local assigned again is not evaluated (no finding, not a false one)",
         ["  int index = 0;", "  index += tid;", "  if (tid == 0) s[index + 1] += 0.0f;", "  __syncthreads();"] +
         STRIDED[:1] + ["  for (int stride = kBlock / 2; stride > 0; stride /= 2) {",
                        "    if (tid < stride) s[tid] += s[tid + stride];", "    __syncthreads();", "  }"], None),
    ]
    for what, body, want in cases:
        regions.replace_bodies(ref / f, task.id, [body])
        found = [x for x in static.analyse(ref, task) if x.rule == "shared-out-of-bounds"]
        if want is None:
            expect(not found, f"bounds: {what}: no shared-out-of-bounds finding {texts(found)}")
        else:
            expect(any(want in x.message for x in found), f"bounds: {what}: flagged {texts(found)}")
        (ref / f).write_text(original)
    shutil.rmtree(ref)


def test_guards(tmp):
    ref = export("transpose", tmp / "guards", reference=True)
    task = T.task("naive")
    f = task.regions[0].file
    original = (ref / f).read_text()
    lines = original.split("\n")
    b, e = [(b, e) for t, b, e, _ in regions.find_regions(lines) if t == task.id][0]
    read = lines[b + 1:e]  # the read-coalesced kernel as the reference has it
    head = ["  const int64_t c = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;",
            "  const int64_t r = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;"]
    store = "out[c * rows + r] = in[r * cols + c];"
    cases = [
        ("a guard through a named comparison", ["  const bool inside = r < rows && c < cols;",
                                                f"  if (inside) {store}"], False),
        ("an early return through a named comparison", ["  const bool outside = r >= rows || c >= cols;",
                                                        "  if (outside) return;", f"  {store}"], False),
        ("the name assigned no comparison", ["  const bool inside = static_cast<bool>(rows);",
                                             f"  if (inside) {store}"], True),
        ("no guard at all", [f"  {store}"], True),
    ]
    for what, body, flagged in cases:
        regions.replace_bodies(ref / f, task.id, [read, head + body])
        found = [x for x in static.analyse(ref, task) if x.rule == "store-without-guard"]
        expect(bool(found) == flagged,
               f"guards: {what}: {'flagged' if flagged else 'no store-without-guard finding'} {texts(found)}")
        (ref / f).write_text(original)
    shutil.rmtree(ref)


# --- the exit code and the printed records -------------------------------------------------------

def fake_run(code, checks, summary_failed=None, results=()):
    lines = [f'{{"record":"check","what":"{w}","ok":{"true" if ok else "false"},"detail":""}}' for w, ok in checks]
    lines += [f'{{"record":"result","variant":"sum","ok":{"true" if ok else "false"}}}' for ok in results]
    failed = sum(not ok for _, ok in checks) if summary_failed is None else summary_failed
    lines.append(f'{{"record":"summary","checks":{len(checks)},"failed":{failed}}}')
    return Run(cmd=[], code=code, out="\n".join(lines)).parse()


def test_agreement_unit():
    steps = ["sum"]
    cases = [
        ("exit 1, every printed check ok", fake_run(1, [("sum n=1", True), ("sum n=2", True)], 0), "FAIL", "disagree"),
        ("exit 0, another step's printed check failed", fake_run(0, [("sum n=1", True), ("other", False)], 0),
         "FAIL", "disagree"),
        ("exit 0, a printed result row not ok", fake_run(0, [("sum n=1", True)], 0, results=[False]), "FAIL",
         "disagree"),
        ("exit 1, the summary counts 3 failures, 1 printed",
         fake_run(1, [("sum n=1", True), ("other", False)], 3), "FAIL", "summary counts 3"),
        ("exit 1, its own check failed (a plain failure)", fake_run(1, [("sum n=1", False)]), "FAIL", "FAIL sum n=1"),
        ("exit 1, another step failed beside its own passing one", fake_run(1, [("sum n=1", True), ("other", False)]),
         "PASS", ""),
        ("exit 0, every check ok", fake_run(0, [("sum n=1", True)]), "PASS", ""),
    ]
    for what, r, want, says in cases:
        st, _, _, lines = check.verdict(r, steps)
        expect(st == want and says in " ".join(lines), f"verdict, {what}: {want} ({st}: {lines})")


# --- the symbol audit ----------------------------------------------------------------------------

def audit_of(copy, tmp, task, new, name, ref_obj, own):
    saved = saved_files(copy, task)
    plant(copy, task, X.S_END, new, name)
    out = obj_path(tmp, name, ref_obj.name)
    ok, log = compile_object(copy, STANDIN_TU, out, tmp)
    restore(copy, saved)
    if not ok:
        return None, log
    return A.audit([out], [ref_obj], own), ""


def test_audit_standin(copy, tmp):
    task = T.task("standin-sum")
    ref_obj = obj_path(tmp, "reference", "standin.o")
    ok, log = compile_object(copy, STANDIN_TU, ref_obj, tmp)
    expect(ok, "audit: the stand-in's reference compiles" + ("" if ok else "\n" + log))
    if not ok:
        return
    own = A.own_functions([(copy / STANDIN_TU).read_text()])
    expect(A.audit([ref_obj], [ref_obj], own) == [], "audit: the reference against itself has no problem")
    bad = [
        ("puts defined at namespace scope", X.escape(X.REWRITING_PUTS), "defines puts"),
        ("printf defined at namespace scope",
         X.escape('extern "C" int printf(const char*, ...) { return 0; }'), "defines printf"),
        ("fwrite defined at namespace scope",
         X.escape('extern "C" size_t fwrite(const void*, size_t, size_t n, std::FILE*) { return n; }'),
         "defines fwrite"),
        ("malloc defined at namespace scope",
         X.escape('extern "C" void* malloc(size_t n) noexcept { static char pool[1 << 20]; static size_t used = 0;\n'
                  '  used += (n + 15) & ~size_t{15}; return pool + used - ((n + 15) & ~size_t{15}); }'),
         "defines malloc"),
        ("a constructor function", X.escape("__attribute__((constructor)) static void early_() { std::fflush(stdout); }"),
         "early_()"),
        ("an atexit handler at namespace scope",
         X.escape("static void handler_() { std::fflush(stdout); }\n"
                  "static const int registered_ = std::atexit(handler_);"), "handler_()"),
        ("a static object with a constructor at namespace scope",
         X.escape("struct Noisy_ { Noisy_() { std::fflush(stdout); } };\nstatic Noisy_ noisy_;"),
         "defines _GLOBAL__sub_I"),
        ("a call that ends the process with its own exit code", "  if (n == 0) std::_Exit(0);\n  return s;\n",
         "calls _Exit"),
        ("a passing run's records printed, then exit(0), inside the function (a verdict alone would pass it)",
         f"  std::fputs({X.PASS_RECORDS}, stdout);\n  std::fflush(stdout);\n  std::exit(0);\n  return s;\n",
         "calls exit"),
    ]
    for what, new, says in bad:
        problems, log = audit_of(copy, tmp, task, new, "bad", ref_obj, own)
        expect(problems is not None and any(says in p for p in problems),
               f"audit: {what} is named ('{says}') {short(problems) if problems is not None else log}")
        if says == "calls _Exit":  # the call changes main's inlining: sw::summarize gets a weak instance
            expect(problems is not None and len(problems) == 1,
                   f"audit: ... and nothing else: not the harness's inline sw::summarize, which the "
                   f"optimizer now keeps out of line {short(problems)}")
    good = [
        ("another loop: a lambda, a local static, std::min",
         "  static const int64_t kChunk = 4;\n"
         "  auto add = [&](int64_t lo, int64_t hi) { int64_t t = 0; for (int64_t i = lo; i < hi; ++i) t += x[i];"
         " return t; };\n"
         "  int64_t u = 0;\n"
         "  for (int64_t i = 0; i < n; i += kChunk) u += add(i, std::min(n, i + kChunk));\n"
         "  return u + (s - s);\n"),
        ("a local class with a virtual function",
         "  struct Adder { virtual ~Adder() = default; virtual int64_t add(int64_t a, int32_t b) const "
         "{ return a + b; } };\n"
         "  static const Adder adder;\n  int64_t u = 0;\n  for (int64_t i = 0; i < n; ++i) u = adder.add(u, x[i]);\n"
         "  return u + (s - s);\n"),
        ("eight accumulators: the optimizer no longer inlines sum_range, whose own symbol appears",
         "".join(f"  int64_t a{k} = 0;\n" for k in range(8)) + "  int64_t i = 0;\n  for (; i + 8 <= n; i += 8) {\n" +
         "".join(f"    a{k} += x[i + {k}];\n" for k in range(8)) + "  }\n  for (; i < n; ++i) a0 += x[i];\n"
         "  return s + " + " + ".join(f"a{k}" for k in range(8)) + ";\n"),
        ("rewrites-its-output (the exit code catches it, not the audit)",
         next(e for e in X.EXPLOITS["standin-sum"] if e.name == "rewrites-its-output").new),
    ]
    for what, new in good:
        problems, log = audit_of(copy, tmp, task, new, "good", ref_obj, own)
        expect(problems == [], f"audit: {what} has no problem {short(problems) if problems is not None else log}")
    clone = {"_ZN12_GLOBAL__N_19sum_rangeEPKil.constprop.0.isra.0": (
        "t", "(anonymous namespace)::sum_range(int const*, long) [clone .constprop.0] [clone .isra.0]")}
    extra = A.extra_definitions(clone, {}, own)
    expect(not extra, f"audit: a clone of a clone of the region's function (.constprop.0.isra.0) is allowed {extra}")


def test_audit_scan(copy, tmp):
    """The scan track's brace-macro-escape, without the rules: the audit names puts."""
    task = T.task("warp-scan")
    tu = "chapters/16_scan/16_scan.cu"
    ref_obj, sub_obj = obj_path(tmp, "scan-reference", "16_scan.o"), obj_path(tmp, "scan-escape", "16_scan.o")
    ok, log = compile_object(copy, tu, ref_obj, tmp)
    expect(ok, "audit: chapter 16's reference compiles" + ("" if ok else "\n" + log))
    saved = saved_files(copy, task)
    e = next(x for x in X.EXPLOITS["warp-scan"] if x.name == "brace-macro-escape")
    S.apply(copy, task, e)
    what, says = f"warp-scan/{e.name} without the rules", e.says_without
    ok2, log = compile_object(copy, tu, sub_obj, tmp)
    restore(copy, saved)
    expect(ok2, f"audit: chapter 16 compiles with {what}" + ("" if ok2 else "\n" + log))
    if ok and ok2:
        own = A.own_functions([(copy / r.file).read_text() for r in task.regions])
        problems = A.audit([sub_obj], [ref_obj], own)
        expect(any(says in p for p in problems), f"audit: {what}: '{says}' ({short(problems)})")
        expect(A.audit([ref_obj], [ref_obj], own) == [], "audit: chapter 16's reference against itself: no problem")


# --- the rules as compiled ----------------------------------------------------------------------

def raw_rules(copy, task):
    return [f for f, first, body in regions.region_starts(copy, task) for f in static.region_rules(body, f, first)]


def test_compiled_standin(copy):
    task = T.task("standin-sum")
    found, problems = expanded.findings(copy, copy / "build", task)
    expect(not found and not problems, f"as compiled: the stand-in's reference gets no finding {texts(found)} {problems}")
    cases = [
        ("a function left through _GLIBCXX_END_NAMESPACE_CXX11, a puts at namespace scope",
         X.brace_escape(X.REWRITING_PUTS), "leaves-function", "_GLIBCXX_END_NAMESPACE_CXX11"),
        ("std::sort reached through libstdc++'s _GLIBCXX_STD_A",
         "  _GLIBCXX_STD_A::sort(&s, &s + 1);\n  return s;\n", "library", "_GLIBCXX_STD_A"),
        ("a balanced macro of braces (libstdc++'s __glibcxx_assert: do { ... } while (false))",
         "  __glibcxx_assert(n >= 0);\n  return s;\n", "leaves-function", "__glibcxx_assert"),
    ]
    for what, new, rule, says in cases:
        expect_only_as_compiled(copy, task, what, X.S_END, new, rule, says)


def expect_only_as_compiled(copy, task, what, old, new, rule, says):
    """Plants `new` for `old` in the task's region: the rules as written must pass it, the
    rules as compiled must break `rule` with a message naming `says`."""
    saved = saved_files(copy, task)
    plant(copy, task, old, new)
    raw = rejects(raw_rules(copy, task))
    found, problems = expanded.findings(copy, copy / "build", task)
    restore(copy, saved)
    expect(not raw, f"as compiled: {what}: passes the rules as written {texts(raw)}")
    hit = [f for f in rejects(found) if f.rule == rule and says in f.message]
    expect(hit and not problems, f"as compiled: {what}: breaks '{rule}' after the preprocessor, naming {says} "
                                 f"{texts(rejects(found))[:2]} {problems}")


def test_line_marker_forgery(copy):
    """The rules as compiled find a region's lines by the preprocessor's line markers; a raw
    string that holds a line starting with '#' would read as one, so it is rejected as
    written."""
    task = T.task("standin-sum")
    saved = saved_files(copy, task)
    plant(copy, task, X.S_END, '  const char* note = R"(\n# 1 "/elsewhere"\n)";\n  (void)note;\n  return s;\n')
    raw = [f for f in rejects(raw_rules(copy, task)) if f.rule == "directive"]
    restore(copy, saved)
    expect(raw, f"as written: a raw string holding a line marker ('# 1 \"/elsewhere\"') is 'directive' {texts(raw)}")


def every_marker_segments(text, cwd, wanted):
    """expanded.segments as it was written first: every line marker read in turn."""
    out, marks = {f: [] for f in wanted}, list(expanded.MARKER_LINE.finditer(text))
    for k, m in enumerate(marks):
        f = os.path.realpath(os.path.join(cwd, expanded._unescape(m.group(2))))  # noqa: SLF001
        stop = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        if f in out and m.end() + 1 < stop:
            out[f].append((int(m.group(1)), text[m.end() + 1:stop]))
    return out


def test_segments_unit():
    """expanded.segments searches for the wanted files' names; a read of every marker is the
    reference it must agree with."""
    text = "\n".join([
        '# 1 "/w/a.cu"', "int a;",
        '# 1 "/w/inc/scan.cuh" 1', "int s1;", "int s2;",
        '# 3 "/w/inc/my_scan.cuh" 1', "int decoy;",
        '#line 7 "/w/inc/scan.cuh"', "int s7;",
        '# 4 "inc/scan.cuh" 2', "int relative;",
        '# 9 "/w/we\\"ird.cuh"', "int weird;",
        '# 5 "/w/a.cu" 2', "int tail;",
        '# 1 "/w/inc/scan.cuh" 1', "int last;"]) + "\n"
    cases = [["/w/inc/scan.cuh"], ["/w/inc/my_scan.cuh", "/w/inc/scan.cuh"], ['/w/we"ird.cuh'], ["/w/absent.cuh"]]
    for wanted in cases:
        got, want = expanded.segments(text, "/w", wanted), every_marker_segments(text, "/w", wanted)
        expect(got == want, f"segments: {wanted}: the name search finds what every marker finds {got} {want}")
    scan = expanded.segments(text, "/w", ["/w/inc/scan.cuh"])["/w/inc/scan.cuh"]
    expect([first for first, _ in scan] == [1, 7, 4, 1] and "decoy" not in "".join(t for _, t in scan),
           f"segments: scan.cuh's four runs, not my_scan.cuh's {scan}")


def test_compiled_scan(copy):
    ws, lb, ds = T.task("warp-scan"), T.task("lookback"), T.task("digit-scatter")
    for task in (ws, lb, ds):
        found, problems = expanded.findings(copy, copy / "build", task)
        expect(not found and not problems, f"as compiled: the scan reference's {task.id} gets no finding "
                                           f"{texts(found)} {problems}")
    e = next(x for x in X.EXPLOITS["warp-scan"] if x.name == "brace-macro-escape")
    expect_only_as_compiled(copy, ws, f"warp-scan/{e.name}", e.old, e.new, "leaves-function",
                            "_GLIBCXX_END_NAMESPACE_CXX11")
    # A library's host code in a kernel, reached through a macro: the compiler's own error, before any rule.
    saved = saved_files(copy, ws)
    plant(copy, ws, X.WARP_SCAN_LOOP, "  _GLIBCXX_STD_A::sort(&v, &v + 1);\n  return v;\n")
    ok, log = compile_object(copy, "chapters/16_scan/warp_scan_check.cu", copy.parent / "std-sort-in-a-kernel.o",
                             copy.parent)
    restore(copy, saved)
    expect(not ok and "__host__" in log, f"as compiled: std::sort in the warp scan (a __device__ function) does not "
                                         f"compile, so the scan track has no library macro plant {log[-300:]}")
    # A barrier under a condition on the thread, hidden in a macro of cuda_runtime.h.
    saved = saved_files(copy, ds)
    old = "  return base + below;\n"
    plant(copy, ds, old, "  if (__cudaGet_threadIdx().x < 16) {\n    __syncthreads();\n  }\n" + old)
    before = [f for f in static.analyse(copy, ds) if f.rule == "barrier-in-branch"]
    found, problems = expanded.findings(copy, copy / "build", ds)
    restore(copy, saved)
    expect(not before, f"as compiled: a barrier under __cudaGet_threadIdx().x < 16 is not found as written "
                       f"{texts(before)}")
    expect(any(f.rule == "barrier-in-branch" for f in found) and not problems,
           f"as compiled: a barrier under __cudaGet_threadIdx().x < 16 is barrier-in-branch after the preprocessor "
           f"{texts(found)} {problems}")


def test_compiled_dot(copy):
    """The library class where a library is in reach: chapter 12's kernel file includes CUB,
    and CUB_NS_QUALIFIER names it without `cub` in the text."""
    task = T.task("dot-grid-stride")
    found, problems = expanded.findings(copy, copy / "build", task)
    expect(not found and not problems, f"as compiled: the dot-top2 reference's {task.id} gets no finding "
                                       f"{texts(found)} {problems}")
    e = next(x for x in X.EXPLOITS["dot-grid-stride"] if x.name == "library-through-a-macro")
    expect_only_as_compiled(copy, task, f"dot-grid-stride/{e.name}", e.old, e.new, "library", e.says)


FORTIFIED = ["-D_FORTIFY_SOURCE=2", "-Xcompiler=-O2"]  # what Ubuntu's gcc (the GPU machines) does by default


def test_fortified_plants(tmp):
    """Every plant that defines a C library function at namespace scope compiles where
    glibc's stdio is fortified, as on the GPU machines (Ubuntu's gcc defines
    _FORTIFY_SOURCE), where printf is already defined inline and a second definition is an
    error: a plant that does not compile there is graded BUILD_FAIL, not by the defence it
    is meant to show. A printf plant is the control: it must not compile."""
    nvcc = shutil.which("nvcc")
    if not nvcc:
        expect(False, "fortified plants: no nvcc")
        return
    plants = [("REWRITING_PUTS", X.REWRITING_PUTS, True),
              ("a printf (the control)", 'extern "C" int printf(const char* __restrict f, ...) { return 0; }\n', False)]
    for label, code, compiles in plants:
        src = tmp / "fortified.cu"
        src.write_text("#include <cstdio>\nnamespace plant_ {\n" + code + "}  // namespace plant_\n")
        r = subprocess.run([nvcc, "--std=c++17", "-O3", *FORTIFIED, "-c", str(src), "-o", str(tmp / "fortified.o")],
                           capture_output=True, text=True)
        expect((r.returncode == 0) == compiles, f"fortified plants: {label} {'compiles' if compiles else 'does not'} "
                                                f"with glibc's fortified stdio (exit {r.returncode}: "
                                                f"{(r.stderr or r.stdout)[-300:]})")


# --- the boundary --------------------------------------------------------------------------------

def test_across_unit():
    steps = ["sum"]
    ok2 = [("sum n=1", True), ("sum n=2", True)]
    cases = [
        ("both runs list the same passing checks", fake_run(0, ok2), fake_run(0, ok2), "PASS", ""),
        ("the reference fails a check of the dumped outputs", fake_run(0, ok2),
         fake_run(1, [("sum n=1", True), ("sum n=2", False)]), "FAIL", "judged from your program's outputs"),
        ("the program printed fewer checks than the reference judged", fake_run(0, ok2[:1]), fake_run(0, ok2),
         "FAIL", "check 2 is nothing more where the reference has 'sum n=2'"),
        ("the program printed another check", fake_run(0, [("sum n=1", True), ("sum n=3", True)]), fake_run(0, ok2),
         "FAIL", "check 2 is 'sum n=3'"),
        ("the reference's run left a failed check of the exchange", fake_run(0, ok2),
         fake_run(1, ok2 + [("outputs exchange", False)]), "FAIL", "where the reference has 'outputs exchange'"),
        ("the reference's run did not end", fake_run(0, ok2), Run(cmd=[], code=-9, out="").parse(), "FAIL",
         "did not run to its end"),
    ]
    for what, mine, judged, want, says in cases:
        st, _, _, lines = check.across(mine, judged, steps)
        expect(st == want and says in " ".join(lines), f"across, {what}: {want} ({st}: {lines})")


def test_boundary(copy, tmp):
    """Each -boundary exploit of the stand-in, built and run: its own verdict is PASS (the
    forgery is complete), the verdict across the boundary FAIL; the reference is PASS both ways."""
    task = T.task("standin-sum")
    c = task.checks[0]
    exe = copy / "build/chapters/labs/standin"
    reference = tmp / "reference-standin"
    dumps = tmp / "dumps"
    dumps.mkdir(exist_ok=True)
    settings = check.Settings(seed=42, timeout=60, trusted=lambda ch: reference, dumps=str(dumps))
    planted = [e for e in X.EXPLOITS["standin-sum"] if e.name.endswith("-boundary")]
    expect(len(planted) == 4, f"boundary: the stand-in catalogue plants 4 forgeries ({[e.name for e in planted]})")
    for e in [None] + planted:
        label = e.name if e else "the reference"
        saved = saved_files(copy, task)
        if e:
            S.apply(copy, task, e)
        r = subprocess.run(["ninja", "-C", "build", "chapters/labs/standin"], cwd=copy, capture_output=True,
                           text=True, env=ccache_env(tmp))
        restore(copy, saved)
        expect(r.returncode == 0, f"boundary: the stand-in builds with {label}" +
               ("" if r.returncode == 0 else "\n" + r.stdout[-2000:]))
        if r.returncode != 0:
            continue
        if not e:
            shutil.copy2(exe, reference)
        for size in ([], ["--n", "1000"]):
            args = ["--seed", "42"] + size
            own = check.verdict(check.run_checks([str(exe)], args, settings), c.steps)
            st, _, _, lines = check.run_verdict(c, [str(exe)], args, settings)
            want = "PASS" if not e else "FAIL"
            expect(own[0] == "PASS" and st == want and (not e or e.says_without in " ".join(lines)),
                   f"boundary: {label} {' '.join(args)}: its own verdict PASS ({own[0]}), across the boundary "
                   f"{want} ({st}: {' '.join(lines)[:200]})")
    expect(not list(dumps.iterdir()), "boundary: every dump folder is removed after its verdict")


# --- the catalogue -----------------------------------------------------------------------------

ISSUE_47 = {"brace-macro-escape", "constructor-prints-pass", "atexit-prints-pass", "rewrites-its-output",
            "library-through-a-macro"}


def test_catalogue_standin(copy, tmp):
    """Every issue-47 exploit of the stand-in: the rules (as written, then as compiled) give
    its expected line; without the rules the audit gives its second line."""
    task = T.task("standin-sum")
    ref_obj = obj_path(tmp, "reference", "standin.o")
    own = A.own_functions([(copy / STANDIN_TU).read_text()])
    for e in [x for x in X.EXPLOITS["standin-sum"] if x.name in ISSUE_47]:
        saved = saved_files(copy, task)
        S.apply(copy, task, e)
        found = rejects(static.analyse(copy, task)) or rejects(expanded.findings(copy, copy / "build", task)[0])
        out = obj_path(tmp, f"catalogue-{e.name}", "standin.o")
        ok, log = compile_object(copy, STANDIN_TU, out, tmp)
        restore(copy, saved)
        if e.says in ("leaves-function", "library", "directive"):
            expect(any(f.rule == e.says for f in found), f"catalogue: standin/{e.name} is rejected by the rules "
                                                         f"('{e.says}') {texts(found)[:2]}")
        else:
            expect(not found, f"catalogue: standin/{e.name} passes the rules (a later stage catches it) {texts(found)}")
        if "rules" in e.without:
            problems = A.audit([out], [ref_obj], own) if ok else None
            expect(problems and any(e.says_without in p for p in problems),
                   f"catalogue: standin/{e.name} without the rules: the audit says '{e.says_without}' "
                   f"{short(problems) if ok else log}")


def test_agreement_program(copy, tmp):
    """The stand-in built with `rewrites-its-output`: its printed checks all pass, it
    exits 1, and the verdict is FAIL; the reference's run is PASS."""
    task = T.task("standin-sum")
    exploit = next(e for e in X.EXPLOITS["standin-sum"] if e.name == "rewrites-its-output")
    exe = copy / "build/chapters/labs/standin"
    for label, planted in (("the reference", False), ("rewrites-its-output", True)):
        saved = saved_files(copy, task)
        if planted:
            S.apply(copy, task, exploit)
        r = subprocess.run(["ninja", "-C", "build", "chapters/labs/standin"], cwd=copy, capture_output=True,
                           text=True, env=ccache_env(tmp))
        restore(copy, saved)
        expect(r.returncode == 0, f"agreement: the stand-in builds with {label}" +
               ("" if r.returncode == 0 else "\n" + r.stdout[-2000:]))
        if r.returncode != 0:
            continue
        got = run([str(exe), "--verify-only", "--json", "--seed", "42"], 60)
        st, _, _, lines = check.verdict(got, task.checks[0].steps)
        if planted:
            expect(got.code == 1 and got.checks and all(c.ok for c in got.checks) and got.summary["failed"] == 0,
                   f"agreement: {label} prints only passing checks and a summary of 0 failures, and exits 1 "
                   f"(exit {got.code}, {len(got.checks)} checks)")
            expect(st == "FAIL" and "disagree" in " ".join(lines), f"agreement: {label} is FAIL ({st}: {lines})")
        else:
            expect(st == "PASS", f"agreement: {label} is PASS ({st}: {lines})")


def main():
    os.environ.pop("CCACHE_DISABLE", None)
    tmp = Path(tempfile.mkdtemp(prefix="labs-rules-"))
    start = time.monotonic()
    try:
        timed(test_bounds, tmp)
        timed(test_guards, tmp)
        timed(test_agreement_unit)
        timed(test_segments_unit)
        standin = timed(setup_copy, "standin", tmp, STANDIN_SETUP)
        timed(test_audit_standin, standin, tmp)
        timed(test_compiled_standin, standin)
        timed(test_line_marker_forgery, standin)
        timed(test_catalogue_standin, standin, tmp)
        timed(test_agreement_program, standin, tmp)
        timed(test_across_unit)
        timed(test_boundary, standin, tmp)
        scan = timed(setup_copy, "scan", tmp, SCAN_SETUP)
        timed(test_audit_scan, scan, tmp)
        timed(test_compiled_scan, scan)
        dot = timed(setup_copy, "dot-top2", tmp, SCAN_SETUP)
        timed(test_compiled_dot, dot)
        timed(test_fortified_plants, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed ({time.monotonic() - start:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
