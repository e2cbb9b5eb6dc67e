#!/usr/bin/python3
"""Plots `isaac-tune cv --sizes ... --csv FILE` (held-out MSE against training rows, the paper's
Figure 5): plot_sizes.py FILE OUT.png [TITLE]"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
curves = defaultdict(list)
for r in rows:
    curves[r["architecture"]].append((int(r["train_rows"]), float(r["test_mse"]), float(r["train_mse"])))
fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
for arch, pts in curves.items():
    pts.sort()
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"{arch}: held-out")
    ax.plot([p[0] for p in pts], [max(p[2], 1e-6) for p in pts], ":", alpha=0.6, label=f"{arch}: training (floored at 1e-6)")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("training rows")
ax.set_ylabel("MSE of log(TFLOP/s)")
ax.set_title(sys.argv[3] if len(sys.argv) > 3 else "MSE against dataset size")
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2])
