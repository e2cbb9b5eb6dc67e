#!/usr/bin/env python3
"""cuDNN as PyTorch calls it, on the paper's CONV problems: a cross-check of the vendor figures that
isaac-bench-conv takes from cuDNN's legacy API (cudnnFindConvolutionForwardAlgorithmEx).

PyTorch reaches cuDNN through its frontend (graph) API with torch.backends.cudnn.benchmark = True, which
times the engines it lists and keeps the fastest. Per problem and dtype, NCHW and channels-last (NHWC)
tensors, the faster kept; stride 1, no padding (as bench/conv/problems.cpp makes them). Timing: CUDA
events around each call after 10 warm-up calls, the L2 flushed before each (a 256 MiB write), median of
30. Prints and writes a CSV: dtype,name,torch_cudnn_tflops,layout.

usage: torch_cudnn.py PROBLEMS.csv OUT.csv [DTYPES, default f16,bf16]
Needs a GPU and PyTorch (the device machine has both; this repository's build does not use it)."""
import csv
import statistics
import sys

import torch


def timed_ms(fn, flush):
    for _ in range(10):
        fn()
    times = []
    for _ in range(30):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main(problems_path, out_path, dtypes):
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    types = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    rows = [r for r in csv.DictReader(line for line in open(problems_path) if not line.startswith("#"))]
    results = []
    for dtype in dtypes:
        for r in rows:
            n, p, q, k, c, kr, ks = (int(r[x]) for x in ("n", "p", "q", "k", "c", "r", "s"))
            flops = 2.0 * n * k * p * q * c * kr * ks
            best = (float("inf"), "")
            for layout, fmt in (("NCHW", torch.contiguous_format), ("NHWC", torch.channels_last)):
                x = torch.randn(n, c, p + kr - 1, q + ks - 1, device="cuda").to(types[dtype]).to(memory_format=fmt)
                w = torch.randn(k, c, kr, ks, device="cuda").to(types[dtype]).to(memory_format=fmt)
                ms = timed_ms(lambda: torch.nn.functional.conv2d(x, w), flush)
                best = min(best, (ms, layout))
            tflops = flops / (best[0] * 1e-3) / 1e12
            results.append((dtype, r["name"], tflops, best[1]))
            print(f"{dtype:4} {r['name']:7} cuDNN (PyTorch) {tflops:8.2f} TFLOP/s  {best[1]}", flush=True)
    with open(out_path, "w", newline="") as f:
        f.write(f"# torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
                f"{torch.cuda.get_device_name()}; cudnn.benchmark, best of NCHW and NHWC, median of 30, L2 flushed\n")
        out = csv.writer(f)
        out.writerow(["dtype", "name", "torch_cudnn_tflops", "layout"])
        for dtype, name, tflops, layout in results:
            out.writerow([dtype, name, f"{tflops:.3f}", layout])


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], (sys.argv[3] if len(sys.argv) == 4 else "f16,bf16").split(","))
