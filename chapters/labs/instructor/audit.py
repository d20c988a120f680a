"""The symbol audit: what a submission's object files define and call that the
reference's do not.

A region is a few lines inside one function. It may define nothing outside that
function: every symbol a submission's object defines must be one the reference's
object defines (the task's own code), or belong to the region's function (a local
static, a lambda, a local class: `f()::x`), or be a clone of a function of the
reference's sources (`.constprop.0`, `.isra.0`, `.cold`: the optimizer's, which
inlines a function in one build and not in another), or an instance of a library
template or of the harness's inline code (a weak `std::` or `sw::` symbol, which
the strong definition of a library would win over). Anything else is rejected with
its name: a C
library function (printf, fwrite, malloc: at link time it replaces the one the
harness calls), an atexit handler or a constructor function, a static object at
namespace scope, a global of any kind. Named first, with their own reason:
  - a definition of a CUDA, driver, NCCL, library or harness symbol (cuda*, cu*,
    nccl*, cublas*, sw::..., main): interposing the timer, the checks or the API;
  - a new static initialiser (.init_array entry): code that runs before main;
  - a call to processes, threads, dynamic loading, the environment, or streams,
    events and cache settings of its own (fork, exec*, system, popen,
    pthread_create, std::thread, dlopen, dlsym, getenv, cudaStreamCreate*,
    cudaEventCreate*, cudaDeviceSetLimit, ...), or one that ends the process with
    an exit code of its choosing or registers code to run at exit (exit, _exit,
    _Exit, quick_exit, pthread_exit, atexit, on_exit: a host region that prints a
    passing run's records and then ends the process with 0 agrees with its exit
    code; the harnesses of the GPU chapters call exit themselves, so there only a
    region of host code at namespace scope could add the call, which the rules and
    the allowlist stop first).
Files are the sandbox's business: inside it everything is read-only and /tmp is
empty, so a region may open what it likes and change nothing.
"""
import functools
import hashlib
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
    r"cudaGetDriverEntryPoint\w*|cuGetProcAddress\w*|"
    r"exit|_exit|_Exit|quick_exit|at_quick_exit|pthread_exit|atexit|on_exit|__cxa_thread_atexit\w*)$")
# Symbols every object may gain or lose with the compiler's choices: assembler labels
# (.LC0), COMDAT group names (type n), the personality routine's reference.
IGNORED = re.compile(r"^(\.L|DW\.ref\.)")
# A name local to a function (`_ZZ`: f()::x, lambdas, local classes' typeinfo and
# vtables, guard variables and thread_local helpers of local statics).
LOCAL_TO_FUNCTION = re.compile(r"^_Z(?:GV|GR|TH|TW|TS|TI|TV|TT)?Z")
CLONE = re.compile(r"(?:\.(?:constprop|isra|part|cold|lto_priv|localalias|clone|specialized)(?:\.\d+)*)+$")
LIBRARY_TEMPLATE = re.compile(r"^(?:std|__gnu_cxx|__cxxabiv1|cuda::std)::")


def by_content(read):
    """`read(obj)` once per object content: a grade audits the reference's objects against
    every submission's, and a submission's objects once per task; nm on every call cost
    seconds per submission. Keyed by the bytes, not the path: a tree's objects are rebuilt
    in place for each submission."""
    seen = {}

    @functools.wraps(read)
    def wrapper(obj):
        if obj is None:
            return read(obj)
        digest = hashlib.sha256(Path(obj).read_bytes()).digest()
        if digest not in seen:
            seen[digest] = read(obj)
        return seen[digest]
    return wrapper


@by_content
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


@by_content
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


ANON = "_GLOBAL__N__"
ANON_ID = re.compile(r"_GLOBAL__N__[0-9a-f]+_\d+_\w+")


def normal(mangled):
    """A mangled name with the parts that differ between two builds of the same code made
    the same: nvcc names a file's anonymous namespace `_GLOBAL__N__<hash>_<file>_<first
    external function>` (another folder, or a new function before main, renames every
    symbol in it), the lengths before its kernels' stubs follow, and GCC names a file's
    static initialiser after its first function (`_GLOBAL__sub_I_main`)."""
    out, i = [], 0
    while True:
        j = mangled.find(ANON, i)
        if j < 0:
            out.append(mangled[i:])
            break
        d = j
        while d > i and mangled[d - 1].isdigit():
            d -= 1
        for start in range(j - 1, d - 1, -1):  # the shortest length prefix that spans the whole name
            n = int(mangled[start:j])
            if j + n <= len(mangled) and ANON_ID.fullmatch(mangled[j:j + n]):
                out.append(mangled[i:start] + "<anon>")
                i = j + n
                break
        else:
            out.append(mangled[i:j + len(ANON)])
            i = j + len(ANON)
    name = "".join(out)
    name = re.sub(r"\d+(__device_stub__|__wrapper__device_stub)", r"\1", name)
    return re.sub(r"^_GLOBAL__sub_I_.*", "_GLOBAL__sub_I_", name)


@by_content
def definitions(obj):
    """{normal(mangled name): (nm type, demangled name)} of every symbol the object
    defines, global or local (not the assembler's labels and COMDAT group names)."""
    if obj is None:
        return {}
    raw = subprocess.run(["nm", "-p", "--defined-only", str(obj)], capture_output=True, text=True).stdout
    dem = subprocess.run(["nm", "-p", "-C", "--defined-only", str(obj)], capture_output=True, text=True).stdout
    out = {}
    for a, b in zip(raw.splitlines(), dem.splitlines()):
        pa, pb = a.split(" ", 2), b.split(" ", 2)
        if len(pa) != 3 or len(pb) != 3 or pa[1] in "nN" or IGNORED.match(pa[2]):
            continue
        out[normal(pa[2])] = (pa[1], pb[2])
    return out


SPECIAL = re.compile(r"^(?:typeinfo name for|typeinfo for|vtable for|VTT for|guard variable for|"
                     r"construction vtable for) ")


def qualified(demangled):
    """The qualified name of a symbol without its return type, parameters, template
    arguments and clone suffix: `void std::__adjust_heap<...>(...) [clone .isra.0]` ->
    `std::__adjust_heap`; `(anonymous namespace)::sum_range(int const*, long)` -> `::sum_range`."""
    name = re.sub(r"(?: \[clone [^\]]*\])+$", "", demangled)  # .constprop.0 [clone .isra.0]: one or more
    name = _plain(SPECIAL.sub("", name))
    return name.split(" ")[-1] if " " in name and not name.rstrip().endswith("operator") else name


def base_name(demangled):
    """The unqualified name of a symbol: `(anonymous namespace)::sum_range(int const*, long)
    [clone .constprop.0]` -> `sum_range`."""
    return qualified(demangled).split("::")[-1].strip()


def own_functions(texts):
    """The names of the functions the reference's sources (texts) define: the region's
    function among them, which one build inlines and another keeps."""
    import sys  # noqa: PLC0415
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from labkit import cxx, static  # noqa: PLC0415
    return {name for text in texts for name, _, _ in static.functions(cxx.tokens(text)) if name != "lambda"}


def extra_definitions(defs, ref_defs, own=()):
    """[(demangled, type)] of the definitions in `defs` that the allowlist does not
    allow against the reference's `ref_defs` (see the module's text)."""
    ref_bases = {CLONE.sub("", m) for m in ref_defs}
    out = []
    for mangled, (kind, demangled) in defs.items():
        if mangled in ref_defs or CLONE.sub("", mangled) in ref_bases or LOCAL_TO_FUNCTION.match(mangled):
            continue
        if LIBRARY_TEMPLATE.match(qualified(demangled)) and (kind in "WwVvu" or CLONE.search(mangled)):
            continue  # an instance of a library template (std::min at -O0), or the optimizer's clone of one
        if kind in "WwVvu" and qualified(demangled).startswith("sw::"):
            continue  # an instance of the harness's inline code that this build did not inline
        if kind in "Tt" and base_name(demangled) in own and base_name(demangled) != "main":
            continue  # a function of the reference's sources that its build inlined
        out.append((demangled, kind))
    return out


def objects(build, chapter):
    """The object files of one chapter's program in a meson build folder."""
    return sorted((Path(build) / "chapters" / f"{chapter}.p").glob("*.o"))


def audit(sub_objs, ref_objs, own=()):
    """[problem] of a submission's objects against the reference's (matched by name).
    own: the names of the functions the reference's sources define (own_functions)."""
    ref = {Path(o).name: (symbols(o), definitions(o)) for o in ref_objs}
    problems = []
    for o in sub_objs:
        name = Path(o).name
        d, u, init = symbols(o)
        defs = definitions(o)
        (rd, ru, rinit), ref_defs = ref.get(name, ((set(), set(), 0), {}))
        # The harness's inline functions (sw::summarize) come and go with the optimizer's
        # inlining: a weak instance is not a replacement (the library's strong one wins).
        strong = {_plain(dm) for kind, dm in defs.values() if kind not in "WwVvu"}
        harness_inline = {_plain(dm) for kind, dm in defs.values()
                          if kind in "WwVvu" and _plain(dm).startswith("sw::")} - strong
        for s in sorted(d - rd):
            if BANNED_DEFINED.match(s) and s not in harness_inline:
                problems.append(f"defines {s}: a region may not replace the API, the timer or the harness")
        for s in sorted(u - ru):
            if BANNED_CALLED.match(s):
                problems.append(f"calls {s}: a region may not start processes or threads, load libraries, open "
                                "files, read the environment, use its own streams, or end the process or run "
                                "code at its exit")
        if init > rinit:
            problems.append(f"adds {init - rinit} static initialiser(s): a region may not run code before main")
        elif init_size(o) > init_size(ref_path(ref_objs, name)):
            problems.append("adds a static initialiser: a region may not run code before main")
        for demangled, kind in sorted(extra_definitions(defs, ref_defs, own)):
            plain = _plain(demangled)
            if BANNED_DEFINED.match(plain):
                continue  # said above
            if plain.startswith("_GLOBAL__sub_I") or plain.startswith("__tcf_"):
                what = "a static initialiser or destructor"
            elif kind in "TtWwi":
                what = "a function outside its function"
            else:
                what = "an object outside its function"
            problems.append(f"defines {demangled} ({what}): a region may define nothing beyond its task's "
                            "own code; a definition at namespace scope runs or replaces what the harness calls")
    return list(dict.fromkeys(problems))
