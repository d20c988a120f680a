#!/usr/bin/env python3
"""Host tests of issue 47's defences, without a GPU (meson test 'labs-rules').

  bounds      the shared-memory bounds pass evaluates a region's locals for every
              iteration of the loops around them: chapter 03's interleaved-strided
              tree (index = 2 * stride * tid, guarded by index < kBlock) gets no
              finding; the same tree reading one element past the array still does,
              and a local of a sibling block or one assigned again is not taken as
              the access's value
  agreement   a run whose exit code disagrees with its printed records (exit 1 and
              every check ok; exit 0 and a check or result row failed; a summary
              that counts other failures than those printed) is FAIL

The copies (the stand-in's, and the scan track's built for PTX without device
optimisation) compile through ccache where it is installed: about a minute cold.
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
from labkit import check, regions, static  # noqa: E402
from labkit.runner import Run  # noqa: E402

from export import export  # noqa: E402

failures = []


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


def main():
    os.environ.pop("CCACHE_DISABLE", None)
    tmp = Path(tempfile.mkdtemp(prefix="labs-rules-"))
    start = time.monotonic()
    try:
        timed(test_bounds, tmp)
        timed(test_agreement_unit)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failed ({time.monotonic() - start:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
