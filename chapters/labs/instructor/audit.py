"""The symbol audit: what a submission's object files define and call that the
reference's do not.

A region is a few lines inside one function. Whatever it adds to the object's
symbols beyond the reference's is either harmless (a template instance, a local
helper the compiler kept) or an attempt to reach outside the task. Rejected:
  - a definition of a CUDA, driver, NCCL, library or harness symbol (cuda*, cu*,
    nccl*, cublas*, sw::..., main): interposing the timer, the checks or the API;
  - a new static initialiser (.init_array entry): code that runs before main;
  - a call to processes, threads, dynamic loading, the environment, or streams,
    events and cache settings of its own (fork, exec*, system, popen,
    pthread_create, std::thread, dlopen, dlsym, getenv, cudaStreamCreate*,
    cudaEventCreate*, cudaDeviceSetLimit, ...).
Files are the sandbox's business: inside it everything is read-only and /tmp is
empty, so a region may open what it likes and change nothing.
"""
import re
import subprocess
from pathlib import Path

BANNED_DEFINED = re.compile(r"^(cuda\w*|cu[A-Z]\w*|nccl\w*|cublas\w*|cub::.*|sw::.*|main|__cuda\w*|"
                            r"clock_gettime|gettimeofday|time|exit|_exit|abort)$")
BANNED_CALLED = re.compile(
    r"^(fork|vfork|clone\d*|exec\w*|system|popen|posix_spawn\w*|pthread_create|std::thread::\w+|"
    r"dlopen|dlsym|dlvsym|dlmopen|getenv|secure_getenv|setenv|putenv|syscall|ptrace|kill|"
    r"cudaStreamCreate\w*|cudaEventCreate\w*|cudaStreamSetAttribute|cudaCtxResetPersistingL2Cache|"
    r"cudaDeviceSetLimit|cudaMemcpyAsync|cudaLaunchHostFunc|cudaStreamAddCallback|cudaGraph\w*|"
    r"cudaDeviceSetCacheConfig|cudaFuncSetAttribute|cudaDeviceReset|cudaSetDevice|cuLaunch\w*|cuModule\w*|"
    r"cudaGetDriverEntryPoint\w*|cuGetProcAddress\w*)$")


def symbols(obj):
    """({defined global names}, {undefined names}, static initialisers) of one object."""
    r = subprocess.run(["nm", "-C", "--defined-only", "-g", str(obj)], capture_output=True, text=True)
    defined = set()
    for line in r.stdout.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "TtWwDdBbRrVv":
            defined.add(_plain(parts[2]))
    r = subprocess.run(["nm", "-C", "-u", str(obj)], capture_output=True, text=True)
    undefined = {_plain(line.split()[-1]) for line in r.stdout.splitlines() if line.strip()}
    r = subprocess.run(["readelf", "-S", "-W", str(obj)], capture_output=True, text=True)
    init = 0
    for line in r.stdout.splitlines():
        m = re.search(r"\.init_array\S*\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)", line)
        if m:
            init += int(m.group(1), 16) // 8
    return defined, undefined, init


def _plain(name):
    """`sw::summarize(std::vector<double, ...>)` -> `sw::summarize`; `fopen@GLIBC_2.2.5` -> `fopen`."""
    name = name.split("@")[0]
    depth, out = 0, []
    for ch in name:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out).strip()


def init_size(obj):
    """Bytes of the object's static-initialiser functions (_GLOBAL__sub_I_*): GCC puts
    every dynamic initialiser of a file into one, so a new one grows it."""
    if obj is None:
        return 0
    r = subprocess.run(["nm", "-S", str(obj)], capture_output=True, text=True)
    total = 0
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3].startswith("_GLOBAL__sub_I"):
            total += int(parts[1], 16)
    return total


def ref_path(ref_objs, name):
    return next((o for o in ref_objs if Path(o).name == name), None)


def objects(build, chapter):
    """The object files of one chapter's program in a meson build folder."""
    return sorted((Path(build) / "chapters" / f"{chapter}.p").glob("*.o"))


def audit(sub_objs, ref_objs):
    """[problem] of a submission's objects against the reference's (matched by name)."""
    ref = {Path(o).name: symbols(o) for o in ref_objs}
    problems = []
    for o in sub_objs:
        name = Path(o).name
        d, u, init = symbols(o)
        rd, ru, rinit = ref.get(name, (set(), set(), 0))
        for s in sorted(d - rd):
            if BANNED_DEFINED.match(s):
                problems.append(f"defines {s}: a region may not replace the API, the timer or the harness")
        for s in sorted(u - ru):
            if BANNED_CALLED.match(s):
                problems.append(f"calls {s}: a region may not start processes or threads, load libraries, open "
                                "files, read the environment or use its own streams")
        if init > rinit:
            problems.append(f"adds {init - rinit} static initialiser(s): a region may not run code before main")
        elif init_size(o) > init_size(ref_path(ref_objs, name)):
            problems.append("adds a static initialiser: a region may not run code before main")
    return problems
