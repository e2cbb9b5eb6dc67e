#!/usr/bin/env python3
"""Plot of the batched-GEMM CSV (isaac-bench-gemm batched): one panel per dtype, per problem a bar of the
model's top-1 over cuBLAS and one of the top-k re-benchmarked over cuBLAS, with a line at 1.0. A problem
without the figures for a ratio gets no bar and "n/a".
usage: plot_batched.py [RESULTS.csv [OUT.png]]   (default: bench/results/h100-gemm-batched.csv, .png beside it)
Run with /usr/bin/python3 (Debian's python3-matplotlib)."""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path, out):
    rows = list(csv.DictReader(line for line in open(path) if not line.startswith("#")))
    if not rows:
        sys.exit(f"{path}: no rows")
    value = lambda r, c: float(r[c]) if r.get(c) else 0.0
    ratio = lambda r, c: value(r, c) / value(r, "cublas_tflops") if value(r, c) > 0 and value(r, "cublas_tflops") > 0 else 0.0
    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    per_panel = max(sum(r["dtype"] == d for r in rows) for d in dtypes)
    fig, axes = plt.subplots(len(dtypes), 1, figsize=(max(8, per_panel * 0.7), 4.2 * len(dtypes)), squeeze=False)
    w = 0.38
    for ax, dtype in zip(axes[:, 0], dtypes):
        panel = [r for r in rows if r["dtype"] == dtype]
        x = range(len(panel))
        for i, (column, name) in enumerate([("top1_tflops", "model top-1 / cuBLAS"),
                                            ("topk_tflops", "model top-k, re-benchmarked / cuBLAS")]):
            ratios = [ratio(r, column) for r in panel]
            ax.bar([v + (i - 0.5) * w for v in x], ratios, w, label=name)
            for v, q in zip(x, ratios):
                ax.text(v + (i - 0.5) * w, q if q > 0 else 0.02, f"{q:.2f}" if q > 0 else "n/a", ha="center",
                        va="bottom", fontsize=6, rotation=90)
        ax.axhline(1.0, color="black", lw=1)
        ax.set_ylabel("TFLOP/s over cuBLAS's")
        ax.set_title(f"{dtype}: isaac's tuner against cuBLAS ({os.path.basename(path)})", fontsize=10)
        ax.set_xticks(list(x))
        ax.set_xticklabels([f"{r['suite']} {'' if r['batch'] == '1' else r['batch'] + 'x'}{r['m']}x{r['n']}x{r['k']} "
                            f"{'T' if r['at'] == '1' else 'N'}{'T' if r['bt'] == '1' else 'N'}" for r in panel],
                           rotation=30, ha="right", fontsize=7)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) > 3 or any(a in ("-h", "--help") for a in sys.argv[1:]):
        sys.exit(__doc__)
    results = sys.argv[1] if len(sys.argv) > 1 else "bench/results/h100-gemm-batched.csv"
    main(results, sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(results)[0] + ".png")
