#!/usr/bin/env python3
"""Pool the candidates that `isaac-bench-gemm tuned` / `isaac-bench-conv tuned --candidates-csv` timed
on the paper's problems into one dataset that `isaac-tune eval --table` reads, to screen a model
offline before an A/B on the GPU (docs/tuning-history.md, round 37).

Every candidate timed in any of the files is one row; its TFLOP/s is 100 x its median ratio to the
brute-force winner timed in the same process, so that runs on other days and devices compare. The
eval table's "top-1" and "best of top-10" are then the ratio of the model's choices among the pooled
sets to the brute force, in percent. Only sets some model has already proposed are in the pool, so
the screen can say that a model ranks known sets worse, not that its new favourites are good.

    python3 bench/candidate_pool.py OUT.csv CANDIDATES.csv...
"""
import collections
import csv
import statistics
import sys

GEMM_HEADER = "dtype,suite,m,n,k,at,bt,params,status,median_ms,tflops,rank,predicted_tflops,reason,phase"
CONV_HEADER = ("dtype,suite,layout,n,c,h,w,k,r,s,stride,pad,dilation,params,status,median_ms,tflops,rank,"
               "predicted_tflops,reason,phase")


def rows_of(path):
    with open(path, newline="") as f:
        yield from csv.DictReader(line for line in f if not line.startswith("#"))


def problem_of(row):
    """The problem's columns in the dataset format: GEMM (m, n, k, at, bt) or CONV (p, q given: h, w
    for stride 1 and no padding, as the paper's problems are)."""
    if "m" in row:
        return "gemm", f"{row['dtype']},{row['suite']},{row['m']},{row['n']},{row['k']},{row['at']},{row['bt']}"
    h = int(row["p"]) + int(row["r"]) - 1
    w = int(row["q"]) + int(row["s"]) - 1
    return "conv", (f"{row['dtype']},{row['name']},{row['layout']},{row['n']},{row['c']},{h},{w},{row['k']},"
                    f"{row['r']},{row['s']},1,0,1")


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    out_path, inputs = argv[1], argv[2:]
    ratios = collections.defaultdict(list)
    templates = set()
    for path in inputs:
        for row in rows_of(path):
            if "vs_brute" not in row or "params" not in row:
                sys.exit(f"{path}: not a --candidates-csv file (no vs_brute or params column)")
            if row.get("error") or not row["vs_brute"]:
                continue
            template, problem = problem_of(row)
            templates.add(template)
            ratios[(problem, row["params"])].append(float(row["vs_brute"]))
    if len(templates) != 1:
        sys.exit(f"the files hold {' and '.join(sorted(templates)) or 'no'} candidates: give one template's files")
    template = templates.pop()
    with open(out_path, "w") as out:
        out.write((GEMM_HEADER if template == "gemm" else CONV_HEADER) + "\n")
        for (problem, params), values in sorted(ratios.items()):
            out.write(f'{problem},"{params}",ok,1.0,{100 * statistics.median(values):.3f},0,0,"",pool\n')
    problems = len({problem for problem, _ in ratios})
    print(f"{out_path}: {len(ratios)} {template.upper()} sets on {problems} problems from {len(inputs)} files")


if __name__ == "__main__":
    main(sys.argv)
