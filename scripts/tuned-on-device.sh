#!/usr/bin/env bash
# Issue 6's proof on the GPU machine: the tuner (model top-1, model top-k re-benchmarked) against the
# brute-force sweep's winners and cuBLAS/cuDNN, all timed in one process per template. Run from the
# repository root through the bundle (bash .bundle/run-on-device.sh bash scripts/tuned-on-device.sh);
# writes to $OUT: run.log, <device>-gemm-tuned.csv, <device>-conv-tuned.csv, and the Google Benchmark
# JSON of each. Environment: TUNED (default "gemm conv"), TOP_K (default 10).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=${ISAAC_CACHE_DIR:-/tmp/isaac-cache}
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv || true
for what in ${TUNED:-gemm conv}; do
  echo "=== $what $(date -u +%T) ==="
  if [[ $what == gemm ]]; then
    "$bin/isaac-bench-gemm" tuned --winners "${GEMM_WINNERS:-bench/results/gemm-sweep-winners.csv}" --top-k "${TOP_K:-10}" --repeats 20 \
      --csv "$out/$device-gemm-tuned.csv" -- --benchmark_out="$out/gemm-tuned.json" --benchmark_out_format=json
  else
    "$bin/isaac-bench-conv" tuned --winners bench/results/conv-sweep-winners.csv --top-k "${TOP_K:-10}" \
      --csv "$out/$device-conv-tuned.csv" --benchmark_out="$out/conv-tuned.json" --benchmark_out_format=json
  fi
  echo "$what exit $?"
done
echo "=== done $(date -u +%T) ==="
