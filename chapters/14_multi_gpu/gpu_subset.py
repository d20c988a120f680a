#!/usr/bin/env python3
"""Chapter 14 on a subset of the GPUs: --verify-only with the LAST K GPUs visible.

usage: CHAPTER_EXE=PROGRAM gpu_subset.py K   (chapters/meson.build: tests subset1, subset2, subset4)

CUDA_VISIBLE_DEVICES names the last K of the machine's N GPUs (on four GPUs, K = 2 is
"2,3"), so the program sees K GPUs numbered 0 to K - 1 that are not the machine's first K:
every part must take "every visible GPU" as K and still verify. K = 1 leaves the all-reduce
no neighbour and the sharded sum one shard. The run must say it uses K of K visible GPUs,
pass a check on K GPUs, and fail none.

Exit: the program's code (0, 1, or 77 without a GPU, an error with REQUIRE_GPU=1); 77 with a
"skipped:" line when the machine has fewer than K GPUs; 1 when the output does not show K GPUs.
"""
import os
import re
import subprocess
import sys


def machine_gpus():
    """The GPUs nvidia-smi lists (0 when it is missing or fails)."""
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        print("usage: CHAPTER_EXE=PROGRAM gpu_subset.py K   (K >= 1)", file=sys.stderr)
        return 2
    k = int(sys.argv[1])
    n = machine_gpus()
    env = dict(os.environ, NCCL_NVLS_ENABLE="0")
    if n == 0:  # no GPU (or no nvidia-smi): the program says which, and exits 77 or fails
        return subprocess.run([os.environ["CHAPTER_EXE"], "--verify-only"], env=env, timeout=600).returncode
    if n < k:
        print(f"skipped: a subset of {k} GPUs needs {k}, this machine has {n}")
        return 77
    env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(n - k, n))
    print(f"CUDA_VISIBLE_DEVICES={env['CUDA_VISIBLE_DEVICES']}", flush=True)
    p = subprocess.run([os.environ["CHAPTER_EXE"], "--verify-only"], env=env, capture_output=True,
                       text=True, timeout=600)
    print(p.stdout, end="")
    print(p.stderr, end="", file=sys.stderr)
    if p.returncode != 0:
        return p.returncode
    if not re.search(rf"^# {k} of {k} visible GPU\(s\)", p.stdout, re.M):
        print(f"FAIL: the program did not say it uses {k} of {k} visible GPUs")
        return 1
    if not re.search(rf"^PASS .* gpus={k}\b", p.stdout, re.M) or re.search(r"^FAIL", p.stdout, re.M):
        print(f"FAIL: no check passed on {k} GPUs, or a check failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
