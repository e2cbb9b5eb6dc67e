#!/usr/bin/env python3
"""Plot of the searches comparison (isaac-bench-gemm searches / isaac-bench-conv searches): per problem,
the TFLOP/s of each search's choice over the brute-force best's (model + top-k, pruning + annealing,
runtime autotune), then what each search cost: tuning time and kernels timed, summed over the problems.
usage: plot_searches.py OUT.png GEMM.csv [GEMM.csv ...] --conv CONV.csv"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

SEARCHES = [("model", "model + top-10", "tab:blue", "o"),
            ("annealing", "pruning + annealing", "tab:red", "s"),
            ("autotune", "runtime autotune", "tab:green", "^")]


def read(paths):
    rows = []
    for path in paths:
        rows += list(csv.DictReader(line for line in open(path) if not line.startswith("#")))
    return rows


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return 0.0


def label(row):
    if "suite" in row:
        return f"{row['dtype']} {row['suite']} {row['m']}x{row['n']}x{row['k']}"
    return f"{row['dtype']} {row['name']}"


def quality_panel(ax, rows, title):
    x = range(len(rows))
    for key, name, color, marker in SEARCHES:
        q = [number(r[f"{key}_vs_brute"]) for r in rows]
        good = [v for v in q if v > 0]
        gm = math.exp(sum(math.log(v) for v in good) / len(good)) if good else 0
        ax.scatter(x, q, color=color, marker=marker, s=18, label=f"{name} (geomean {gm:.2f})", zorder=3)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(0.95, color="gray", linewidth=0.8, linestyle="--")
    ax.set_xticks(list(x))
    ax.set_xticklabels([label(r) for r in rows], rotation=90, fontsize=6)
    ax.set_ylabel("TFLOP/s / brute-force best")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="lower left")
    ax.grid(axis="y", alpha=0.3)


def cost_panel(ax, groups):
    names = ["brute"] + [key for key, *_ in SEARCHES]
    colors = {"brute": "gray", **{key: color for key, _, color, _ in SEARCHES}}
    width = 0.2
    for g, (title, rows) in enumerate(groups):
        for i, key in enumerate(names):
            seconds = sum(number(r[f"{key}_tuning_s"]) for r in rows)
            kernels = sum(number(r[f"{key}_timed"]) for r in rows)
            pos = g + (i - 1.5) * width
            ax.bar(pos, seconds, width, color=colors[key], label=key if g == 0 else None)
            ax.text(pos, seconds * 1.1, f"{kernels:.0f}\nkernels", ha="center", fontsize=6)
    ax.set_yscale("log")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([t for t, _ in groups])
    ax.set_ylabel("tuning time over all problems (s)")
    ax.set_title("cost (brute force: its kernel count x annealing's cost per kernel)")
    ax.legend(fontsize=7)


def main(argv):
    if len(argv) < 3 or "--conv" not in argv:
        sys.exit(__doc__)
    out = argv[0]
    split = argv.index("--conv")
    gemm = read(argv[1:split])
    conv = read(argv[split + 1:])
    fig, axes = plt.subplots(3, 1, figsize=(14, 15), gridspec_kw={"height_ratios": [3, 3, 2]})
    quality_panel(axes[0], gemm, f"GEMM: {len(gemm)} problems of the paper (H100)")
    quality_panel(axes[1], conv, f"CONV: {len(conv)} problems of the paper (H100)")
    cost_panel(axes[2], [("GEMM", gemm), ("CONV", conv)])
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote", out)


if __name__ == "__main__":
    main(sys.argv[1:])
