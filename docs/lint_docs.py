#!/usr/bin/env python3
"""The lint of the generated docs: words and numbers that must come from the measured data.

docs/generate.py runs it: `python3 docs/generate.py --lint` renders every page and lints the
result, and `python3 docs/generate.py --lint-selftest` lints planted examples.
"""
import re


# --- the comparatives ------------------------------------------------------------------
#
# A word that compares measured figures (faster, inside, met, largest, held) is written by a
# word marker from the same figures, or the sentence has none: a hand-written comparative
# keeps its meaning when a rerun changes the numbers beside it. lint() reads the rendered
# docs sentence by sentence; a sentence that holds a generated figure (a value marker) and a
# hand-written comparative is an error, and where the figures say the opposite of the word
# (two figures of one unit, or a ratio) the error says so. Not read: tables, listings,
# code spans, link targets, a quoted prediction or goal ("..."), a Prediction section
# (written before measuring: its comparatives are the forecast, and its verdict is
# generated where the figure is), and words that name a place ("the table below") or a
# stated bound ("at least").

COMPARATIVE = re.compile(
    r"\b(faster|fastest|slower|slowest|quicker|larger|largest|smaller|smallest|bigger|biggest|higher|highest|"
    r"lower|lowest|greater|more|most|less|least|fewer|fewest|above|below|beyond|under|exceeds?|exceeded|"
    r"beats?|beaten|outperforms?|inside|outside|within|met|missed|misses|meets?|wrong|"
    r"(?:prediction|predictions|goal|goals|guess|estimate|expectation|argument|model|it|this|that|which)\s+"
    r"(?:\w+\s+){0,3}?(?:held|holds|failed|fails)|"
    r"gains?|gained|loses|lose|lost|loss|wins?|won|ahead|behind|better|best|worse|worst|"
    r"(?:the )?same (?:time|times|speed|rate|rates|throughput|ratio|ratios|figure|figures|GB/s|fraction|"
    r"bandwidth|level|share)|equal|equals|"
    r"ties?|tied|matches|match|level with|close to|nearly|almost|short of|twice|half as|drops?|dropped|"
    r"falls?|fell|rises?|rose|grows?|grew|improves?|as predicted|as expected|nothing|little|flat|unchanged|"
    r"cheaper|dearer|costlier|longer|shorter)\b", re.I)
# "the table above", "(below)", "below:": where a thing is on the page, not a comparison
PLACE = re.compile(r"\b(?:the|this|that|these|each|every|a|its|their)\s+(?:\w+\s+){0,2}?(?:table|tables|plot|"
                   r"plots|rows?|sections?|listing|picture|map|sweep|figure|list|lines?|code|kernels?|evidence|"
                   r"one|ones|bound|steps?|diagram|columns?|paragraph|part|results?|page|papers?|sources?|text|predictions?)\s+"
                   r"(?:above|below)\b|"
                   r"\b(?:measured|shown|listed|given|defined|described|computed|said|quoted|named|drawn|profiled|"
                   r"explained|argued)\s+(?:above|below)\b|"
                   r"\b(?:above|below)\s*(?=[:.),;])|\bsee\s+(?:above|below)\b|\bbelow,\s|"
                   r"\bat (?:the )?(?:least|most)\b|\bLittle's\b|"  # a bound stated; a law's name
                   r"\b(?:all|every|both)\s+(?:the\s+)?(?:bytes|values|inputs?)\s+(?:are\s+)?equal\b|"
                   r"\bequal\s+(?:bytes|values|keys|inputs?)\b", re.I)  # the inputs' names
UP = {"faster", "fastest", "quicker", "larger", "largest", "bigger", "biggest", "higher", "highest", "greater",
      "above", "beyond", "exceeds", "exceed", "exceeded", "beats", "beat", "beaten", "outperforms",
      "gains", "gain", "gained", "wins", "win", "won", "ahead", "better", "best", "rises", "rise", "rose", "grows",
      "grow", "grew", "improves", "improve"}
DOWN = {"slower", "slowest", "smaller", "smallest", "lower", "lowest", "fewer", "fewest", "below", "under", "loses", "lose", "lost", "loss", "behind", "worse", "worst", "drops", "drop",
        "dropped", "falls", "fall", "fell", "short of"}
TIME_UNITS = ("ms", "µs", "us", "s", "ns")
SPEED_WORDS = {"faster", "fastest", "quicker", "slower", "slowest", "gains", "gain", "gained", "loses", "lose",
               "lost", "loss", "wins", "win", "won", "beats", "beat", "beaten", "outperforms", "better", "best",
               "worse", "worst", "ahead", "behind"}
FIGURE = "\x00"   # a generated figure in the text the lint reads
WORD = "\x01"     # a generated word


def figure_number(text):
    m = re.search(r"-?[\d,]*\.?\d+(?:e-?\d+)?", text)
    if not m:
        return None
    try:
        return float(m.group(0).replace(",", ""))
    except ValueError:
        return None


def prose_of(text):
    """The hand-written prose of a rendered doc with its figures marked: (prose, figures), where
    each figure is (number, unit) in the order of the text. Tables, listings, plots and code are
    blanked (line breaks kept, so that line numbers stay right)."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731
    text = re.sub(r"<!-- (results|plot|code|quote|device|runs|build-times|build-time|skipped): .*? -->.*?<!-- end \1 -->", blank, text,
                  flags=re.S)
    text = re.sub(r"^```.*?^```[ \t]*$", blank, text, flags=re.S | re.M)
    figures = []

    def fig(m):
        body = m.group(2)
        unit = re.match(r"\s*(GB/s|G atomics/s|G values/s|G/s|ms|µs|us|ns|s\b|%|x\b|KiB|MiB|GiB|MB|GB|bytes)?",
                        text[m.end():]).group(1) or ""
        if body.strip().endswith("x"):
            unit = "x"
        elif body.strip().endswith("%"):
            unit = "%"
        figures.append((figure_number(body), unit))
        return FIGURE + " " * (len(m.group(0)) - 1 - m.group(0).count("\n")) + "\n" * m.group(0).count("\n")

    text = re.sub(r"<!-- (value): .*? -->(.*?)<!-- end value -->", fig, text, flags=re.S)
    text = re.sub(r"<!-- word: .*? -->.*?<!-- end word -->",
                  lambda m: WORD + re.sub(r"[^\n]", " ", m.group(0))[1:], text, flags=re.S)
    text = re.sub(r"<!--.*?-->", blank, text, flags=re.S)
    # a Prediction section is written before measuring: its comparatives are the forecast
    text = re.sub(r"^#+ Prediction.*?(?=^#+ )", blank, text, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", blank, text)           # code spans: names, not words
    text = re.sub(r'"[^"]{1,160}"', blank, text)        # a quoted prediction or goal, word for word
    text = re.sub(r"\]\([^)\n]*\)", blank, text)     # link targets
    return text, figures


def sentences(text):
    """(start offset, sentence) of the prose: split at blank lines, list items, headings, table
    rows, and sentence ends."""
    out, start = [], 0
    for m in re.finditer(r"\n\s*\n|\n(?=\s*(?:[-*] |\d+\. |#|\|))|(?:(?<=[.!?])|(?<=[.!?]\)))\s+(?=[A-Z(*\x00\x01])", text):
        out.append((start, text[start:m.start()]))
        start = m.end()
    out.append((start, text[start:]))
    return out


def contradiction(word, figs):
    """Why the figures say the opposite of `word`, or None when they agree or cannot tell."""
    w = word.lower()
    up, down = w in UP, w in DOWN
    if not (up or down):
        return None
    figs = [(v, u) for v, u in figs if v is not None]
    if len(figs) == 1 and figs[0][1] == "x" and w in SPEED_WORDS | {"above", "below"}:
        ratio = figs[0][0]
        if (up and ratio < 1) or (down and ratio > 1):
            return f"the ratio {ratio:g}x says the opposite of {word!r}"
        return None
    if len(figs) >= 2 and figs[0][1] == figs[1][1]:
        a, b = figs[0][0], figs[1][0]
        if figs[0][1] in TIME_UNITS and w in SPEED_WORDS:
            a, b = b, a  # less time is faster
        if (up and a < b) or (down and a > b):
            return f"{figs[0][0]:g} {figs[0][1]} against {figs[1][0]:g} {figs[1][1]} says the opposite of {word!r}"
    return None


# Files the lint leaves out for now: the handouts are being rewritten (issue 28). Remove the
# entry once `python3 docs/generate.py --lint docs/labs/*.md` passes.
LINT_PENDING = ()


def lint(text, rel):
    """The hand-written comparatives beside generated figures in one rendered doc."""
    prose, figures = prose_of(text)
    problems, seen = [], 0
    for start, sentence in sentences(prose):
        count = sentence.count(FIGURE)
        figs = figures[seen:seen + count]
        seen += count
        if not count:
            continue
        plain = PLACE.sub(lambda m: " " * len(m.group(0)), sentence)
        for m in COMPARATIVE.finditer(plain):
            line = prose.count("\n", 0, start + m.start()) + 1
            why = contradiction(m.group(1), figs)
            excerpt = " ".join(sentence.replace(FIGURE, "#").replace(WORD, "~").split())
            problems.append(f"{rel}:{line}: {'contradiction' if why else 'hand-written'} comparative "
                            f"{m.group(1)!r} beside generated figures" + (f": {why}" if why else "")
                            + f" [{excerpt[:160]}]")
    return problems


PLANTED = ("Allocating per call was faster: <!-- value: x=1 -->242.9<!-- end value --> ms against "
           "<!-- value: x=2 -->230.9<!-- end value --> ms.\n\n"
           "It reached <!-- value: x=3 -->0.92x<!-- end value --> of chapter 02, a gain.\n\n"
           "It was <!-- word: expr=1 words=slower|faster -->faster<!-- end word -->: "
           "<!-- value: x=4 -->230.9<!-- end value --> ms against <!-- value: x=5 -->242.9<!-- end value --> ms.\n")


def lint_selftest():
    """The lint must find the planted contradictions and pass the generated word."""
    found = lint(PLANTED, "planted")
    want = ["planted:1: contradiction comparative 'faster'", "planted:3: contradiction comparative 'gain'"]
    ok = all(any(f.startswith(w) for f in found) for w in want) and not any(f.startswith("planted:5") for f in found)
    for f in found:
        print(("found: " if ok else "") + f)
    print("lint self-test:", "ok" if ok else f"FAILED: expected exactly {want}")
    return 0 if ok else 1
