#!/usr/bin/env python3
"""Plot of isaac-bench-gemm ranking CSVs: per problem, the model's pass over the whole legal space
(median over the runs, one thread) on each machine, against the 50 ms of issue 6, with the number of
legal sets on a second axis.
usage: plot_ranking.py OUT.png LABEL=RESULTS.csv [LABEL=RESULTS.csv ...]"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def read(path):
    return list(csv.DictReader(line for line in open(path) if not line.startswith("#")))


def main(out, runs):
    tables = [(label, read(path)) for label, path in runs]
    key = lambda r: (r["dtype"], r["suite"], r["m"], r["n"], r["k"])
    rows = tables[0][1]
    names = [f"{r['dtype']} {r['suite']} {r['m']}x{r['n']}x{r['k']}" for r in rows]
    x = range(len(rows))
    fig, ax = plt.subplots(figsize=(max(10, len(rows) * 0.3), 5.5))
    width = 0.8 / len(tables)
    for i, (label, table) in enumerate(tables):
        by_key = {key(r): float(r["evaluate_ms_median"]) for r in table}
        ax.bar([v + (i - (len(tables) - 1) / 2) * width for v in x], [by_key.get(key(r), 0) for r in rows], width,
               label=label)
    ax.axhline(50, color="red", linestyle="--", linewidth=1, label="50 ms (issue 6)")
    ax.set_ylabel("model over the whole legal space, ms (median)")
    sets = ax.twinx()
    sets.plot(list(x), [int(r["legal_sets"]) / 1e6 for r in rows], "k.", markersize=4, label="legal sets")
    sets.set_ylabel("legal sets (millions)")
    sets.set_ylim(bottom=0)
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=90, fontsize=7)
    lines, labels = ax.get_legend_handles_labels()
    more, more_labels = sets.get_legend_handles_labels()
    ax.legend(lines + more, labels + more_labels, fontsize=8, loc="upper left")
    ax.set_title("isaac-bench-gemm ranking: one thread, the shipped models")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], [arg.split("=", 1) for arg in sys.argv[2:]])
