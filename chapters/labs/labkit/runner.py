"""Running a chapter's program for the checker: a process group and a time limit per
run, the output capped, the JSON records read back, and (when grading) a sandbox.

    r = run([exe, "--verify-only", "--json"], timeout=120)
    r.checks      -> [Check(what, ok, detail)] from the program's "check" records
    r.summary     -> {"checks": N, "failed": M} or None if the program ended before it

LAB_RUN_LOG=<file> in the environment appends a line per run to that file (its seconds,
exit code and command), where an instructor sees what a slow grade spends its time on;
the programs run do not see the variable.
"""
import ctypes
import json
import os
import shlex
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

EXIT_SKIP = 77
OUTPUT_CAP = 1 << 20   # bytes kept of a program's output; the rest is counted


@dataclass
class Check:
    what: str
    ok: bool
    detail: str


@dataclass
class Run:
    cmd: list
    code: int
    out: str
    timed_out: bool = False
    timeout: float = 0.0
    elapsed: float = 0.0
    dropped: int = 0
    checks: list = field(default_factory=list)
    results: list = field(default_factory=list)
    summary: dict = None

    def parse(self):
        """Reads the program's JSON records (one per line) out of its output."""
        for line in self.out.splitlines():
            if not line.startswith("{"):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            kind = rec.get("record")
            if kind == "check":
                self.checks.append(Check(str(rec.get("what", "")), rec.get("ok") is True, str(rec.get("detail", ""))))
            elif kind == "result":
                self.results.append(rec)
            elif kind == "summary":
                self.summary = rec
        return self


def run(cmd, timeout, env=None, cwd=None, sandbox=None):
    """Runs cmd in its own process group (inside `sandbox` if given); at the time
    limit the whole group is killed. Keeps the first OUTPUT_CAP bytes of
    stdout+stderr and counts the rest."""
    full_env = dict(os.environ, **(env or {}))
    full_env.pop("LAB_RUN_LOG", None)
    argv = sandbox.wrap(cmd) if sandbox else list(cmd)
    start = time.monotonic()
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                             env=full_env, cwd=cwd)
    except OSError as e:
        return Run(list(cmd), 127, f"cannot run {cmd[0]}: {e}", timeout=timeout).parse()
    kept, dropped = bytearray(), [0]

    def reader():
        while True:
            chunk = p.stdout.read(65536)
            if not chunk:
                return
            room = max(OUTPUT_CAP - len(kept), 0)
            kept.extend(chunk[:room])
            dropped[0] += len(chunk) - min(len(chunk), room)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    timed_out = False
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    try:  # the group: a child left behind by the program goes too
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    p.wait()
    t.join(timeout=5)
    r = Run(list(cmd), p.returncode, kept.decode(errors="replace"), timed_out, timeout, time.monotonic() - start,
            dropped[0]).parse()
    log_run(r)
    return r


_RUN_LOG_LOCK = threading.Lock()


def log_run(r):
    """One line for LAB_RUN_LOG, if set: seconds, exit code (TIMEOUT past the limit), command."""
    path = os.environ.get("LAB_RUN_LOG")
    if not path:
        return
    line = (f"{r.elapsed:8.1f} s  exit {r.code}{' TIMEOUT' if r.timed_out else ''}  "
            f"{' '.join(shlex.quote(str(c)) for c in r.cmd)}\n")
    with _RUN_LOG_LOCK, open(path, "a") as f:
        f.write(line)


# --- is there a GPU? ----------------------------------------------------------------------------

def gpu_present():
    """(True, "") when the CUDA driver sees a device, else (False, why). Asks the
    driver library itself, so the answer does not depend on what has been built."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False, "no CUDA driver is installed (libcuda.so.1 not found)"
    if cuda.cuInit(0) != 0:
        return False, "the CUDA driver found no usable device (cuInit failed)"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return False, "no CUDA device is visible"
    return True, ""


# --- the sandbox -------------------------------------------------------------------------------

class Sandbox:
    """bubblewrap around every graded run: the whole file system read-only, a fresh
    empty /tmp and /dev/shm, no network, its own process ids, and the folders in `hide`
    replaced by empty ones (the hidden cases, the instructor's files, other submissions),
    except the read-only `show` folders inside them (the program being graded) and the
    writable `write` folders (the one folder a graded run writes its outputs into)."""

    def __init__(self, hide=(), show=(), write=()):
        self.bwrap = shutil.which("bwrap")
        self.hide, self.show, self.write = list(hide), list(show), list(write)
        self.why = ""
        if not self.bwrap:
            self.why = "bubblewrap (bwrap) is not installed"
        else:
            probe = subprocess.run(self._prefix() + ["true"], capture_output=True, text=True)
            if probe.returncode != 0:
                self.why = "bwrap cannot start here: " + (probe.stderr.strip().splitlines() or ["?"])[-1][:160]

    @property
    def available(self):
        return not self.why

    def _prefix(self, show=()):
        # /dev is the host's (the GPU's device files), but /dev/shm in it is writable by
        # anyone: an empty one of its own, so that nothing written there outlives the run.
        argv = [self.bwrap or "bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--tmpfs", "/dev/shm",
                "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-net", "--unshare-pid", "--unshare-ipc",
                "--die-with-parent"]
        for h in self.hide:
            argv += ["--tmpfs", str(h)]
        for s in list(self.show) + list(show):
            argv += ["--ro-bind", str(s), str(s)]
        for w in self.write:
            argv += ["--bind", str(w), str(w)]
        return argv + ["--"]

    def wrap(self, cmd):
        return self._prefix() + list(cmd) if self.available else list(cmd)

    def showing(self, *paths):
        """The same sandbox with more read-only folders visible."""
        other = Sandbox.__new__(Sandbox)
        other.bwrap, other.hide, other.show, other.write, other.why = (self.bwrap, self.hide, self.show + list(paths),
                                                                       self.write, self.why)
        return other

    def writing(self, *paths):
        """The same sandbox with these folders writable (the dump of a graded run's outputs)."""
        other = self.showing()
        other.write = self.write + list(paths)
        return other
