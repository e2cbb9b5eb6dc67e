#!/usr/bin/python3
"""Plots bench/results/h100-conv.csv (isaac-bench-conv run): TFLOP/s of isaac, cuDNN and the roofline per
problem, one panel per dtype, with the isaac/cuDNN ratio written above each group.

    /usr/bin/python3 bench/plot_conv.py [bench/results/h100-conv.csv] [bench/results/h100-conv.png]
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "bench/results/h100-conv.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else src.rsplit(".", 1)[0] + ".png"
    with open(src) as f:
        rows = list(csv.DictReader(f))
    # A run filtered to some rows (--benchmark_filter) writes zeros for the others.
    rows = [r for r in rows if float(r["isaac_tflops"]) > 0 or float(r["cudnn_tflops"]) > 0]
    if not rows:
        sys.exit(f"{src} has no timed rows")
    dtypes = sorted({r["dtype"] for r in rows}, key=lambda d: ["f32", "f16", "f64"].index(d) if d in ["f32", "f16", "f64"] else 9)
    fig, axes = plt.subplots(len(dtypes), 1, figsize=(13, 4.2 * len(dtypes)), squeeze=False)
    for ax, dt in zip(axes[:, 0], dtypes):
        sel = [r for r in rows if r["dtype"] == dt]
        names = [r["name"] for r in sel]
        x = range(len(sel))
        isaac = [float(r["isaac_tflops"]) for r in sel]
        cudnn = [float(r["cudnn_tflops"]) for r in sel]
        roof = [float(r["roofline_tflops"]) for r in sel]
        w = 0.38
        ax.bar([i - w / 2 for i in x], isaac, w, label="isaac", color="tab:blue")
        ax.bar([i + w / 2 for i in x], cudnn, w, label="cuDNN (best algo, NCHW or NHWC)", color="tab:gray")
        peak = {"f16": "f16 tensor-core peak", "f64": "FFMA peak / 2"}.get(dt, "FFMA peak")
        ax.scatter(list(x), roof, marker="_", s=400, color="tab:red", label=f"roofline ({peak}, bandwidth)")
        # f16's roofline (tensor cores) sits far above isaac's bars: a log scale keeps both readable.
        if max(roof) > 4 * max(isaac + cudnn):
            ax.set_yscale("log")
        ratios = [a / b for a, b in zip(isaac, cudnn) if a > 0 and b > 0]
        for i, (a, b) in enumerate(zip(isaac, cudnn)):
            if a > 0 and b > 0:
                ax.text(i, max(a, b) * 1.02, f"{a / b:.2f}x", ha="center", fontsize=8)
        gm = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
        ax.set_title(f"CONV {dt}: isaac / cuDNN geometric mean {gm:.2f}x over {len(ratios)} problems")
        ax.set_xticks(list(x))
        ax.set_xticklabels(names)
        ax.set_ylabel("TFLOP/s")
        ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(dst, dpi=120)
    print(f"wrote {dst}")


if __name__ == "__main__":
    main()
