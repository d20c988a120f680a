#!/usr/bin/env python3
"""Draw chapter 14's ring all-reduce, step by step, into docs/plots/14_ring.png.

    python3 docs/diagrams_ring.py

Four GPUs (rows), each vector cut in four chunks (columns). A cell says which
GPUs' inputs the chunk's value on that GPU holds so far; a cell written in the
step has a dark edge, and the step's caption says where its data came from. The
steps follow launch_ring in chapters/14_multi_gpu/all_reduce.cu exactly: in
reduce-scatter step s GPU g adds GPU g-1's chunk g-1-s into its own; in
all-gather step t it copies the finished chunk g-t from GPU g-1. No measured
data; the output is deterministic.
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

PLOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plots")
K = 4
SHADES = ["#ffffff", "#deebf7", "#9ecae1", "#4292c6", "#08519c"]  # by how many inputs a cell holds


def states():
    """(caption, holdings[g][c] as a set of GPUs, cells written in this step) per panel."""
    hold = [[{g} for _ in range(K)] for g in range(K)]  # a GPU starts with its own input in every chunk
    panels = [("start: each GPU holds its own vector", [[set(x) for x in row] for row in hold], set())]
    for s in range(K - 1):
        new = [[set(x) for x in row] for row in hold]
        written = set()
        for g in range(K):
            c = (g - 1 - s) % K
            new[g][c] = hold[g][c] | hold[(g - 1) % K][c]
            written.add((g, c))
        hold = new
        panels.append((f"reduce-scatter step {s}: GPU g adds\nGPU g-1's chunk g-{1 + s} into its own", new, written))
    for t in range(K - 1):
        new = [[set(x) for x in row] for row in hold]
        written = set()
        for g in range(K):
            c = (g - t) % K
            new[g][c] = set(hold[(g - 1) % K][c])
            written.add((g, c))
        hold = new
        panels.append((f"all-gather step {t}: GPU g copies\nthe finished chunk g-{t} from GPU g-1", new, written))
    return panels


def label(gpus):
    return "all" if len(gpus) == K else "+".join(str(g) for g in sorted(gpus))


def main():
    panels = states()
    fig, grid = plt.subplots(2, 4, figsize=(11, 6.4))
    axes = list(grid.flat)
    for ax in axes[len(panels):]:
        ax.set_axis_off()
    for ax, (caption, hold, written) in zip(axes, panels):
        ax.set_axis_off()
        ax.set_xlim(-1.1, K + 0.1)
        ax.set_ylim(-0.9, K + 0.2)
        ax.set_aspect("equal")
        for g in range(K):
            y = K - 1 - g
            ax.text(-0.15, y + 0.5, f"GPU {g}", ha="right", va="center", fontsize=7)
            for c in range(K):
                edge = "black" if (g, c) in written else "#bbbbbb"
                ax.add_patch(Rectangle((c, y), 1, 1, facecolor=SHADES[len(hold[g][c])], edgecolor=edge,
                                       linewidth=1.6 if (g, c) in written else 0.5))
                tcolor = "white" if len(hold[g][c]) >= 3 else "black"
                ax.text(c + 0.5, y + 0.5, label(hold[g][c]), ha="center", va="center", fontsize=7, color=tcolor)
        for c in range(K):
            ax.text(c + 0.5, K + 0.05, f"c{c}", ha="center", va="bottom", fontsize=7)
        ax.text(K / 2 - 0.5, -0.2, caption, ha="center", va="top", fontsize=8)
    legend = axes[-1]
    legend.text(0.0, 0.75, "columns c0-c3: the four chunks\na cell: whose inputs the chunk\nholds on that GPU so far\n(\"all\": the finished sum)\n\n"
                "dark edge: written in this step\n\neach GPU receives 2(K-1)/K of the\nvector, whatever K is: "
                "busbw\n= algbw x 2(K-1)/K", fontsize=8, va="top", transform=legend.transAxes)
    fig.suptitle("Ring all-reduce on 4 GPUs: K-1 reduce-scatter steps, then K-1 all-gather steps;\n"
                 "every GPU reads only from GPU g-1, so every link is busy in every step", fontsize=10)
    os.makedirs(PLOTS, exist_ok=True)
    path = os.path.join(PLOTS, "14_ring.png")
    fig.savefig(path, dpi=110, bbox_inches="tight", pad_inches=0.1, metadata={"Software": None})
    plt.close(fig)
    print("wrote", os.path.relpath(path))


if __name__ == "__main__":
    main()
