#!/usr/bin/env python3
"""Plot of a tuned-benchmark CSV (isaac-bench-gemm tuned / isaac-bench-conv tuned): per problem,
tuned isaac (the model's top-k, re-benchmarked) against the vendor library timed in the same process,
with each dtype's geometric mean; below, the tuner's criteria: the model's top-1 and top-k against the
brute-force best, with the 85% and 95% lines (without a sweep, the top-1 against the top-k).
usage: plot_tuned.py RESULTS.csv OUT.png"""
import csv
import math
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main(path, out):
    lines = open(path).read().splitlines()
    header = next((line[1:].strip() for line in lines if line.startswith("#")), "")
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    vendor = "cublas_tflops" if "cublas_tflops" in rows[0] else "cudnn_tflops"
    vendor_name = "cuBLAS" if vendor == "cublas_tflops" else "cuDNN"
    label = lambda r: f"{r['dtype']} {r['suite']} {r['m']}x{r['n']}x{r['k']}" if "m" in r else f"{r['dtype']} {r['name']}"
    value = lambda r, c: float(r[c]) if r.get(c) else 0.0
    names = [label(r) for r in rows]
    x = list(range(len(rows)))
    width = max(10, len(rows) * 0.32)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(width, 9), sharex=True)

    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    for i, dtype in enumerate(dtypes):
        xs = [j for j, r in enumerate(rows) if r["dtype"] == dtype]
        ratios = [value(rows[j], "topk_tflops") / value(rows[j], vendor) if value(rows[j], vendor) > 0 else 0.0
                  for j in xs]
        mean = geometric_mean([v for v in ratios if v > 0])
        top.bar(xs, ratios, 0.7, color=f"C{i}", label=f"{dtype}: geometric mean {mean:.2f}x")
    top.axhline(1.0, color="black", lw=1)
    top.set_ylabel(f"tuned isaac / {vendor_name}")
    top.legend(fontsize=8)
    top.set_title(textwrap.fill(f"{path.split('/')[-1]}: {header}", int(width * 12)), fontsize=8)

    if any(value(r, "brute_tflops") > 0 for r in rows):
        bottom.plot(x, [value(r, "top1_vs_brute") for r in rows], "o", label="model's top-1 / brute force")
        bottom.plot(x, [value(r, "topk_vs_brute") for r in rows], "s",
                    label="model's top-k, re-benchmarked / brute force")
        bottom.axhline(0.85, color="C0", ls=":", lw=1)
        bottom.axhline(0.95, color="C1", ls=":", lw=1)
        bottom.set_ylabel("ratio to the brute-force best")
    else:  # no sweep in these dtypes (isaac-bench-conv tuned --bf16): what the re-benchmark adds
        bottom.plot(x, [value(r, "top1_tflops") / value(r, "topk_tflops") if value(r, "topk_tflops") > 0 else 0.0
                        for r in rows], "o", label="model's top-1 / top-k re-benchmarked (no brute-force sweep)")
        bottom.axhline(1.0, color="black", lw=1)
        bottom.set_ylabel("ratio to the re-benchmark's choice")
    bottom.legend(fontsize=8)
    bottom.set_xticks(x)
    bottom.set_xticklabels(names, rotation=90, fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
