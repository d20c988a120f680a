#!/usr/bin/env python3
"""launch.py with stand-in ranks (small Python processes), and Part 3's environment
checks of the real program: no GPU is needed.

usage: launch_test.py   (CHAPTER_EXE=PROGRAM adds the program's checks; meson sets it)

1. Each launcher style gives every rank its variables: rank, world size, local rank,
   MASTER_ADDR, MASTER_PORT, NCCL_NVLS_ENABLE=0; --net adds NCCL's socket recipe with a
   NCCL_HOSTID of its own per rank. Every line comes out with its rank's prefix.
2. When one rank fails, the others are stopped within the bound (SIGTERM, then SIGKILL for
   a rank that ignores SIGTERM, its child process included), and the launcher exits with
   the failing rank's code; a rank killed by a signal gives 128 + the signal; --grace lets
   the others end by themselves first.
3. The program (--part 3) with a bad or inconsistent environment of each style: exit 2
   and one line naming the variable, before it looks for a GPU.
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH = [sys.executable, os.path.join(HERE, "launch.py")]
VARS = {"torchrun": ("RANK", "WORLD_SIZE", "LOCAL_RANK"),
        "mpi": ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
        "slurm": ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID")}
failures = 0


def check(ok, what):
    global failures
    failures += not ok
    print(f"{'PASS' if ok else 'FAIL'} {what}")


def launch(args, stand_in, timeout=60):
    t0 = time.monotonic()
    p = subprocess.run(LAUNCH + args + ["--", sys.executable, "-c", stand_in],
                       capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - t0


def styles():
    for style, names in VARS.items():
        show = ("import os; e = os.environ; print(' '.join(e.get(k, '-') for k in "
                f"{list(names)} + ['MASTER_ADDR', 'MASTER_PORT', 'NCCL_NVLS_ENABLE', 'NCCL_HOSTID', "
                "'NCCL_P2P_DISABLE', 'NCCL_SOCKET_IFNAME', 'RANK', 'SLURM_PROCID']))")
        for net in (False, True):
            p, _ = launch(["--ranks", "3", "--style", style, "--master-port", "29555"]
                          + (["--net"] if net else []), show)
            lines = sorted(l for l in p.stdout.splitlines() if l.strip())
            net_part = "{} 1 lo" if net else "- - -"
            want = []
            for r in range(3):
                others = {"torchrun": f"{r} -", "mpi": "- -", "slurm": f"- {r}"}[style]
                want.append(f"[{r}] {r} 3 {r} 127.0.0.1 29555 0 " + net_part.format(f"rank{r}") + f" {others}")
            check(p.returncode == 0 and lines == want,
                  f"--style {style}{' --net' if net else ''}: each rank's variables "
                  f"(got {lines}, exit {p.returncode})")
    env = dict(os.environ, RANK="7", SLURM_PROCID="5")  # the launcher's own environment
    p = subprocess.run(LAUNCH + ["--ranks", "2", "--style", "mpi", "--", sys.executable, "-c",
                                 "import os; print(os.environ.get('RANK'), os.environ.get('SLURM_PROCID'))"],
                       capture_output=True, text=True, env=env, timeout=60)
    check(sorted(p.stdout.splitlines()) == ["[0] None None", "[1] None None"],
          "another style's variables in the launcher's environment are removed")
    p, _ = launch(["--ranks", "2"], "import sys; print('out'); print('err', file=sys.stderr)")
    check(sorted(p.stdout.splitlines()) == ["[0] out", "[1] out"] and
          sorted(l for l in p.stderr.splitlines() if not l.startswith("launch: ")) == ["[0] err", "[1] err"],
          "stdout and stderr lines carry their rank's prefix")


def stops():
    with tempfile.TemporaryDirectory() as tmp:
        # rank 2 fails; rank 1 ignores SIGTERM and has a child; rank 0 would sleep for a minute
        stand_in = f"""
import os, signal, subprocess, sys, time
r = int(os.environ['RANK'])
if r == 1:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(['sleep', '60'])
    open(os.path.join({tmp!r}, 'child'), 'w').write(str(child.pid))
open(os.path.join({tmp!r}, str(r)), 'w').write(str(os.getpid()))
time.sleep(1.0 if r == 2 else 60)
if r == 2:
    open(os.path.join({tmp!r}, 'failed-at'), 'w').write(repr(time.time()))
sys.exit(3 if r == 2 else 0)
"""
        p, _ = launch(["--ranks", "3", "--kill-after", "1"], stand_in)
        # from the failing rank's exit, not from the launcher's start: a loaded machine's
        # Python start-ups are not the launcher's stop
        seconds = time.time() - float(open(os.path.join(tmp, "failed-at")).read())
        pids = [int(open(os.path.join(tmp, n)).read()) for n in ("0", "1", "2", "child")]
        left = [pid for pid in pids if alive(pid)]
        check(p.returncode == 3, f"one rank exits 3: the launcher exits 3 (got {p.returncode})")
        check(seconds < 1 + 3, f"the others are stopped within the bound (--kill-after 1, 3 s of slack) after the "
                               f"failing rank's exit: {seconds:.1f} s")
        check(not left, f"no process is left, the child of a rank that ignores SIGTERM included: {left}")
        check("killed by signal 9" in p.stderr and "killed by signal 15" in p.stderr,
              "SIGTERM first, SIGKILL for the rank that ignores it")
    p, _ = launch(["--ranks", "2"], "import os, time; r = os.environ['RANK']; time.sleep(0.2); "
                                    "os.kill(os.getpid(), 9) if r == '1' else time.sleep(60)")
    check(p.returncode == 128 + 9, f"a rank killed by signal 9: the launcher exits 137 (got {p.returncode})")
    p, _ = launch(["--ranks", "2", "--grace", "10"],
                  "import os, sys, time; r = os.environ['RANK']; time.sleep(0.2 if r == '1' else 1.0); "
                  "sys.exit(4 if r == '1' else 5)")
    check(p.returncode == 4 and "rank 0 exited with code 5" in p.stderr,
          "--grace: the other rank ends by itself with its own code, the launcher with the first")
    p, _ = launch(["--ranks", "4"], "pass")
    check(p.returncode == 0, f"every rank exits 0: the launcher exits 0 (got {p.returncode})")


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[1].split()[0] != "Z"  # a zombie is gone but not reaped
    except FileNotFoundError:
        return False


def program():
    exe = os.environ.get("CHAPTER_EXE")
    if not exe:
        print("SKIP the program's environment checks: CHAPTER_EXE is not set")
        return
    cases = [({"RANK": "0", "WORLD_SIZE": "2"}, "LOCAL_RANK"),
             ({"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}, "RANK=2"),
             ({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "x", "OMPI_COMM_WORLD_LOCAL_RANK": "1"},
              "OMPI_COMM_WORLD_SIZE=x"),
             ({"SLURM_PROCID": "0", "SLURM_NTASKS": "2"}, "SLURM_LOCALID"),
             ({"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_LOCALID": "0", "MASTER_PORT": "0"},
              "MASTER_PORT=0")]
    clean = {k: v for k, v in os.environ.items() if not any(k in n for n in VARS.values())}
    for extra, name in cases:
        p = subprocess.run([exe, "--part", "3", "--verify-only"], env=dict(clean, **extra),
                           capture_output=True, text=True, timeout=60)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        check(p.returncode == 2 and len(lines) == 1 and name in lines[0] and not p.stdout.strip(),
              f"{extra}: exit {p.returncode}: {p.stderr.strip()}")
    p = subprocess.run([exe, "--part", "3", "--bootstrap", "file:"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "--bootstrap" in p.stderr, f"--bootstrap file: exit {p.returncode}")


def main():
    styles()
    stops()
    program()
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
