#!/usr/bin/env bash
# Round 58, call 5: the implicit GEMMs of five f16 CONV problems that trail cuDNN, as plain GEMMs
# tuned by isaac beside cuBLAS: is the gap the CONV kernels' or the GEMM kernels'?
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ISAAC_CACHE_DIR=/tmp/c5-cache timeout 200 /tmp/isaac/bin/isaac-bench-gemm batched \
  --problems bench/results/experiments/h200-round58-2026-11-30/conv-as-gemm.csv --dtypes f16 \
  --csv "$OUT/conv-as-gemm.csv" > "$OUT/conv-as-gemm.log" 2>&1; echo "exit $?"
sed -n '/^problem  *top1/,$p' "$OUT/conv-as-gemm.log"
echo "=== done $SECONDS s"
