#!/usr/bin/env python3
"""Host test of the tour's results file: a run stopped after its first chapter keeps
that chapter's records (the tour writes after each chapter), and a chapter that does
not finish in time is a failure, not a lost run. And of its estimate of the time left:
the recorded times of the chapters still to run, or none at all (without a GPU it once
said "12m14s remaining" with 2 s to go). Stand-in chapters, a stand-in device record
and a temporary results folder; no GPU."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tour  # noqa: E402

DEVICE = {"name": "Stand-in GPU", "cc": "9.0", "sm_count": 1, "memory_gb": 1.0, "l2_mb": 1.0,
          "theoretical_gbps": 100.0, "copy_gbps": 100.0, "driver": "13.0",
          "runtime": "13.0", "gpu_count": 1}


def record(chapter, variant):
    return {"record": "result", "chapter": chapter, "problem": "sum", "variant": variant, "role": "step",
            "note": "", "n": 1024, "bytes": 4096, "ms_median": 1.0, "ms_min": 1.0, "reps": 3, "gbps": 0.004,
            "ok": True, "extra": {}}


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tour.RESULTS_DIR = tmp
        tour.introspect = lambda build_dir: [("01_first", "/x/01"), ("02_second", "/x/02")]
        tour.build = lambda build_dir, programs: None
        tour.device_query = lambda build_dir: (dict(DEVICE), None)
        os.environ["STEPWISE_COMMIT"] = "abc1234"

        def run_chapter(name, exe):
            if name.startswith("02"):
                raise KeyboardInterrupt  # the run is stopped during chapter 02
            return [record("01", "first")], "ok"

        tour.run_chapter = run_chapter
        sys.argv = ["tour.py", "--build-dir", "unused"]
        try:
            tour.main()
            failures.append("the stand-in stop did not stop the tour")
        except KeyboardInterrupt:
            pass
        path = os.path.join(tmp, "stand-in-gpu.json")
        if not os.path.exists(path):
            failures.append("a run stopped in chapter 02 wrote no results: chapter 01's are lost")
        else:
            data = json.load(open(path))
            chapters = sorted({r["chapter"] for r in data["records"]})
            if chapters != ["01"]:
                failures.append(f"the stopped run's results hold chapters {chapters}, not ['01']")
            if data["meta"].get("runs", {}).get("01", {}).get("commit") != "abc1234":
                failures.append("chapter 01's run does not name its commit")

    # A chapter that does not finish in time: a failed chapter, the tour goes on.
    with tempfile.TemporaryDirectory() as tmp:
        slow = os.path.join(tmp, "slow.sh")
        with open(slow, "w") as f:
            f.write("#!/bin/sh\nsleep 5\n")
        os.chmod(slow, 0o755)
        import importlib
        fresh = importlib.reload(tour)
        fresh.CHAPTER_TIMEOUT_S = 1
        recs, status = fresh.run_chapter("16_slow", slow)
        if recs or not status.startswith("FAILED (not finished after 1 s)"):
            failures.append(f"a chapter past the time limit gave {status!r}")

    failures += estimate_failures()
    failures += knob_failures()
    for f in failures:
        print("FAIL " + f)
    print("test_tour: " + (f"{len(failures)} failure(s)" if failures else "ok"))
    return 1 if failures else 0


def progress_lines(fresh, device, tmp):
    """The tour's '[k/n] ...' lines with stand-in chapters 01-03 (01 writes a record)."""
    fresh.RESULTS_DIR = tmp
    fresh.introspect = lambda build_dir: [("01_first", "/x/01"), ("02_second", "/x/02"), ("03_third", "/x/03")]
    fresh.build = lambda build_dir, programs: None
    fresh.device_query = lambda build_dir: (dict(device), None) if device else (None, "skipped: no GPU (stand-in)")
    fresh.run_chapter = lambda name, exe: ([record("01", "first")], "ok") if name.startswith("01") else \
        ([], "skipped: no GPU (stand-in)")
    sys.argv = ["tour.py", "--build-dir", "unused"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fresh.main()
    return [line for line in out.getvalue().splitlines() if line.startswith("[")]


def knob_failures():
    """With the sweep's STEPWISE_L2_AHEAD_KIB set the tour writes nothing and exits 2: the
    results hold the code's own prefetch distance."""
    import importlib
    with tempfile.TemporaryDirectory() as tmp:
        fresh = importlib.reload(tour)
        fresh.RESULTS_DIR = tmp
        ran = []
        fresh.introspect = lambda build_dir: [("16_scan", "/x/16")]
        fresh.build = lambda build_dir, programs: ran.append("build")
        fresh.device_query = lambda build_dir: (dict(DEVICE), None)
        fresh.run_chapter = lambda name, exe: ran.append(name) or ([record("16", "x")], "ok")
        sys.argv = ["tour.py", "--build-dir", "unused"]
        os.environ["STEPWISE_L2_AHEAD_KIB"] = "8192"
        try:
            with contextlib.redirect_stdout(io.StringIO()) as out:
                code = fresh.main()
        finally:
            del os.environ["STEPWISE_L2_AHEAD_KIB"]
        if code != 2 or ran or os.listdir(tmp) or "STEPWISE_L2_AHEAD_KIB" not in out.getvalue():
            return [f"with STEPWISE_L2_AHEAD_KIB set the tour gave exit {code}, ran {ran}, wrote "
                    f"{os.listdir(tmp)}: not exit 2 naming it, nothing run or written"]
    return []


def estimate_failures():
    import importlib
    failures = []
    fresh = importlib.reload(tour)
    programs = [("01_a", ""), ("02_b", ""), ("03_c", "")]
    recorded = {"01": 30.0, "02": 1.5, "03": 0.5}
    for k, want in ((0, 32.0), (1, 2.0), (2, 0.5), (3, 0.0)):
        got = fresh.estimate_left(programs, k, recorded)
        if got != want:
            failures.append(f"estimate before program {k}: {got}, not {want} (the recorded times still to come)")
    if fresh.estimate_left(programs, 1, {"01": 30.0, "02": 1.5}) is not None:
        failures.append("a chapter with no recorded time still got an estimate")

    # Without a GPU: no recorded times, so no estimate at all (no guess from chapter 01's time).
    with tempfile.TemporaryDirectory() as tmp:
        lines = progress_lines(importlib.reload(tour), None, tmp)
        if len(lines) != 3 or any("remaining" in line for line in lines):
            failures.append(f"without a GPU the progress lines are {lines}, not three without an estimate")

    # A GPU model with a recorded run: each line adds up the recorded times of the chapters to come.
    with tempfile.TemporaryDirectory() as tmp:
        runs = {"01": {"seconds": 40.0}, "02": {"seconds": 3.0}, "03": {"seconds": 125.0}}
        with open(os.path.join(tmp, "stand-in-gpu.json"), "w") as f:
            json.dump({"meta": {"gpu": DEVICE["name"], "runs": runs}, "records": []}, f)
        lines = progress_lines(importlib.reload(tour), DEVICE, tmp)
        want = ["est. remaining 2m48s)", "est. remaining 2m08s)", "est. remaining 2m05s)"]
        if len(lines) != 3 or any(not line.endswith(w) for line, w in zip(lines, want)):
            failures.append(f"with recorded times the progress lines are {lines}, not ending {want}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
