#!/usr/bin/env python3
"""Draw the explanatory diagrams of docs/ into docs/plots/ (no measured data).

    python3 docs/diagrams.py            # all of them
    python3 docs/diagrams.py bank_grid  # the ones whose name contains a word

Each diagram shows something a student would otherwise simulate by hand: which
thread touches which element, which bank a word falls in, what overlaps in time.
The output is deterministic: same script, same PNG bytes (no timestamps, fixed
layout, a fixed seed where bytes are drawn at random).
"""
import os
import random
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

PLOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plots")
WARP_COLORS = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#332288"]
GREY = "#dddddd"


def save(fig, name):
    os.makedirs(PLOTS, exist_ok=True)
    path = os.path.join(PLOTS, name)
    fig.savefig(path, dpi=110, bbox_inches="tight", pad_inches=0.1, metadata={"Software": None})
    plt.close(fig)
    print("wrote", os.path.relpath(path))


def cell(ax, x, y, color, text="", w=1, h=1, fontsize=6, edge="white", tcolor="black"):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, linewidth=0.6))
    if text != "":
        ax.text(x + w / 2, y + h / 2, str(text), ha="center", va="center", fontsize=fontsize, color=tcolor)


def bare(ax):
    ax.set_axis_off()
    ax.set_aspect("equal")


# --- primer: grid, blocks, warps, threads, SMs ------------------------------------------

def hierarchy():
    fig, ax = plt.subplots(figsize=(11, 5.2))
    bare(ax)
    # the grid: 8 blocks of 256 threads = 8 warps each
    ax.text(0, 10.6, "kernel<<<8, 256>>>(...): a grid of 8 blocks, each of 256 threads = 8 warps of 32",
            fontsize=10, weight="bold")
    for b in range(8):
        x0 = b * 3.3
        ax.add_patch(Rectangle((x0, 6.4), 3.0, 3.6, facecolor="#f4f4f4", edgecolor="black", lw=0.8))
        ax.text(x0 + 1.5, 9.7, f"block {b}", ha="center", fontsize=8)
        for w in range(8):
            cell(ax, x0 + 0.2, 6.6 + (7 - w) * 0.38, WARP_COLORS[w], f"warp {w}", w=2.6, h=0.34, fontsize=6)
    # one warp magnified
    ax.text(0, 5.6, "warp 0 of a block: 32 threads (lanes), threadIdx.x = 0..31, one instruction at a time for all",
            fontsize=8)
    for t in range(32):
        cell(ax, t * 0.82, 4.7, WARP_COLORS[0], t, w=0.78, h=0.7, fontsize=6, tcolor="white")
    ax.text(0, 4.25, "global index i = blockIdx.x * blockDim.x + threadIdx.x   (block 2, thread 5: i = 2*256 + 5 = 517)",
            fontsize=8, family="monospace")
    # SMs
    ax.text(0, 3.4, "the hardware: blocks are placed on SMs (streaming multiprocessors: registers, shared memory / L1, "
            "4 warp schedulers each) and stay there until they finish", fontsize=8)
    for s in range(4):
        x0 = s * 6.6
        ax.add_patch(Rectangle((x0, 0.3), 6.2, 2.8, facecolor="#fafafa", edgecolor="black", lw=0.8))
        ax.text(x0 + 0.15, 2.75, f"SM {s}", fontsize=7, weight="bold")
        for k, b in enumerate((s, s + 4)):
            ax.add_patch(Rectangle((x0 + 0.2 + k * 3.0, 0.5), 2.8, 2.0, facecolor="#f4f4f4", edgecolor="black",
                                   lw=0.5))
            ax.text(x0 + 1.6 + k * 3.0, 2.25, f"block {b}", ha="center", fontsize=7)
            for w in range(8):
                cell(ax, x0 + 0.35 + k * 3.0 + (w % 4) * 0.63, 1.25 - (w // 4) * 0.6, WARP_COLORS[w], "",
                     w=0.55, h=0.5)
    ax.text(26.6, 1.6, "... every SM of the GPU\n(132 on an H100 SXM\nor an H200)", fontsize=7)
    ax.set_xlim(-0.2, 29.5)
    ax.set_ylim(0, 11)
    save(fig, "primer_hierarchy.png")


# --- primer and chapter 09: a warp's addresses and the 32-byte sectors -------------------

def coalescing():
    fig, ax = plt.subplots(figsize=(11, 3.6))
    bare(ax)
    ax.set_aspect("auto")
    cases = [("consecutive floats, x[32 w + lane]: 128 bytes in 4 sectors", 1),
             ("every second float, x[2 (32 w + lane)]: 8 sectors, half of each unused", 2),
             ("a column, in[lane * cols + c]: 32 sectors of 32 different rows, 4 of 32 bytes used in each", 32)]
    shown = 64
    for k, (title, stride) in enumerate(cases):
        y = (2 - k) * 2.2
        ax.text(0, y + 1.25, title, fontsize=8)
        per = 8 if stride <= 2 else 2  # the column case is drawn compressed: 2 cells per sector
        lanes = {(lane * stride if stride <= 2 else lane * 2): lane for lane in range(32)}
        used = {w // per for w in lanes if w < shown}
        for wd in range(shown):
            lane = lanes.get(wd)
            cell(ax, wd, y, WARP_COLORS[0] if lane is not None else GREY, "" if lane is None else lane,
                 fontsize=5, tcolor="white")
        for sct in range(shown // per):
            ax.add_patch(Rectangle((sct * per, y - 0.05), per, 1.1, fill=False,
                                   edgecolor="#cc3311" if sct in used else "#999999", lw=1.4))
        note = (f"{len(used)} sectors fetched" if stride <= 2 else "32 sectors fetched\n(each from another row)")
        ax.text(shown + 0.5, y + 0.5, note, fontsize=7, va="center")
    ax.text(0, 6.4, "One warp, one load instruction: numbers are lanes, boxes are 32-byte sectors", fontsize=9,
            weight="bold")
    ax.set_xlim(-0.5, shown + 12)
    ax.set_ylim(-0.3, 6.9)
    save(fig, "primer_coalescing.png")


# --- chapter 03: the three addressing schemes --------------------------------------------

def addressing():
    """A 128-thread block (4 warps of 32) over s[0..127], four levels of each tree."""
    n = 128
    schemes = [
        ("interleaved-modulo: if (tid % (2*stride) == 0) s[tid] += s[tid + stride]", [1, 2, 4, 8],
         lambda stride: [(t, t, t + stride) for t in range(n) if t % (2 * stride) == 0]),
        ("interleaved-strided: index = 2*stride*tid; if (index < kBlock) s[index] += s[index + stride]",
         [1, 2, 4, 8], lambda stride: [(t, 2 * stride * t, 2 * stride * t + stride) for t in range(n)
                                      if 2 * stride * t < n]),
        # the lab task shared-tree writes this one: the picture shows what it does, not its code
        ("sequential addressing: the working threads packed, their slots consecutive", [64, 32, 16, 8],
         lambda stride: [(t, t, t + stride) for t in range(stride)]),
    ]
    fig, ax = plt.subplots(figsize=(13, 7.2))
    bare(ax)
    ax.set_aspect("auto")
    y = 0.0
    for title, strides, rule in reversed(schemes):
        for level, stride in reversed(list(enumerate(strides, 1))):
            pairs = rule(stride)
            writes = {dst: t for t, dst, _ in pairs}
            reads = {src: t for t, _, src in pairs}
            for i in range(n):
                if i in writes:
                    cell(ax, i, y, WARP_COLORS[writes[i] // 32], edge="white")
                elif i in reads:
                    cell(ax, i, y, "#cccccc", edge="white")
                else:
                    cell(ax, i, y, "#f2f2f2", edge="white")
            warps = sorted({t // 32 for t, _, _ in pairs})
            banks = {}
            for t, dst, _ in pairs:
                if t < 32:
                    banks.setdefault(dst % 32, set()).add(dst)
            way = max((len(v) for v in banks.values()), default=0)
            conflict = f"{way}-way bank conflict" if way > 1 else "no bank conflict"
            label = f"level {level}" if title.startswith("sequential") else f"stride {stride}"
            ax.text(-1, y + 0.5, label, ha="right", va="center", fontsize=7)
            ax.text(n + 1, y + 0.5, f"{len(pairs):3d} threads add, in {len(warps)} warp"
                    f"{'s' if len(warps) > 1 else ''}; warp 0: {conflict}", va="center", fontsize=7)
            y += 1.3
        ax.text(0, y + 0.1, title, fontsize=8.5, family="sans-serif" if title.startswith("sequential") else "monospace")
        y += 1.6
    ax.text(0, y + 0.2, "A 128-thread block (warps 0-3: blue, red, green, yellow) on s[0..127], first four levels. "
            "Coloured slot: written by a thread of that warp; grey: read", fontsize=8.5, weight="bold")
    ax.set_xlim(-10, n + 40)
    ax.set_ylim(-0.5, y + 1)
    save(fig, "03_addressing.png")


# --- chapter 05: the shuffle-down tree ---------------------------------------------------

def shuffle_down():
    """Five shuffle steps of one warp, with room between the rows so that each arrow can be
    followed: lane l takes the value of lane l + offset and adds it. The path into lane 0 is
    drawn dark, the other additions light. (No code line: the lab task warp-shuffle writes it.)"""
    fig, ax = plt.subplots(figsize=(13, 8.2))
    bare(ax)
    ax.set_aspect("auto")
    offsets = [16, 8, 4, 2, 1]
    gap = 1.7
    live, held = set(range(32)), 1
    top = len(offsets) * gap
    for level in range(len(offsets) + 1):
        y = top - level * gap
        for lane in range(32):
            on = lane in live
            cell(ax, lane, y, WARP_COLORS[0] if on else GREY, lane, w=0.86, h=0.7, fontsize=6.5,
                 tcolor="white" if on else "#888888")
        label = "lane values" if level == 0 else f"after offset {offsets[level - 1]}"
        ax.text(-0.5, y + 0.35, label, ha="right", va="center", fontsize=8)
        ax.text(32.4, y + 0.35, f"a blue lane holds the sum of {held} value{'s' if held > 1 else ''}",
                va="center", fontsize=7.5)
        if level == len(offsets):
            break
        off = offsets[level]
        nxt = set(range(32 // (2 ** (level + 1))))
        for lane in sorted(nxt, reverse=True):
            dark = lane == 0
            ax.add_patch(FancyArrowPatch((lane + off + 0.43, y - 0.02), (lane + 0.43, y - gap + 0.74),
                                         arrowstyle="-|>", mutation_scale=7 if dark else 5, shrinkA=0, shrinkB=0,
                                         lw=1.4 if dark else 0.6, color="#cc3311" if dark else "#e8a48f",
                                         zorder=3 if dark else 2))
        live, held = nxt, held * 2
    ax.text(0, top + 2.05, "One warp sums its 32 values in registers: at each step lane l receives the value of lane "
            "l + offset and adds it to its own.", fontsize=9, weight="bold")
    ax.text(0, top + 1.55, "The offset halves: 16, 8, 4, 2, 1. Arrows: the additions whose result is still needed "
            "(dark: those that end in lane 0). Every lane takes part in every step;", fontsize=8)
    ax.text(0, top + 1.2, "a lane whose partner would be past lane 31 gets its own value back, and grey lanes hold "
            "values nobody needs any more. After five steps lane 0 holds the sum of all 32.", fontsize=8)
    ax.set_xlim(-4.5, 42)
    ax.set_ylim(-0.3, top + 2.4)
    save(fig, "05_shuffle_down.png")


# --- chapters 10 and 11: the bank of every element of a 32 x 32 tile ----------------------

def bank_grid():
    fig, axes = plt.subplots(1, 2, figsize=(15, 8))
    for ax, pad in zip(axes, (0, 1)):
        bare(ax)
        stride = 32 + pad
        col = 5  # the warp with threadIdx.y = 5 reads tile[x][5], x = 0..31
        for r in range(32):
            for c in range(32):
                bank = (r * stride + c) % 32
                color = WARP_COLORS[bank % 8]
                alpha_cell = "#ffffff"
                ax.add_patch(Rectangle((c, 31 - r), 1, 1, facecolor=color if c == col else alpha_cell,
                                       edgecolor="#cccccc", lw=0.3))
                ax.text(c + 0.5, 31 - r + 0.5, bank, ha="center", va="center", fontsize=4.6,
                        color="white" if c == col else "#555555")
        banks = {(r * stride + col) % 32 for r in range(32)}
        ax.set_title(f"__shared__ float tile[32][{stride}]: bank of tile[r][c] = ({stride} r + c) % 32\n"
                     f"column {col} (one warp's read in the write phase): {len(banks)} different "
                     f"bank{'s' if len(banks) > 1 else ''} -> {32 // len(banks)} pass"
                     f"{'es' if len(banks) == 1 else ''}", fontsize=8.5)
        ax.text(-0.5, 32.3, "c ->", fontsize=7)
        ax.text(-2.2, 31.5, "r", fontsize=7)
        ax.set_xlim(-2.5, 32.5)
        ax.set_ylim(-0.5, 33)
    save(fig, "10_bank_grid.png")


# --- chapter 08: the spread layout, lane to bank -----------------------------------------

def spread_banks():
    rng = random.Random(8)
    bins = [rng.randrange(256) for _ in range(32)]  # one warp's bytes, uniform
    layouts = [("one copy: bin b at word b, bank b % 32", lambda lane, b: b % 32),
               ("16 copies: bin b of copy c at word 16 b + c, lane l uses copy l % 16:\n"
                "bank (16 b + l % 16) % 32 = l % 16 + 16 (b % 2)", lambda lane, b: (16 * b + lane % 16) % 32)]
    fig, axes = plt.subplots(2, 1, figsize=(12, 6.2))
    for ax, (title, bank_of) in zip(axes, layouts):
        bare(ax)
        words = {}
        for lane, b in enumerate(bins):
            bank = bank_of(lane, b)
            words.setdefault(bank, set()).add((b, lane % 16 if "16" in title else 0))
        passes = max(len(v) for v in words.values())
        ax.set_title(f"{title}\nthis warp's atomic needs {passes} passes (wavefronts): the most different words "
                     f"in one bank", fontsize=8.5, loc="left")
        for lane, b in enumerate(bins):
            cell(ax, lane, 3, WARP_COLORS[lane // 16 * 2], f"{b}", fontsize=5.5, tcolor="white")
            bank = bank_of(lane, b)
            ax.add_patch(FancyArrowPatch((lane + 0.5, 3), (bank + 0.5, 1.05), arrowstyle="->", mutation_scale=5,
                                         lw=0.5, color="#555555"))
        for bank in range(32):
            k = len(words.get(bank, ()))
            cell(ax, bank, 0, "#cc3311" if k == passes and k > 1 else ("#eeeeee" if k == 0 else "#99bbdd"),
                 k if k else "", fontsize=6)
        ax.text(-0.6, 3.5, "lane's bin", ha="right", va="center", fontsize=7)
        ax.text(-0.6, 0.5, "words per bank", ha="right", va="center", fontsize=7)
        ax.set_xlim(-5, 32.5)
        ax.set_ylim(-0.3, 4.3)
    fig.suptitle("One warp of 32 random bytes (lanes 0-15 blue, 16-31 green) incrementing its sub-histogram",
                 fontsize=9)
    fig.tight_layout()
    save(fig, "08_spread_banks.png")


# --- chapter 11: the tile flow and the 32 x 8 mapping -------------------------------------

def tile_flow():
    fig, axes = plt.subplots(1, 3, figsize=(13, 5))
    k_colors = ["#4477aa", "#ee6677", "#228833", "#ccbb44"]
    titles = ["1. read: warp y reads input rows y, y+8, y+16, y+24\n(k = 0..3), 32 consecutive floats each",
              "2. shared tile[32][33] (padding column grey);\n__syncthreads(): the whole tile is in",
              "3. write: warp y writes output rows y, y+8, ...:\ntile column p, read down the padded tile"]
    for ax, title in zip(axes, titles):
        bare(ax)
        ax.set_title(title, fontsize=8.5)
    for p in range(32):
        k, y = p // 8, p % 8
        for c in range(32):
            cell(axes[0], c, 31 - p, k_colors[k], "" if c else y, fontsize=4.5, tcolor="white")
            cell(axes[1], c, 31 - p, k_colors[k], "", edge="white")
            # output row p holds input column p: element (p, c) of the output is tile[c][p]
            cell(axes[2], c, 31 - p, k_colors[k], "" if c else y, fontsize=4.5, tcolor="white")
        cell(axes[1], 32, 31 - p, "#aaaaaa", "")
    # one warp's column read in the tile
    for r in range(32):
        axes[1].add_patch(Rectangle((5, 31 - r), 1, 1, fill=False, edgecolor="black", lw=0.8))
    axes[1].text(0, -3.2, "black: tile column 5, which warp 5 reads at k = 0 to write\noutput row 5; "
                 "banks (33 r + 5) % 32: 32 different banks", fontsize=7)
    axes[0].text(0, -3.2, "first cell: threadIdx.y of the warp; colour: k (its 4 loads, all issued\nbefore the "
                 "barrier). 256 threads = 32 x 8 move the 32 x 32 tile.", fontsize=7)
    axes[2].text(0, -3.2, "the same warp writes 4 output rows, each 128 contiguous bytes", fontsize=7)
    for ax in axes:
        ax.set_xlim(-0.5, 33.5)
        ax.set_ylim(-4, 32.5)
    save(fig, "11_tile_flow.png")


# --- chapter 06: grid-stride coverage ------------------------------------------------------

def grid_stride():
    blocks, threads, n = 3, 4, 40  # a toy grid: 3 blocks of 4 threads over 40 elements
    total = blocks * threads
    fig, ax = plt.subplots(figsize=(12, 3.6))
    bare(ax)
    for i in range(n):
        t = i % total
        b = t // threads
        it = i // total
        cell(ax, i, 1, WARP_COLORS[b], f"{t % threads}", fontsize=6, tcolor="white")
        ax.text(i + 0.5, 0.6, str(i), ha="center", fontsize=5)
        if i % total == 0:
            ax.plot([i, i], [0.4, 2.3], color="black", lw=1)
            ax.text(i + 0.1, 2.4, f"pass {it}" + (": i = global thread index" if it == 0 else f": i += {total}"),
                    fontsize=7)
    # in words, not code: the lab tasks grid-stride and global-atomic write this loop
    ax.text(0, 3.3, "each thread starts at its global index (block index x threads per block + thread index) "
            "and steps by the number of threads in the grid", fontsize=8)
    ax.text(0, -0.4, "colour: block (3 blocks), number: threadIdx.x (4 threads a block), small numbers: element "
            "index. Every element once, any n, any grid; each pass of the grid reads one contiguous run.",
            fontsize=7)
    ax.set_xlim(-0.5, n + 0.5)
    ax.set_ylim(-0.8, 3.7)
    save(fig, "06_grid_stride.png")


# --- chapter 12: copy and compute overlap ---------------------------------------------------

DIAGRAMS = [hierarchy, coalescing, addressing, shuffle_down, bank_grid, spread_banks, tile_flow, grid_stride]


def main():
    words = sys.argv[1:]
    for d in DIAGRAMS:
        if not words or any(w in d.__name__ for w in words):
            d()


if __name__ == "__main__":
    main()
