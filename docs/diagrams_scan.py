#!/usr/bin/env python3
"""Draw the scan track's two pictures into docs/plots/: chapter 16's decoupled look-back
(16_lookback.png) and one pass of chapter 18's radix sort (18_radix_pass.png).

    python3 docs/diagrams_scan.py

16_lookback.png: eight tiles in the order of their tickets, each with its status word
(chapter 16's flags: X nothing published yet, A the tile's aggregate, P its inclusive
prefix). Tile 5 walks back: at first it meets X and polls; once tile 4 has published
its aggregate it adds the aggregates it meets until the first inclusive prefix, which
ends the walk, then publishes its own inclusive prefix.

18_radix_pass.png: one pass of a least-significant-digit sort with 2-bit digits (four
digits instead of 256), three tiles of eight keys: each tile ranks its keys stably by
digit (in shared memory), and each run of one digit goes to where that digit starts in
the output (the histogram pass's base) plus the keys of that digit in the tiles before
(the look-back), so that every tile writes its runs at once, in runs.

No measured data; the output is deterministic.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

from diagrams import save  # noqa: E402  (docs/diagrams.py: the PNG into docs/plots/, deterministic)
FLAG_COLORS = {"X": "#eeeeee", "A": "#9ecae1", "P": "#2171b5"}
DIGIT_COLORS = ["#4477aa", "#ee6677", "#228833", "#ccbb44"]


def box(ax, x, y, w, h, color, text, fontsize=8, tcolor="black", edge="white", lw=0.8):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, linewidth=lw))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize, color=tcolor)


def arrow(ax, x0, x1, y, text, color="black", rad=0.5):
    ax.add_patch(FancyArrowPatch((x0, y), (x1, y), connectionstyle=f"arc3,rad={rad}",
                                 arrowstyle="-|>", mutation_scale=9, color=color, linewidth=1.0))
    ax.text((x0 + x1) / 2, y + rad * abs(x1 - x0) / 2 + 0.2, text, ha="center", va="bottom",
            fontsize=7, color=color)  # just above the arc's top


def lookback():
    aggregates = [12, 13, 9, 14, 7, 11, 8, 10]  # each tile's own sum
    before = [("P", 12), ("P", 25), ("A", 9), ("A", 14), ("X", None), ("A", 11), ("A", 8), ("X", None)]
    after = list(before)
    after[4] = ("A", 7)
    total = 7 + 14 + 9 + 25  # tile 5's prefix: tiles 4, 3, 2 and tile 1's inclusive prefix
    after[5] = ("P", total + aggregates[5])
    panels = [
        ("1. Tile 5 has published its aggregate (A 11) and walks back: tile 4 has published "
         "nothing yet (X), so tile 5 polls its word again", before, [(5, 4, "poll: X, wait", "#cc3311")]),
        (f"2. Tile 4 published A 7: tile 5 adds 7, then 14 and 9, meets tile 1's inclusive prefix "
         f"P 25 and stops: its prefix is {total};\nit publishes P {total} + 11 = {total + 11}, so that "
         f"tiles 6 and 7 stop at tile 5", after,
         [(5, 4, "+7", "#228833"), (4, 3, "+14", "#228833"), (3, 2, "+9", "#228833"),
          (2, 1, "+25, stop", "#2171b5")]),
    ]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9.5, 4.6))
    for ax, (caption, words, walk) in zip(axes, panels):
        ax.set_axis_off()
        ax.set_xlim(-0.2, 8.2)
        ax.set_ylim(-1.2, 2.6)
        for t, (flag, value) in enumerate(words):
            text = flag if value is None else f"{flag} {value}"
            box(ax, t + 0.05, 0, 0.9, 0.9, FLAG_COLORS[flag], text,
                tcolor="white" if flag == "P" else "black", edge="#555555" if t == 5 else "white",
                lw=1.6 if t == 5 else 0.8)
            ax.text(t + 0.5, -0.2, f"tile {t}", ha="center", va="top", fontsize=7)
        for src, dst, text, color in walk:
            arrow(ax, src + 0.5, dst + 0.5, 0.95, text, color)
        ax.text(-0.1, -0.75, caption, ha="left", va="top", fontsize=8)
    fig.suptitle("The decoupled look-back (chapter 16): X nothing yet, A the tile's own sum, "
                 "P the sum of every tile up to it", fontsize=10)
    save(fig, "16_lookback.png")


def radix_pass():
    digits = [[2, 0, 3, 2, 1, 0, 2, 3], [1, 1, 0, 2, 3, 3, 0, 2], [3, 0, 2, 1, 1, 2, 0, 0]]
    tiles, size = len(digits), len(digits[0])
    counts = [[row.count(d) for d in range(4)] for row in digits]
    totals = [sum(c[d] for c in counts) for d in range(4)]
    bases = [sum(totals[:d]) for d in range(4)]
    fig, ax = plt.subplots(figsize=(10, 4.8))
    ax.set_axis_off()
    ax.set_xlim(-4.2, tiles * size + 0.5)
    ax.set_ylim(-3.0, 6.2)
    rows = {"in": 5, "sorted": 3, "out": 0}
    ax.text(-0.3, rows["in"] + 0.45, "the input:\nthree tiles", ha="right", va="center", fontsize=8)
    ax.text(-0.3, rows["sorted"] + 0.45, "each tile ranked\nby digit, stably\n(shared memory)",
            ha="right", va="center", fontsize=8)
    ax.text(-0.3, rows["out"] + 0.45, "the output", ha="right", va="center", fontsize=8)
    out_next = list(bases)  # where the next key of each digit goes, tile after tile
    for t, row in enumerate(digits):
        x0 = t * size
        ax.text(x0 + size / 2, rows["in"] + 1.05, f"tile {t}: counts {counts[t]}", ha="center",
                va="bottom", fontsize=7)
        for i, d in enumerate(row):
            box(ax, x0 + i, rows["in"], 1, 0.9, DIGIT_COLORS[d], f"{d}", tcolor="white")
        ranked = sorted(range(size), key=lambda i: row[i])  # stable: index order within a digit
        for j, i in enumerate(ranked):
            box(ax, x0 + j, rows["sorted"], 1, 0.9, DIGIT_COLORS[row[i]], f"{row[i]}.{i}", fontsize=6,
                tcolor="white")
        start = 0
        for d in range(4):  # the tile's run of digit d, to base[d] + the tiles before (look-back)
            n = counts[t][d]
            if n == 0:
                continue
            src = x0 + start + n / 2
            dst = out_next[d] + n / 2
            ax.add_patch(FancyArrowPatch((src, rows["sorted"] - 0.05), (dst, rows["out"] + 0.95),
                                         arrowstyle="-|>", mutation_scale=7, color=DIGIT_COLORS[d],
                                         linewidth=0.8, alpha=0.8))
            for k in range(n):
                box(ax, out_next[d] + k, rows["out"], 1, 0.9, DIGIT_COLORS[d], f"t{t}", fontsize=6,
                    tcolor="white")
            out_next[d] += n
            start += n
    for d in range(4):
        ax.text(bases[d] + 0.05, rows["out"] - 0.15, f"digit {d} starts at {bases[d]}", ha="left",
                va="top", fontsize=7, color=DIGIT_COLORS[d])
    ax.text(0, -1.3, "A key in a tile's ranked row reads digit.index (the index: its place in the input tile).\n"
            "Tile t's run of digit d goes to base[d] (the histogram pass, scanned) plus the keys of digit d in\n"
            "tiles 0 to t-1 (the look-back over the status words of digit d): every run lands at once, and keys\n"
            "with the same digit keep their order.", ha="left", va="top", fontsize=8)
    fig.suptitle("One pass of the radix sort (chapter 18), with 2-bit digits and tiles of 8 keys",
                 fontsize=10)
    save(fig, "18_radix_pass.png")


def main():
    lookback()
    radix_pass()


if __name__ == "__main__":
    main()
