#!/usr/bin/env python3
"""Host test of the tour's results file: a run stopped after its first chapter keeps
that chapter's records (the tour writes after each chapter), and a chapter that does
not finish in time is a failure, not a lost run. Stand-in chapters, a stand-in device
record and a temporary results folder; no GPU."""
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

    for f in failures:
        print("FAIL " + f)
    print("test_tour: " + (f"{len(failures)} failure(s)" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
