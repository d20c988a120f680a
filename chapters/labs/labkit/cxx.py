"""C++/CUDA tokens, as the compiler sees them: the lab tools read regions through this.

    tokens(text)           -> [Token]: trigraphs, line splices, universal character
                              names and digraphs resolved; comments dropped
    normalized(toks, k)    -> [str]: the tokens of a paraphrase-proof comparison
                              (named constants replaced by their values, casts and
                              namespace qualifiers dropped, numbers by their value)
    constants(texts)       -> {name: value} of the `constexpr` integers in sources

Nothing here runs the preprocessor's macros: a region may not hold a directive at
all (the static checks reject one), so what these tokens say is what is compiled.
"""
import bisect
import functools
import re
from dataclasses import dataclass

TRIGRAPHS = {"??=": "#", "??/": "\\", "??'": "^", "??(": "[", "??)": "]", "??!": "|", "??<": "{", "??>": "}",
             "??-": "~"}
DIGRAPHS = {"<%": "{", "%>": "}", "<:": "[", ":>": "]", "%:%:": "##", "%:": "#"}
ALTERNATIVE = {"and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|", "xor": "^", "compl": "~",
               "and_eq": "&=", "or_eq": "|=", "xor_eq": "^=", "not_eq": "!="}
PUNCT = sorted(["...", "<<=", ">>=", "->*", "<=>", "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
                "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*", "##"], key=len, reverse=True)


@dataclass
class Token:
    kind: str   # "id", "num", "str", "punct"
    text: str
    line: int   # 1-based line of the original text


SPLICE = re.compile(r"\\[ \t\r]*\n")  # a backslash, spaces, then a newline


def _phase1(text):
    """Trigraphs and line splices: (the text, line_of), where line_of(p) is the
    1-based line of the original text that holds the output's character p."""
    for tri, rep in TRIGRAPHS.items():
        text = text.replace(tri, rep)
    pieces, out_starts, in_starts, pos, size = [], [], [], 0, 0
    for m in SPLICE.finditer(text):
        out_starts.append(size)
        in_starts.append(pos)
        pieces.append(text[pos:m.start()])
        size += m.start() - pos
        pos = m.end()
    out_starts.append(size)
    in_starts.append(pos)
    pieces.append(text[pos:])
    newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(p):
        k = bisect.bisect_right(out_starts, p) - 1
        return bisect.bisect_left(newlines, in_starts[k] + p - out_starts[k]) + 1
    return "".join(pieces), line_of


UCN = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})")


def _ident_text(raw):
    return UCN.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), raw) if "\\" in raw else raw


NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|'[0-9a-zA-Z_]|[0-9a-zA-Z_.])*")
IDENT = re.compile(r"(?:[A-Za-z_$]|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|[^\x00-\x7f])"
                   r"(?:[A-Za-z0-9_$]|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|[^\x00-\x7f])*")
SPACE = re.compile(r"[ \t\r\n\f\v]+")
RAW_STRING = re.compile(r'(?:u8|u|U|L)?R"([^ ()\\\t\n]{0,16})\(')
QUOTE = re.compile(r"(?:u8|u|U|L)?(['\"])")
# `<::` is `<` then `::` (C++11) unless `<:::` or `<::>`; then the digraphs, then the
# punctuators longest first, then any other single character.
PUNCTUATOR = re.compile("(<)(?=::)(?!:::|::>)|(" + "|".join(re.escape(d) for d in DIGRAPHS) + ")|("
                        + "|".join(re.escape(p) for p in PUNCT) + ")|(.)", re.S)


def tokens(text, lenient=False):
    """The tokens of `text`. lenient=True (for prose: docs, handouts) reads quotes
    as punctuation, so an apostrophe does not swallow the rest of a page."""
    src, line_of = _phase1(text)
    toks, i, n = [], 0, len(src)
    while i < n:
        m = SPACE.match(src, i)
        if m:
            i = m.end()
            continue
        ch = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        line = line_of(i)
        if not lenient and ch in "uULR'\"":
            m = RAW_STRING.match(src, i)
            if m:  # a raw string literal
                end = src.find(")" + m.group(1) + '"', m.end())
                j = n if end < 0 else end + len(m.group(1)) + 2
                toks.append(Token("str", src[i:j], line))
                i = j
                continue
            m = QUOTE.match(src, i)
            if m:
                q, j = m.group(1), m.end()
                while j < n and src[j] != q and src[j] != "\n":
                    j += 2 if src[j] == "\\" else 1
                toks.append(Token("str", src[i:j + 1], line))
                i = j + 1
                continue
        m = NUMBER.match(src, i) if ch in "0123456789." else None
        if m:
            toks.append(Token("num", m.group(0), line))
            i = m.end()
            continue
        m = IDENT.match(src, i)
        if m:
            toks.append(Token("id", _ident_text(m.group(0)), line))
            i = m.end()
            continue
        m = PUNCTUATOR.match(src, i)
        text_ = m.group(1) or (DIGRAPHS[m.group(2)] if m.group(2) else m.group(3) or m.group(4))
        toks.append(Token("punct", text_, line))
        i = m.end()
    return toks


# --- numbers and constants ------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def number_value(text):
    """A literal's value as a canonical string: 0xffffffff, 4294967295u -> "4294967295";
    1.0f, 1.f, 1.0 -> "1.0". None if it is not a plain literal."""
    t = text.replace("'", "").lower()
    try:
        if re.fullmatch(r"0x[0-9a-f]+[ul]*", t):
            return str(int(t.rstrip("ul"), 16))
        if re.fullmatch(r"0b[01]+[ul]*", t):
            return str(int(t.rstrip("ul")[2:], 2))
        if re.fullmatch(r"0[0-7]*[ul]*", t):
            return str(int(t.rstrip("ul") or "0", 8))
        if re.fullmatch(r"[1-9][0-9]*[ul]*", t):
            return str(int(t.rstrip("ul")))
        if re.fullmatch(r"([0-9]*\.[0-9]*|[0-9]+)(e[+-]?[0-9]+)?[fl]?", t) and any(c.isdigit() for c in t):
            return repr(float(t.rstrip("fl")))
    except ValueError:
        return None
    return None


CONSTEXPR = re.compile(r"\bconstexpr\s+(?:unsigned\s+|signed\s+|const\s+)*(?:int|unsigned|uint32_t|int32_t|int64_t|"
                       r"uint64_t|size_t|long(?:\s+long)?|short|float|double|auto)\s+(k[A-Z]\w*)\s*=\s*([^;{]+);")


def constants(texts):
    """{name: canonical value} of the constexpr constants (k-names) in the sources,
    evaluated where their expression is arithmetic on literals and earlier constants."""
    known = {}
    pending = []
    for text in texts:
        pending += CONSTEXPR.findall(text)
    for _ in range(4):  # constants defined from later ones
        for name, expr in pending:
            if name in known:
                continue
            v = _evaluate(expr, known)
            if v is not None:
                known[name] = v
    return known


def _evaluate(expr, known):
    out = []
    toks = tokens(expr)
    k = 0
    while k < len(toks):
        t = toks[k]
        if t.kind == "id" and k + 1 < len(toks) and toks[k + 1].text == "::":
            k += 2  # sw::kWarp
            continue
        if t.kind == "id" and t.text in ("int64_t", "uint64_t", "int32_t", "uint32_t", "size_t", "int", "unsigned"):
            k += 1  # int64_t{1} << 31
            continue
        if t.kind == "num":
            v = number_value(t.text)
            if v is None:
                return None
            out.append(v)
        elif t.kind == "id":
            if t.text not in known:
                return None
            out.append(known[t.text])
        elif t.text in "+-*/%()<<>>|&^~{}" or t.text in ("<<", ">>"):
            out.append({"{": "(", "}": ")", "/": "//"}.get(t.text, t.text))
        else:
            return None
        k += 1
    try:
        value = eval(" ".join(out), {"__builtins__": {}}, {})  # arithmetic on literals only
    except Exception:  # noqa: BLE001 - an expression we do not model
        return None
    if isinstance(value, float):
        return repr(value)
    return str(int(value))


# --- the comparison form --------------------------------------------------------------------

CAST = {"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"}
TYPES = {"int", "unsigned", "signed", "long", "short", "float", "double", "char", "bool", "size_t", "int64_t",
         "uint64_t", "int32_t", "uint32_t", "int16_t", "uint16_t", "int8_t", "uint8_t", "uintptr_t", "ptrdiff_t",
         "float4", "uint4", "int4", "HistCount", "auto", "const", "volatile"}


def normalized(toks, consts):
    return _drop_parens(_normalized(toks, consts))


def _simple(seq):
    """An operand that parentheses do not change: a name, a number, a member access."""
    return bool(seq) and all(re.fullmatch(r"[A-Za-z_$][\w$]*|[0-9.e+-]+|\.", x) for x in seq) \
        and seq[0] != "." and seq[-1] != "."


def _drop_parens(out):
    """`( x )` and `( a . b )` where they are not a call's: `(blockIdx.y) * 32` is `blockIdx.y * 32`."""
    res = []
    for t in out:
        res.append(t)
        if t == ")":
            j = len(res) - 2
            while j >= 0 and res[j] != "(" and res[j] != ")":
                j -= 1
            if j >= 0 and res[j] == "(" and _simple(res[j + 1:-1]):
                before = res[j - 1] if j > 0 else ""
                if not re.fullmatch(r"[A-Za-z_$][\w$]*|\)|\]", before) or before in ("return",):
                    inner = res[j + 1:-1]
                    del res[j:]
                    res += inner
    return res


def _normalized(toks, consts):
    """The comparison form of a token list: what two paraphrases of one piece of code
    share. Drops casts (`static_cast<T>(` -> `(`, `(int)`, `T{x}` -> `(x)`) and
    namespace qualifiers (`sw::`), replaces named constants by their values and
    numbers by their canonical values, and the alternative tokens (`and`) by `&&`."""
    out = []
    k, n = 0, len(toks)
    while k < n:
        t = toks[k]
        nxt = toks[k + 1].text if k + 1 < n else ""
        if t.kind == "id" and t.text in CAST and nxt == "<":
            depth, j = 0, k + 1
            while j < n:  # skip to the matching '>'
                if toks[j].text == "<":
                    depth += 1
                elif toks[j].text == ">":
                    depth -= 1
                    if depth == 0:
                        break
                elif toks[j].text == ">>":
                    depth -= 2
                    if depth <= 0:
                        break
                j += 1
            k = j + 1
            continue
        if t.text == "(" and k + 2 < n and toks[k + 1].kind == "id" and toks[k + 1].text in TYPES:
            j = k + 1
            while j < n and (toks[j].text in TYPES or toks[j].text == "*"):
                j += 1
            if j < n and toks[j].text == ")" and j + 1 < n and toks[j + 1].text not in (";", ")", ",", "{"):
                k = j + 1  # a C-style cast
                continue
        if t.kind == "id" and t.text in TYPES and nxt == "{" and (not out or out[-1] not in TYPES):
            out.append("(")  # int64_t{x} -> (x)
            depth, j = 0, k + 1
            close = None
            while j < n:
                if toks[j].text == "{":
                    depth += 1
                elif toks[j].text == "}":
                    depth -= 1
                    if depth == 0:
                        close = j
                        break
                j += 1
            if close is not None:
                out += _normalized(toks[k + 2:close], consts)
                out.append(")")
                k = close + 1
                continue
            out.pop()
        if t.kind == "id" and nxt == "::":
            k += 2
            continue
        if t.kind == "num":
            out.append(number_value(t.text) or t.text)
        elif t.kind == "id":
            out.append(consts.get(t.text, ALTERNATIVE.get(t.text, t.text)))
        elif t.kind == "str":
            out.append('""')
        else:
            out.append(t.text)
        k += 1
    return out


def ngrams(seq, k):
    return {tuple(seq[i:i + k]) for i in range(len(seq) - k + 1)}
