#!/usr/bin/env python3
"""Start K ranks of a program, one process each, as torchrun, mpirun or srun would.

usage: launch.py [--ranks K] [--style torchrun|mpi|slurm] [--master-addr A]
                 [--master-port P] [--net] [--grace S] [--kill-after S] -- PROGRAM [ARGS...]

Rank r gets its launcher style's variables (torchrun, the default: RANK=r, WORLD_SIZE=K,
LOCAL_RANK=r; mpi: OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK; slurm: SLURM_PROCID,
SLURM_NTASKS, SLURM_LOCALID; the other styles' are removed), MASTER_ADDR and MASTER_PORT
(a free port unless given) and NCCL_NVLS_ENABLE=0. --net adds the recipe that makes NCCL
treat the ranks as hosts of their own, joined by sockets on this one: NCCL_P2P_DISABLE=1
NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_HOSTID=rank<r>.

Every line rank r prints comes out with the prefix "[r] " (its stdout on stdout, its stderr
on stderr). When a rank exits non-zero, the others get --grace seconds (default 0) to end
by themselves, then SIGTERM to their process groups, then SIGKILL --kill-after seconds
later (default 5): nothing is left running. The launcher exits with the first failing
rank's code (128 + N for a rank killed by signal N), else 0. Its own lines start "launch: ".

The same program starts unchanged under the alternatives (one node; MASTER_ADDR for tcp):
  mpirun --allow-run-as-root -np 2 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29500 PROGRAM ...
  srun --ntasks=2 --gpus-per-task=1 --export=ALL,MASTER_ADDR=$(hostname),MASTER_PORT=29500 PROGRAM ...
(--allow-run-as-root only where it runs as root; srun's --gpus-per-task sets each rank's
CUDA_VISIBLE_DEVICES: give all GPUs instead, e.g. --gpus-per-node, for the IPC ring).
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time

STYLES = {
    "torchrun": ("RANK", "WORLD_SIZE", "LOCAL_RANK"),
    "mpi": ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
    "slurm": ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
}
NET = {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1", "NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "lo"}
POLL_S = 0.02  # how often the launcher looks at its ranks


def free_port(addr):
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def rank_env(args, rank, port):
    env = {k: v for k, v in os.environ.items() if not any(k in names for names in STYLES.values())}
    rank_var, size_var, local_var = STYLES[args.style]
    env.update({rank_var: str(rank), size_var: str(args.ranks), local_var: str(rank),
                "MASTER_ADDR": args.master_addr, "MASTER_PORT": str(port), "NCCL_NVLS_ENABLE": "0"})
    if args.net:
        env.update(NET, NCCL_HOSTID=f"rank{rank}")
    return env


def pump(pipe, out, prefix, lock):
    """Copies a rank's lines to `out`, each with the rank's prefix."""
    for line in iter(pipe.readline, b""):
        with lock:
            out.write(prefix + line if line.endswith(b"\n") else prefix + line + b"\n")
            out.flush()
    pipe.close()


def say(text):
    print(f"launch: {text}", file=sys.stderr, flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--style", choices=sorted(STYLES), default="torchrun")
    p.add_argument("--master-addr", default="127.0.0.1")
    p.add_argument("--master-port", type=int, default=0, help="0: a free port")
    p.add_argument("--net", action="store_true", help="NCCL over sockets, as between hosts")
    p.add_argument("--grace", type=float, default=0.0)
    p.add_argument("--kill-after", type=float, default=5.0)
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or not 1 <= args.ranks <= 1024 or args.grace < 0 or args.kill_after < 0:
        p.error("give --ranks 1 to 1024, --grace and --kill-after of 0 or more, then -- PROGRAM")
    port = args.master_port or free_port(args.master_addr)

    lock, threads, procs = threading.Lock(), [], []
    start = time.monotonic()
    for r in range(args.ranks):
        proc = subprocess.Popen(command, env=rank_env(args, r, port), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)  # its own group
        procs.append(proc)
        say(f"rank {r}: pid {proc.pid}")
        for pipe, out in ((proc.stdout, sys.stdout.buffer), (proc.stderr, sys.stderr.buffer)):
            threads.append(threading.Thread(target=pump, args=(pipe, out, f"[{r}] ".encode(), lock)))
            threads[-1].start()

    stop = []  # the launcher itself was told to stop: SIGINT or SIGTERM
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, _: stop.append(128 + s))
    codes = [None] * args.ranks
    failed_at, first_code, termed_at = None, 0, None
    while None in codes:
        now = time.monotonic()
        for r, proc in enumerate(procs):
            if codes[r] is None and proc.poll() is not None:
                codes[r] = proc.returncode
                how = f"exited with code {codes[r]}" if codes[r] >= 0 else f"killed by signal {-codes[r]}"
                since = f", {now - failed_at:.2f} s after the first failure" if failed_at else ""
                say(f"rank {r} {how} at {now - start:.2f} s{since}")
                if codes[r] != 0 and failed_at is None:
                    failed_at, first_code = now, codes[r] if codes[r] > 0 else 128 - codes[r]
        if stop and failed_at is None:
            failed_at, first_code = now, stop[0]
        if failed_at is not None and termed_at is None and now - failed_at >= args.grace and None in codes:
            say(f"stopping rank(s) {[r for r in range(args.ranks) if codes[r] is None]}: SIGTERM, "
                f"then SIGKILL after {args.kill_after:g} s")
            termed_at = now
            signal_groups(procs, codes, signal.SIGTERM)
        if termed_at is not None and now - termed_at >= args.kill_after:
            signal_groups(procs, codes, signal.SIGKILL)
        time.sleep(POLL_S)
    signal_groups(procs, [None] * args.ranks, signal.SIGKILL)  # what a rank left behind in its group
    for t in threads:
        t.join(timeout=args.kill_after + 1)
    return first_code


def signal_groups(procs, codes, sig):
    for proc, code in zip(procs, codes):
        if code is None:
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


if __name__ == "__main__":
    sys.exit(main())
