#!/usr/bin/env python3
"""Plots isaac and cuBLAS against each row's memory floor, from the CSV that `isaac-bench-gemm run`
writes with --floor-csv.

    python3 bench/plot_floor.py [--csv bench/results/h100-gemm-floor.csv] [--out bench/results/h100-gemm-floor.png]

The floor is one kernel that reads the row's A and B and writes its C once, timed like the GEMMs (L2
flushed, median): no GEMM finishes sooner. One panel per dtype with the rows whose roofline is set by
bandwidth (roofline below the peak that the comment line gives, to its rounding); per row two bars, isaac's and cuBLAS's
TFLOP/s over the floor's, and a line at 1.0. The panel's title gives the geometric mean of floor/cuBLAS:
the most any kernel could be ahead of cuBLAS on those rows.
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
from plot_gemm import number  # noqa: E402

COLUMNS = ["dtype", "suite", "m", "n", "k", "at", "bt", "bytes", "floor_tflops", "isaac_tflops", "cublas_tflops",
           "roofline_tflops"]


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", default="bench/results/h100-gemm-floor.csv")
    parser.add_argument("--out", default=None, help="default: the CSV's path with .png")
    args = parser.parse_args()
    out = args.out or os.path.splitext(args.csv)[0] + ".png"
    with open(args.csv, newline="") as f:
        lines = f.read().splitlines()
    comments = [line for line in lines if line.startswith("#")]
    rows = list(csv.DictReader(line for line in lines if line.strip() and not line.startswith("#")))
    if not rows:
        sys.exit(f"{args.csv}: no rows")
    missing = [c for c in COLUMNS if c not in rows[0]]
    if missing:
        sys.exit(f"{args.csv}: missing columns {missing}")
    peaks = {d: float(v) for line in comments for d, v in re.findall(r"peak (\w+) ([0-9.]+) TFLOP/s", line)}
    dtypes = [d for d in ("f32", "f16", "f64") if any(r["dtype"] == d for r in rows)]
    panels = []
    for d in dtypes:
        bound = [r for r in rows if r["dtype"] == d and number(r["roofline_tflops"]) and d in peaks
                 and number(r["roofline_tflops"]) < 0.999 * peaks[d] and number(r["floor_tflops"])]
        if bound:
            panels.append((d, bound))
    if not panels:
        sys.exit(f"{args.csv}: no bandwidth-bound row with a floor (is the peak in the comment line?)")
    fig, axes = plt.subplots(len(panels), 1, figsize=(13, 3.6 * len(panels)), squeeze=False)
    for ax, (d, bound) in zip(axes[:, 0], panels):
        labels, isaac, cublas = [], [], []
        for r in bound:
            floor = number(r["floor_tflops"])
            labels.append(f"{r['suite']}\n{r['m']}x{r['n']}x{r['k']}")
            isaac.append((number(r["isaac_tflops"]) or 0) / floor)
            cublas.append((number(r["cublas_tflops"]) or 0) / floor)
        x = range(len(bound))
        ax.bar([i - 0.2 for i in x], isaac, 0.4, label="isaac / floor", color="#4c72b0")
        ax.bar([i + 0.2 for i in x], cublas, 0.4, label="cuBLAS / floor", color="#aaaaaa")
        for i, (a, c) in enumerate(zip(isaac, cublas)):
            ax.text(i - 0.2, a + 0.01, f"{a:.2f}", ha="center", va="bottom", fontsize=7)
            ax.text(i + 0.2, c + 0.01, f"{c:.2f}", ha="center", va="bottom", fontsize=7)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_ylim(0, 1.15)
        ax.set_ylabel("TFLOP/s over the floor's")
        headroom = geomean([1 / c for c in cublas if c > 0])
        mine = geomean([a / c for a, c in zip(isaac, cublas) if a > 0 and c > 0])
        ax.set_title(f"{d}: {len(bound)} bandwidth-bound rows; isaac/cuBLAS {mine:.2f}x, floor/cuBLAS {headroom:.2f}x "
                     f"(the most any kernel could gain over cuBLAS)", fontsize=10)
        ax.legend(loc="lower right", fontsize=8)
    fig.suptitle("GEMM against the memory floor (one kernel reading A and B and writing C once, timed the same way)",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
