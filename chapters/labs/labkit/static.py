"""What the checker can tell from a region's source alone, without a GPU.

Two kinds of finding:
  rules    a region must stay a piece of its function: balanced braces, no
           preprocessor directive, no assembler, no library. The grader rejects a
           region that breaks one (status FAIL), before anything is built.
  hints    common mistakes read off the code: a barrier that only some threads
           reach, a shared-memory index past the array for the task's block, a
           shuffle whose mask or offset differs between lanes, a full-mask shuffle that
           only some lanes reach, a global store with no
           bounds guard, an intrinsic CUDA 9 removed. "reject" hints are certain bugs
           (undefined behaviour or an out-of-bounds access) and fail the task when
           grading; "warn" hints are printed and linked to the handout.

Every hint names its rule; the handouts explain each rule under the same name.
The analysis reads the whole function around the region (the thread-index
variables the region uses are often declared before it), but reports only what
lies in the student's lines.
"""
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

from . import cxx
from .regions import find_regions

LIBRARY = re.compile(r"^(cub|thrust|cutlass|cudnn\w*|cublas\w*|cusparse\w*|cufft\w*|curand\w*|nvcuda|qsort)$")
STD_LIBRARY = ("sort", "stable_sort", "accumulate", "reduce", "transform_reduce")  # std::<name>: a library
BARRIERS = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__barrier_sync"}
OLD_INTRINSICS = {"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__any", "__all", "__ballot"}
SHUFFLES = {"__shfl_sync": (0,), "__shfl_up_sync": (0, 2), "__shfl_down_sync": (0, 2), "__shfl_xor_sync": (0, 2)}
THREAD_SEEDS = {"threadIdx", "__lane_id", "laneid"}
LANE_SEEDS = {"__lane_id", "laneid"}
WARP_SIZES = {"32", "kWarp", "warpSize", "kWarpSize"}
FULL_MASKS = {"0xffffffff", "0xFFFFFFFF", "0xffffffffu", "0xFFFFFFFFu", "0xffffffffU", "0xFFFFFFFFU", "kFullMask",
              "FULL_MASK"}
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "decltype", "static_assert"}
RULE_TITLES = {
    "leaves-function": "the region must stay inside its function",
    "directive": "no preprocessor directive in a region",
    "assembler": "no inline assembler in a region",
    "library": "no library call in a region",
    "barrier-in-branch": "a barrier that only some threads reach",
    "shared-out-of-bounds": "a shared-memory index past the end of the array",
    "shuffle-not-uniform": "a shuffle whose mask or offset differs between lanes",
    "shuffle-in-branch": "a full-mask shuffle that only some lanes reach",
    "store-without-guard": "a global store with no bounds guard",
    "removed-intrinsic": "an intrinsic that CUDA 9 removed",
}
REJECT = {"leaves-function", "directive", "assembler", "library", "barrier-in-branch", "shared-out-of-bounds",
          "removed-intrinsic"}


@dataclass
class Finding:
    rule: str
    file: str
    line: int
    message: str

    @property
    def severity(self):
        return "reject" if self.rule in REJECT else "warn"

    def text(self):
        return f"{self.file}:{self.line}: [{self.rule}] {self.message}"


# --- rules: what a region may contain ---------------------------------------------------------

def region_rules(body_lines, file, first_line):
    """Findings of the rules for one region body (lines), numbered from first_line."""
    text = "\n".join(body_lines)
    out = []
    toks = cxx.tokens(text)
    depth = {"{": 0, "(": 0, "[": 0}
    pairs = {"}": "{", ")": "(", "]": "["}
    for t in toks:
        line = first_line + t.line - 1
        if t.text in depth:
            depth[t.text] += 1
        elif t.text in pairs:
            depth[pairs[t.text]] -= 1
            if depth[pairs[t.text]] < 0:
                out.append(Finding("leaves-function", file, line,
                                   f"'{t.text}' closes a bracket opened before the region: the region would reach "
                                   "outside its function"))
                depth[pairs[t.text]] = 0
    for opener, d in depth.items():
        if d > 0:
            out.append(Finding("leaves-function", file, first_line + len(body_lines) - 1,
                               f"{d} '{opener}' left open at the end of the region"))
    for k, t in enumerate(toks):
        line = first_line + t.line - 1
        if t.text in ("#", "##"):
            nxt = toks[k + 1].text if k + 1 < len(toks) else ""
            if nxt != "pragma":
                out.append(Finding("directive", file, line, f"a preprocessor directive ('#{nxt}'): only #pragma "
                                   "is allowed in a region"))
        elif t.kind == "str" and re.search(r"\n[ \t]*#", t.text):
            out.append(Finding("directive", file, line, "a string literal holds a line that starts with '#': in the "
                               "preprocessor's output it would read as a directive or a line marker"))
        elif t.kind == "id" and t.text in ("asm", "__asm__", "__asm"):
            out.append(Finding("assembler", file, line, f"'{t.text}': inline assembler is not allowed in a region"))
        elif t.kind == "id" and LIBRARY.match(t.text):
            out.append(Finding("library", file, line, f"'{t.text}': the task must not call a library"))
        elif t.kind == "id" and t.text == "std" and k + 2 < len(toks) and toks[k + 1].text == "::" and \
                toks[k + 2].text in STD_LIBRARY:
            out.append(Finding("library", file, line, f"'std::{toks[k + 2].text}': the task must not call a library"))
    return out


# --- the structure around the region ----------------------------------------------------------

def _match(toks, k):
    """Index of the bracket that closes toks[k]."""
    opener = toks[k].text
    closer = {"(": ")", "{": "}", "[": "]"}[opener]
    depth = 0
    for j in range(k, len(toks)):
        if toks[j].text == opener:
            depth += 1
        elif toks[j].text == closer:
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def _statement_end(toks, k):
    """Index one past the end of the statement that starts at toks[k]."""
    if k >= len(toks):
        return k
    t = toks[k].text
    if t == "{":
        return _match(toks, k) + 1
    if t in ("if", "for", "while", "switch") and k + 1 < len(toks) and toks[k + 1].text == "(":
        j = _statement_end(toks, _match(toks, k + 1) + 1)
        if t == "if" and j < len(toks) and toks[j].text == "else":
            j = _statement_end(toks, j + 1)
        return j
    if t == "do":
        j = _statement_end(toks, k + 1)
        while j < len(toks) and toks[j].text != ";":
            j += 1
        return j + 1
    if t == "#":  # a pragma line: the rest of its line
        line = toks[k].line
        j = k
        while j < len(toks) and toks[j].line == line:
            j += 1
        return j
    ends = _top_level(toks, k, len(toks), ";")
    return ends[0] + 1 if ends else len(toks)


def _top_level(toks, lo, hi, sep):
    """Indices of the `sep` tokens in toks[lo:hi] outside any bracket opened there."""
    out, depth = [], 0
    for j in range(lo, hi):
        x = toks[j].text
        if x in "({[":
            depth += 1
        elif x in ")}]":
            depth -= 1
        elif x == sep and depth == 0:
            out.append(j)
    return out


@dataclass
class Control:
    kind: str        # if, else, for, while
    cond: list       # the condition's tokens (for: init; cond; step)
    start: int       # first token of the body
    end: int         # one past the last


def controls(toks, lo, hi):
    """Every if/else/for/while in toks[lo:hi] with the extent of its body."""
    out = []
    k = lo
    while k < hi:
        t = toks[k].text
        if t in ("if", "for", "while") and k + 1 < hi and toks[k + 1].text == "(":
            close = _match(toks, k + 1)
            body_end = _statement_end(toks, close + 1)
            out.append(Control(t, toks[k + 2:close], close + 1, body_end))
            if t == "if" and body_end < hi and toks[body_end].text == "else":
                out.append(Control("else", toks[k + 2:close], body_end + 1, _statement_end(toks, body_end + 1)))
        k += 1
    return out


def functions(toks):
    """[(name, body open index, body close index)] of the function definitions."""
    out = []
    for k, t in enumerate(toks):
        if t.text != "{" or k == 0:
            continue
        j = k - 1
        while j > 0 and toks[j].kind == "id" and toks[j].text in ("const", "noexcept", "override", "mutable"):
            j -= 1
        if toks[j].text != ")":
            continue
        depth, i = 0, j
        while i >= 0:  # back to the matching '('
            if toks[i].text == ")":
                depth += 1
            elif toks[i].text == "(":
                depth -= 1
                if depth == 0:
                    break
            i -= 1
        if i > 0 and toks[i - 1].kind == "id" and toks[i - 1].text not in CONTROL:
            out.append((toks[i - 1].text, k, _match(toks, k)))
        elif i > 0 and toks[i - 1].text == "]":  # a lambda
            out.append(("lambda", k, _match(toks, k)))
    return out


def _expression_end(toks, k, hi):
    """One past the end of the expression that starts at toks[k] (up to ; or , at depth 0)."""
    depth = 0
    while k < hi:
        x = toks[k].text
        if x in "([{":
            depth += 1
        elif x in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif x in (";", ",") and depth == 0:
            break
        k += 1
    return k


def tainted_names(toks, lo, hi, seeds=THREAD_SEEDS):
    """Names whose value depends on the thread (on `seeds`): assigned or initialised
    from an expression that uses a seed or another such name, in toks[lo:hi]."""
    names = set()
    for _ in range(6):
        before = len(names)
        for k in range(lo, hi):
            t = toks[k]
            if t.text not in ("=", "+=", "-=", "*=", "/=", "%=", "^=", "|=", "&=", "<<=", ">>=") or k == lo:
                continue
            target = toks[k - 1]
            if target.kind != "id":
                continue
            end = _expression_end(toks, k + 1, hi)
            if any(x.kind == "id" and (x.text in seeds or x.text in names) for x in toks[k + 1:end]):
                names.add(target.text)
        if len(names) == before:
            break
    return names


def _uses(toks, names, seeds=THREAD_SEEDS):
    return any(t.kind == "id" and (t.text in seeds or t.text in names) for t in toks)


# --- hints ------------------------------------------------------------------------------------

class FileView:
    """One source file read as tokens, with the regions of one task marked."""

    def __init__(self, path, rel, task_id):
        self.rel = rel
        self.text = Path(path).read_text()
        self.lines = self.text.split("\n")
        self.toks = cxx.tokens(self.text)
        self.spans = [(b + 2, e) for t, b, e, _ in find_regions(self.lines) if t == task_id]  # 1-based body lines

    def in_region(self, tok):
        return any(lo <= tok.line <= hi for lo, hi in self.spans)


def hints(view, shape=None):
    """The hints for the regions of one file. `shape` gives the task's launch:
    {"threadIdx.x": 256, "threadIdx.y": 1, "kThreads": 256, ...}: thread index
    ranges and the values of names (template parameters, sizes) the analysis needs."""
    toks, out = view.toks, []
    for name, open_, close in functions(toks):
        if not any(view.in_region(t) for t in toks[open_:close]):
            continue
        taint = tainted_names(toks, open_, close)
        ctrl = controls(toks, open_ + 1, close)
        out += _barrier_hints(view, toks, open_, close, taint, ctrl)
        out += _shuffle_hints(view, toks, open_, close, taint)
        out += _shuffle_branch_hints(view, toks, open_, close, taint, ctrl)
        out += _store_hints(view, toks, open_, close, taint, ctrl)
        out += _removed_hints(view, toks, open_, close)
        if shape:
            out += _bounds_hints(view, toks, open_, close, ctrl, shape)
    seen, unique = set(), []
    for f in out:
        if (f.rule, f.line) not in seen:
            seen.add((f.rule, f.line))
            unique.append(f)
    return unique


def _barrier_hints(view, toks, lo, hi, taint, ctrl):
    out = []
    for k in range(lo, hi):
        t = toks[k]
        if t.text not in BARRIERS:
            continue
        for c in ctrl:
            if c.start <= k < c.end and _uses(c.cond, taint) and (view.in_region(t) or
                                                                  any(view.in_region(x) for x in c.cond)):
                out.append(Finding("barrier-in-branch", view.rel, t.line,
                                   f"{t.text}() inside '{c.kind} ({' '.join(x.text for x in c.cond)[:60]})', whose "
                                   "condition depends on the thread: threads that skip it never arrive "
                                   "(undefined behaviour); move the barrier out of the branch"))
                break
        else:  # an early return under a thread-dependent condition, before this barrier
            for c in ctrl:
                if c.kind != "if" or c.end > k or not _uses(c.cond, taint):
                    continue
                if any(toks[j].text == "return" for j in range(c.start, c.end)) and \
                        (view.in_region(t) or any(view.in_region(toks[j]) for j in range(c.start, c.end))):
                    out.append(Finding("barrier-in-branch", view.rel, t.line,
                                       f"{t.text}() after a thread-dependent 'return' (line {toks[c.start].line}): "
                                       "the threads that returned never arrive"))
                    break
    return out


def _args(toks, k):
    """[(start, end)] token spans of the arguments of the call whose '(' is toks[k]."""
    close = _match(toks, k)
    spans, start = [], k + 1
    for j in _top_level(toks, k + 1, close, ","):
        spans.append((start, j))
        start = j + 1
    spans.append((start, close))
    return spans


def _shuffle_hints(view, toks, lo, hi, taint):
    out = []
    for k in range(lo, hi - 1):
        t = toks[k]
        if t.text not in SHUFFLES or toks[k + 1].text != "(" or not view.in_region(t):
            continue
        spans = _args(toks, k + 1)
        for a in SHUFFLES[t.text]:
            if a < len(spans) and _uses(toks[spans[a][0]:spans[a][1]], taint):
                what = "mask" if a == 0 else "offset"
                out.append(Finding("shuffle-not-uniform", view.rel, t.line,
                                   f"the {what} of {t.text} depends on the lane: every lane of the mask must pass "
                                   f"the same {what}"))
    return out


def _lane_expression(toks, taint):
    """Whether the tokens compute a lane (the thread's place in its warp): a thread-dependent
    value taken % 32 (or % kWarp, warpSize) or & 31, or __lane_id / laneid."""
    if any(t.text in LANE_SEEDS for t in toks):
        return True
    if not _uses(toks, taint):
        return False
    for k, t in enumerate(toks):
        after = [x.text for x in toks[k + 1:k + 4]]
        if t.text == "%" and any(a in WARP_SIZES for a in after):
            return True
        if t.text == "&" and after[:1] == ["31"]:
            return True
    return False


def lane_names(toks, lo, hi, taint):
    """Names that hold the lane, or a value computed from it, in toks[lo:hi]."""
    seeds = set()
    for k in range(lo + 1, hi):
        if toks[k].text == "=" and toks[k - 1].kind == "id" and \
                _lane_expression(toks[k + 1:_expression_end(toks, k + 1, hi)], taint):
            seeds.add(toks[k - 1].text)
    return seeds | tainted_names(toks, lo, hi, seeds=seeds | LANE_SEEDS)


def _shuffle_branch_hints(view, toks, lo, hi, taint, ctrl):
    """A shuffle whose mask names the whole warp, inside an if, for or while whose condition
    depends on the lane: the lanes that skip it are named in the mask but never arrive.
    (A condition on the warp, such as threadIdx.x < 32, is the same in every lane: no hint.)"""
    lanes = lane_names(toks, lo, hi, taint)
    out = []
    for k in range(lo, hi - 1):
        t = toks[k]
        if t.text not in SHUFFLES or toks[k + 1].text != "(" or not view.in_region(t):
            continue
        mask = toks[slice(*_args(toks, k + 1)[0])]
        if not mask or mask[-1].text not in FULL_MASKS:
            continue
        for c in ctrl:
            if c.start <= k < c.end and (_uses(c.cond, lanes, seeds=LANE_SEEDS) or _lane_expression(c.cond, taint)):
                out.append(Finding("shuffle-in-branch", view.rel, t.line,
                                   f"{t.text} with the full mask inside '{c.kind} ({' '.join(x.text for x in c.cond)[:60]})'"
                                   ", whose condition depends on the lane: the lanes that skip it never arrive "
                                   "(undefined behaviour); shuffle in every lane, then use the value under the "
                                   "condition"))
                break
    return out


RELATIONAL = {"<", ">", "<=", ">="}


def _comparison_names(toks, lo, hi):
    """The names the function assigns an expression that compares something
    (`const bool inside = r < rows && c < cols;`): a condition that names one compares
    as the expression would."""
    names = set()
    for k in range(lo + 1, hi):
        if toks[k].text == "=" and toks[k - 1].kind == "id" and \
                _compares_outside_casts(toks[k + 1:_expression_end(toks, k + 1, hi)]):
            names.add(toks[k - 1].text)
    return names


def _compares_outside_casts(expr):
    """Whether an expression holds a relational operator that is not the angle bracket
    of a cast (static_cast<int64_t>(i) compares nothing)."""
    k = 0
    while k < len(expr):
        if expr[k].text in cxx.CAST and k + 1 < len(expr) and expr[k + 1].text == "<":
            while k < len(expr) and expr[k].text != ">":
                k += 1
        elif expr[k].text in RELATIONAL:
            return True
        k += 1
    return False


def _compares(cond, named):
    return any(x.text in RELATIONAL or x.text in named for x in cond)


def _early_return(toks, lo, k, named=frozenset()):
    """Whether an `if (...) return;` (or `{ return; }`) whose condition compares
    something (directly, or through a name in `named`) comes before token k in the
    function: the threads past the edge have left, as an enclosing guard would keep
    them out."""
    for j in range(lo, k):
        if toks[j].text != "if" or j + 1 >= k or toks[j + 1].text != "(":
            continue
        close = _match(toks, j + 1)
        nxt = close + 1 + (close + 1 < k and toks[close + 1].text == "{")
        if nxt < k and toks[nxt].text == "return" and _compares(toks[j + 2:close], named):
            return True
    return False


def _store_hints(view, toks, lo, hi, taint, ctrl):
    """A store p[i] = ... (or an atomic on &p[i]) into global memory, i from the
    thread AND the block index (an element of the whole grid), with no enclosing
    condition that compares anything (itself or through a name assigned a comparison)
    and no early return on one before it."""
    block = tainted_names(toks, lo, hi, {"blockIdx"})
    named = _comparison_names(toks, lo, hi)
    shared = set()
    for j in range(lo, hi):  # declarations: __shared__ T name[...]
        if toks[j].text == "__shared__":
            m = j + 1
            while m < hi and toks[m].kind == "id":
                m += 1
            shared.add(toks[m - 1].text)
    locals_ = {toks[j].text for j in range(lo + 1, hi - 1)
               if toks[j].kind == "id" and toks[j + 1].text in ("[",) and toks[j - 1].kind == "id"
               and toks[j - 1].text not in ("return",)}  # T name[N]: local arrays
    out = []
    for k in range(lo + 1, hi):
        t = toks[k]
        if t.text != "[" or toks[k - 1].kind != "id" or not view.in_region(t):
            continue
        name = toks[k - 1].text
        if name in shared or name in locals_ or name in THREAD_SEEDS:
            continue
        close = _match(toks, k)
        after = toks[close + 1].text if close + 1 < len(toks) else ""
        before = toks[k - 2].text if k >= 2 else ""
        if after not in ("=", "+=", "-=", "|=", "&=", "^=") and before != "&":
            continue
        if not _uses(toks[k + 1:close], taint) or not _uses(toks[k + 1:close], block, {"blockIdx"}):
            continue
        guarded = any(c.start <= k < c.end and _compares(c.cond, named) for c in ctrl)
        if not guarded and not _early_return(toks, lo, k, named):
            out.append(Finding("store-without-guard", view.rel, t.line,
                               f"'{name}[...]' is written at an index from the thread index with no bounds check "
                               "around it: threads of the last, partial block write past the end"))
    return out


def _removed_hints(view, toks, lo, hi):
    return [Finding("removed-intrinsic", view.rel, t.line,
                    f"{t.text}() was removed in CUDA 9: use {t.text}_sync(mask, ...) with the mask of the lanes "
                    "that take part")
            for t in toks[lo:hi] if t.text in OLD_INTRINSICS and view.in_region(t)]


# --- shared-memory bounds, by running the index arithmetic ------------------------------------

class _Unknown(Exception):
    pass


def _py(toks, env):
    """A C expression as Python, with the names of env; raises _Unknown otherwise."""
    out = []
    k = 0
    while k < len(toks):
        t = toks[k]
        if t.kind == "id" and k + 2 < len(toks) and toks[k + 1].text == "." and t.text in ("threadIdx", "blockDim"):
            key = f"{t.text}.{toks[k + 2].text}"
            if key not in env:
                raise _Unknown(key)
            out.append(f"({env[key]})")
            k += 3
            continue
        if t.kind == "id" and k + 1 < len(toks) and toks[k + 1].text == "::":
            k += 2
            continue
        if t.kind == "id" and t.text in cxx.CAST and k + 1 < len(toks) and toks[k + 1].text == "<":
            j = k
            while j < len(toks) and toks[j].text != ">":
                j += 1
            k = j + 1
            continue
        if t.kind == "num":
            v = cxx.number_value(t.text)
            if v is None or "." in v:
                raise _Unknown(t.text)
            out.append(v)
        elif t.kind == "id":
            if t.text in ("int", "int64_t", "unsigned", "uint32_t", "int32_t"):
                k += 1
                continue
            if t.text not in env or env[t.text] is MISSING:
                raise _Unknown(t.text)
            out.append(f"({env[t.text]})")
        elif t.text in ("&&", "||", "!"):
            out.append({"&&": " and ", "||": " or ", "!": " not "}[t.text])
        elif t.text == "/":
            out.append("//")
        elif t.text in ("+", "-", "*", "%", "(", ")", "<", ">", "<=", ">=", "==", "!=", "<<", ">>", "&", "|", "^"):
            out.append(t.text)
        else:
            raise _Unknown(t.text)
        k += 1
    return "".join(out)


def _value(toks, env):
    try:
        return eval(_py(toks, env), {"__builtins__": {}}, {})  # integer arithmetic on known names only
    except _Unknown:
        raise
    except Exception as e:  # noqa: BLE001
        raise _Unknown(str(e)) from e


def _bounds_hints(view, toks, lo, hi, ctrl, shape):
    """Every access a[i] (or a[i][j]) to a __shared__ array of known extent inside the
    region, evaluated for every thread of the block and every value of the enclosing
    simple for-loops; one finding per access that goes past the end."""
    extents, declared = {}, set()  # declared: the positions of the declarations' names
    for j in range(lo, hi):
        if toks[j].text != "__shared__":
            continue
        m = j + 1
        while m < hi and toks[m].kind == "id":
            m += 1
        declared.add(m - 1)
        name, dims, k = toks[m - 1].text, [], m
        try:
            while k < hi and toks[k].text == "[":
                close = _match(toks, k)
                dims.append(int(_value(toks[k + 1:close], dict(shape))))
                k = close + 1
        except _Unknown:
            continue
        if dims:
            extents[name] = dims
    for name, size in shape.items():
        if name.startswith("array:"):
            extents[name[6:]] = [size] if isinstance(size, int) else list(size)
    if not extents:
        return []
    consts = {k: v for k, v in shape.items() if not k.startswith("array:")}
    threads = {k: v for k, v in shape.items() if k.startswith("threadIdx.")}
    out = []
    for k in range(lo + 1, hi):
        t = toks[k]
        if t.text != "[" or toks[k - 1].text not in extents or not view.in_region(t):
            continue
        if k - 1 in declared or (k >= 2 and toks[k - 2].kind == "id" and toks[k - 2].text not in CONTROL | {"else", "case"}):
            continue  # a declaration (`type name[...]`), not an access
        name = toks[k - 1].text
        subs, j = [], k
        while j < len(toks) and toks[j].text == "[":
            close = _match(toks, j)
            subs.append(toks[j + 1:close])
            j = close + 1
        loops = [c for c in ctrl if c.kind == "for" and c.start <= k < c.end]
        guards = [c for c in ctrl if c.kind in ("if", "else", "while") and c.start <= k < c.end]
        found = _evaluate_access(name, subs, extents[name], loops, guards, _local_values(toks, lo, hi, k),
                                 _assigned(toks, lo, hi), consts, threads)
        if found:
            out.append(Finding("shared-out-of-bounds", view.rel, t.line, found))
    return out


DECL_TYPES = {"int", "int64_t", "unsigned", "const", "uint32_t", "int32_t", "auto", "long", "size_t"}
ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "^=", "|=", "&=", "<<=", ">>="}


def _declared_at(toks, lo, j):
    """Whether toks[j] (an '=' ) initialises a declaration `T name = ...` (or `T a = x, name = ...`)."""
    if toks[j - 1].kind != "id":
        return False
    before = toks[j - 2]
    if before.kind == "id" and before.text in DECL_TYPES:
        return True
    if before.text == ",":  # a later declarator: the statement must start with a type
        m = j - 2
        while m > lo and toks[m - 1].text not in (";", "{", "}", ")"):
            m -= 1
        return toks[m].kind == "id" and toks[m].text in DECL_TYPES
    return False


def _enclosing(toks, lo, hi):
    """[(open, close, "{" or "(")] of every block and parenthesised group in toks[lo:hi]."""
    spans, stack = [], []
    for j in range(lo, hi):
        x = toks[j].text
        if x in ("{", "("):
            stack.append(j)
        elif x in ("}", ")") and stack:
            o = stack.pop()
            spans.append((o, j, toks[o].text))
    return spans


def _local_values(toks, lo, hi, k):
    """[(position, name, expression tokens)] of the declarations `T name = expr` of the
    function toks[lo:hi] that are in scope at toks[k], in the order they run. A declaration
    in a for-header or any other parentheses is not one (a loop variable: the loop binds it),
    and one in a block that does not enclose k is out of scope (a sibling loop's `index`)."""
    spans = _enclosing(toks, lo, hi)
    vals = []
    for j in range(lo + 1, k):
        if toks[j].text != "=" or not _declared_at(toks, lo, j):
            continue
        if any(o < j < c and kind == "(" for o, c, kind in spans):
            continue  # for (int i = ...), if (int x = ...), a call's argument
        blocks = [(o, c) for o, c, kind in spans if kind == "{" and o < j < c]
        if blocks and not (max(blocks)[0] < k < max(blocks)[1]):
            continue  # declared in a block that has closed before k
        end = j + 1
        while end < k and toks[end].text not in (";", ","):
            if toks[end].text in "([{":
                end = _match(toks, end)
            end += 1
        vals.append((j, toks[j - 1].text, toks[j + 1:end]))
    return vals


def _assigned(toks, lo, hi):
    """{name: [positions]} of the assignments and increments of plain names in
    toks[lo:hi] that are not a declaration's initialiser."""
    out = {}
    for j in range(lo + 1, hi):
        x = toks[j].text
        if x in ASSIGN and toks[j - 1].kind == "id" and toks[j - 2].text not in (".", "->") and \
                not (x == "=" and _declared_at(toks, lo, j)):
            out.setdefault(toks[j - 1].text, []).append(j)
        elif x in ("++", "--"):
            for m in (j - 1, j + 1):
                if lo < m < hi and toks[m].kind == "id" and toks[m - 1].text not in (".", "->"):
                    out.setdefault(toks[m].text, []).append(j)
    return out


MISSING = object()  # the value of a local the analysis cannot compute here: any use of it is _Unknown


def _loop_spec(c):
    """(variable, init, condition, step) of a simple for-loop, or None."""
    parts, cur, depth = [], [], 0
    for x in c.cond:
        if x.text == ";" and depth == 0:
            parts.append(cur)
            cur = []
            continue
        depth += x.text in "([{"
        depth -= x.text in ")]}"
        cur.append(x)
    parts.append(cur)
    if len(parts) != 3 or len(parts[0]) < 3:
        return None
    init = parts[0]
    eq = next((i for i, x in enumerate(init) if x.text == "="), None)
    if eq is None:
        return None
    return init[eq - 1].text, init[eq + 1:], parts[1], parts[2]


def _evaluate_access(name, subs, extent, loops, guards, locals_, assigned, consts, threads):
    """The first index of the access past the array's end, as a message, or None. The
    function's statements up to the access run in their order for every thread: each
    local is evaluated where it is declared, so that a local inside a loop gets the
    value of every iteration; a loop takes each of its values; an if (else, while)
    around the access is taken only where its condition holds. Anything the analysis
    cannot compute (a call, a name of unknown value, a local or a loop variable that
    is assigned again) makes it give up on the access: no finding."""
    events = []  # (position, kind, payload): the order in which they run
    for c in loops:
        spec = _loop_spec(c)
        if spec is None:
            return None
        header = (c.start - 1 - len(c.cond), c.start)
        if any(not header[0] <= j < header[1] for j in assigned.get(spec[0], [])):
            return None  # the loop variable changes inside its body as well
        events.append((c.start - 1, "loop", spec))
    for c in guards:
        events.append((c.start - 1, c.kind, c.cond))
    for pos, local, expr in locals_:
        events.append((pos, "local", (local, expr, bool(assigned.get(local)))))
    events.sort(key=lambda e: e[0])
    keys = sorted(threads)
    loop_vars = [e[2][0] for e in events if e[1] == "loop"]
    for values in itertools.product(*[range(threads[key]) for key in keys]):
        env = dict(consts)
        env.update({key: v for key, v in zip(keys, values)})
        try:
            hit = _run_events(events, 0, env, subs, extent)
        except _Unknown:
            return None
        if hit:
            idx, d, i, n, at = hit
            where = ", ".join(f"{key} = {v}" for key, v in zip(keys, values))
            loop = ", ".join(f"{v} = {at[v]}" for v in loop_vars)
            return (f"{name}{''.join(f'[{x}]' for x in idx)} with {where}"
                    f"{', ' + loop if loop else ''}: index {d + 1} is {i}, the array has {n}")
    return None


def _run_events(events, e, env, subs, extent, limit=4096):
    """Runs events[e:] in env; returns (indices, dimension, index, extent, env) of an access
    past the end, or None. A branch whose condition fails ends its path."""
    if e == len(events):
        idx = [_value(s, env) for s in subs]
        for d, (i, n) in enumerate(zip(idx, extent)):
            if i < 0 or i >= n:
                return idx, d, i, n, env
        return None
    _, kind, what = events[e]
    if kind == "local":
        local, expr, reassigned = what
        env = dict(env)
        try:
            env[local] = MISSING if reassigned else _value(expr, env)
        except _Unknown:
            env[local] = MISSING
        return _run_events(events, e + 1, env, subs, extent)
    if kind in ("if", "while", "else"):
        holds = bool(_value(what, env))
        if holds != (kind != "else"):
            return None
        return _run_events(events, e + 1, env, subs, extent)
    var, init, cond, step = what
    env = dict(env)
    env[var] = _value(init, env)
    for _ in range(limit):
        if not _value(cond, env):
            return None
        hit = _run_events(events, e + 1, env, subs, extent)
        if hit:
            return hit
        env = dict(env)
        env[var] = _step(var, step, env)
    raise _Unknown(f"more than {limit} iterations")


def _step(var, step, env):
    s = [x.text for x in step]
    if s in ([var, "++"], ["++", var]):
        return env[var] + 1
    if s in ([var, "--"], ["--", var]):
        return env[var] - 1
    if len(step) >= 3 and s[0] == var and s[1] in ("+=", "-=", "*=", "/=", ">>=", "<<="):
        v = _value(step[2:], env)
        return {"+=": env[var] + v, "-=": env[var] - v, "*=": env[var] * v, "/=": int(env[var] / v),
                ">>=": env[var] >> v, "<<=": env[var] << v}[s[1]]
    raise _Unknown(" ".join(s))


# --- one task ---------------------------------------------------------------------------------

def analyse(root, task):
    """Every finding (rules and hints) for the task's regions in the tree at `root`."""
    from .regions import region_starts  # noqa: PLC0415
    out = []
    for f, first, body in region_starts(root, task):
        out += region_rules(body, f, first)
    if any(x.rule == "leaves-function" for x in out):
        return out  # the structure is broken: the hints would read it wrongly
    for f in dict.fromkeys(r.file for r in task.regions):
        shape = {}
        for r in task.regions:
            if r.file == f:
                shape.update(r.shape)
        try:
            view = FileView(Path(root) / f, f, task.id)
        except (OSError, ValueError):
            continue
        if shape:
            shape = {**file_constants(root, view.text), **shape}
        out += hints(view, shape or None)
    return out


def file_constants(root, text):
    """The constexpr integer constants a file can see: its own and common/'s."""
    texts = [text]
    for p in sorted((Path(root) / "common").glob("*.cuh")) + sorted((Path(root) / "common").glob("*.h")):
        texts.append(p.read_text())
    return {k: v for k, v in cxx.constants(texts).items() if "." not in v}
