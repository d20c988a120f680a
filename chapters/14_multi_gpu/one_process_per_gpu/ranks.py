#!/usr/bin/env python3
"""Part 3 through the launcher: K ranks, one process per GPU, --verify-only.

usage: CHAPTER_EXE=PROGRAM ranks.py K   (chapters/meson.build: tests ranks1 and ranks2)

Runs launch.py --ranks K -- PROGRAM --part 3 --verify-only --timeout 60, four ways:
  1. torchrun's variables, --bootstrap tcp
  2. Open MPI's variables, --bootstrap file:<a fresh temporary folder>/id
  3. Slurm's variables, --bootstrap tcp
  4. K >= 2 only: launch.py --net (NCCL over sockets, as between hosts) with NCCL_DEBUG=INFO:
     the sweep must pass and NCCL's log must say "via NET/Socket"
Each run must exit 0 and print "PASS unique id". The exit code is the first failing run's:
77 when a rank finds no GPU of its own (fewer than K GPUs here: the test is skipped), 1 when
a check fails, 3 to 5 for the faults of Part 3 (see README.md).
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(k, style, bootstrap, net=False):
    exe = os.environ["CHAPTER_EXE"]
    env = dict(os.environ, NCCL_DEBUG="INFO") if net else None
    cmd = ([sys.executable, os.path.join(HERE, "launch.py"), "--ranks", str(k), "--style", style]
           + (["--net"] if net else []) + ["--", exe, "--part", "3", "--verify-only", "--timeout", "60",
                                           "--bootstrap", bootstrap])
    what = f"{k} rank(s), {style} variables, --bootstrap {bootstrap}" + (", --net" if net else "")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=540)
    print(f"== {what}: exit {p.returncode}")
    print("\n".join(l for l in p.stdout.splitlines() if "NCCL INFO" not in l))
    print(p.stderr, end="")
    if p.returncode != 0:
        return p.returncode
    if "PASS unique id" not in p.stdout:
        print(f"FAIL {what}: no 'PASS unique id' line")
        return 1
    if net and "via NET/Socket" not in p.stdout:
        print(f"FAIL {what}: NCCL's log never says 'via NET/Socket'")
        return 1
    return 0


def main():
    k = int(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("torchrun", "tcp", False), ("mpi", f"file:{tmp}/id", False), ("slurm", "tcp", False)]
        if k >= 2:
            runs.append(("torchrun", "tcp", True))
        for style, bootstrap, net in runs:
            code = run(k, style, bootstrap, net)
            if code != 0:
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
