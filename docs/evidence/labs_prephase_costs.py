#!/usr/bin/env python3
"""What a grader spends on one submission before its first checked run, without a GPU:
the rules on the regions as compiled (labkit/expanded.py) and the symbol audit
(instructor/audit.py), for the scan track's three tasks, timed on a built tree.

    python3 docs/evidence/labs_prephase_costs.py [--tools REPO] [--build BUILD_DIR]

--tools names the checkout whose lab tools are timed (default: this one), so that two
versions of the tools can be timed on the same build. In pass 1, the first task pays
the preprocessor runs (a submission's regions are new to the grader) and the tasks after
it reuse them, as in a grade; pass 2 runs the same tasks again, every preprocessor run
cached: what is left is the tools' own work. Python runs one thread at a time: its CPU
seconds are what a grader's build workers queue behind.
"""
import argparse, os, platform, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--tools", default=str(HERE), help="the checkout whose chapters/labs is timed")
p.add_argument("--build", default=str(HERE / "build"), help="a configured and built meson folder of this tree")
a = p.parse_args()
tools = Path(a.tools).resolve() / "chapters" / "labs"
sys.path[:0] = [str(tools), str(tools / "instructor")]
import tasks as T  # noqa: E402
import audit  # noqa: E402
from labkit import expanded  # noqa: E402

print(f"# {Path(sys.argv[0]).name} --tools {a.tools} --build {a.build}")
print(f"# host {platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}")
print(f"{'pass':>4} {'what':<32} {'wall s':>7} {'Python CPU s':>13}")
for rnd in (1, 2):
    for what in ("warp-scan", "lookback", "digit-scatter", "audit"):
        t0, c0 = time.perf_counter(), time.process_time()
        if what == "audit":
            for ch in ("16_scan", "17_stream_compaction", "18_radix_sort"):
                objs = audit.objects(a.build, ch)
                audit.audit(objs, objs, set())
            label = "symbol audit, chapters 16-18"
        else:
            found, problems = expanded.findings(HERE, a.build, T.task(what), jobs=4)
            assert not problems, problems
            label = f"rules as compiled, {what}"
        print(f"{rnd:>4} {label:<32} {time.perf_counter() - t0:7.1f} {time.process_time() - c0:13.1f}", flush=True)
