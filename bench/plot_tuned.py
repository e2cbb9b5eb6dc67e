#!/usr/bin/env python3
"""Plot of a tuned-benchmark CSV (isaac-bench-gemm tuned / isaac-bench-conv tuned):
per problem, the TFLOP/s of the model's top-1, of the top-k re-benchmarked, of the brute-force best
and of the vendor library, with the 85%/95% criteria as a second panel.
usage: plot_tuned.py RESULTS.csv OUT.png"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main(path, out):
    rows = list(csv.DictReader(line for line in open(path) if not line.startswith("#")))
    vendor = "cublas_tflops" if "cublas_tflops" in rows[0] else "cudnn_tflops"
    label = lambda r: f"{r['dtype']} {r['suite']} {r['m']}x{r['n']}x{r['k']}" if "m" in r else f"{r['dtype']} {r['name']}"
    value = lambda r, c: float(r[c]) if r.get(c) else 0.0
    names = [label(r) for r in rows]
    x = range(len(rows))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(10, len(rows) * 0.32), 9), sharex=True)
    w = 0.2
    for i, (column, name) in enumerate([("top1_tflops", "model top-1"), ("topk_tflops", "model top-k, re-benchmarked"),
                                        ("brute_tflops", "brute-force best"), (vendor, vendor.split("_")[0])]):
        top.bar([v + (i - 1.5) * w for v in x], [value(r, column) for r in rows], w, label=name)
    top.set_ylabel("TFLOP/s (log scale)")
    top.set_yscale("log")
    top.legend(fontsize=8)
    top.set_title(path.split("/")[-1])
    bottom.plot(x, [value(r, "top1_vs_brute") for r in rows], "o", label="top-1 / brute force")
    bottom.plot(x, [value(r, "topk_vs_brute") for r in rows], "s", label="top-k / brute force")
    bottom.axhline(0.85, color="C0", ls=":", lw=1)
    bottom.axhline(0.95, color="C1", ls=":", lw=1)
    bottom.set_ylabel("ratio to the brute-force best")
    bottom.legend(fontsize=8)
    bottom.set_xticks(list(x))
    bottom.set_xticklabels(names, rotation=90, fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
