#!/usr/bin/env python3
"""Plots isaac/cuBLAS per problem from the CSV that `isaac-bench-gemm run` writes.

    python3 bench/plot_gemm.py [--csv bench/results/h100-gemm.csv] [--out bench/results/h100-gemm.png]

One panel per dtype, one bar per problem (isaac TFLOP/s over cuBLAS TFLOP/s), a line at 1.0, the ratio
written on each bar. Bars of problems whose roofline is set by bandwidth (roofline below the peak that
the CSV's comment line gives) are hatched. Rows without both figures are marked "n/a".
Needs only matplotlib (Debian: python3-matplotlib).
"""
import argparse
import csv
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

COLUMNS = ["dtype", "suite", "m", "n", "k", "at", "bt", "isaac_tflops", "cublas_tflops", "roofline_tflops", "params"]
SUITE_COLORS = {"LINPACK": "#4c72b0", "DeepBench-F": "#55a868", "DeepBench-B": "#8fc97f", "ICA": "#c44e52",
                "LAPACK": "#dd8452"}


def read(path):
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    comments = [line for line in lines if line.startswith("#")]
    body = [line for line in lines if line.strip() and not line.startswith("#")]
    rows = list(csv.DictReader(body))
    if not rows:
        sys.exit(f"{path}: no rows")
    missing = [c for c in COLUMNS if c not in rows[0]]
    if missing:
        sys.exit(f"{path}: missing columns {missing}")
    peaks = {}
    for line in comments:
        for dtype, value in re.findall(r"peak (\w+) ([0-9.]+) TFLOP/s", line):
            peaks[dtype] = float(value)
    return rows, peaks, comments


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value > 0 and math.isfinite(value) else None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", default="bench/results/h100-gemm.csv")
    parser.add_argument("--out", default=None, help="default: the CSV's path with .png")
    args = parser.parse_args()
    out = args.out or os.path.splitext(args.csv)[0] + ".png"
    rows, peaks, comments = read(args.csv)

    dtypes = []
    for r in rows:
        if r["dtype"] not in dtypes:
            dtypes.append(r["dtype"])
    width = max(10.0, 0.55 * max(sum(r["dtype"] == d for r in rows) for d in dtypes) + 2)
    fig, axes = plt.subplots(len(dtypes), 1, figsize=(width, 4.4 * len(dtypes)), squeeze=False)

    for ax, dtype in zip(axes[:, 0], dtypes):
        sub = [r for r in rows if r["dtype"] == dtype]
        labels, ratios, colors, hatches = [], [], [], []
        logs = []
        for r in sub:
            layout = ("T" if r["at"] == "1" else "N") + ("T" if r["bt"] == "1" else "N")
            labels.append(f'{r["suite"]}\n{r["m"]}x{r["n"]}x{r["k"]} {layout}')
            isaac, cublas = number(r["isaac_tflops"]), number(r["cublas_tflops"])
            ratio = isaac / cublas if isaac and cublas else None
            ratios.append(ratio)
            if ratio:
                logs.append(math.log(ratio))
            colors.append(SUITE_COLORS.get(r["suite"], "#937860"))
            roof = number(r["roofline_tflops"])
            peak = peaks.get(dtype)
            hatches.append("//" if roof and peak and roof < 0.999 * peak else "")
        x = range(len(sub))
        bars = ax.bar(x, [v or 0 for v in ratios], color=colors, hatch=None, edgecolor="black", linewidth=0.5)
        for bar, hatch in zip(bars, hatches):
            bar.set_hatch(hatch)
        top = max([v for v in ratios if v] + [1.0])
        for i, v in enumerate(ratios):
            text = f"{v:.2f}" if v else "n/a"
            ax.text(i, (v or 0) + 0.015 * top, text, ha="center", va="bottom", fontsize=7.5,
                    color="black" if v else "red")
        ax.axhline(1.0, color="black", linewidth=1.0, linestyle="--")
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7.5)
        ax.set_xlim(-0.6, len(sub) - 0.4)
        ax.set_ylim(0, top * 1.15)
        ax.set_ylabel("isaac / cuBLAS")
        mean = f"geomean {math.exp(sum(logs) / len(logs)):.2f}x over {len(logs)} problems" if logs else "no ratios"
        ax.set_title(f"{dtype}: isaac / cuBLAS (TFLOP/s ratio), {mean}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)

    handles = [Patch(facecolor=c, edgecolor="black", label=s) for s, c in SUITE_COLORS.items()]
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="//", label="roofline set by bandwidth"))
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), fontsize=8, frameon=False)
    subtitle = comments[0].lstrip("# ")[:160] if comments else ""
    fig.text(0.5, 0.005, subtitle, ha="center", fontsize=6.5, color="#555555")
    fig.tight_layout(rect=(0, 0.02, 1, 0.97))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=130)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
