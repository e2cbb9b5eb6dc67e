#!/usr/bin/env bash
# Round 57, call 1: bf16 GEMM on the GPU (its test cases, the DSL path) and tuned bf16 and f16 against
# cuBLAS on the paper's GEMM problems; test_gpu_smoke and test_gpu_program on 0.1.40.
set -uo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
export ISAAC_CACHE_DIR=/tmp/c1-cache
/tmp/isaac/bin/isaac-info | head -2
echo "=== test_gpu_gemm bf16 $(date -u +%T)"
timeout 300 /tmp/isaac/bin/test_gpu_gemm -tc="GEMM bf16*" > "$OUT/test_gpu_gemm_bf16.log" 2>&1; echo "exit $?"
grep -E "MESSAGE|ERROR|wrong" "$OUT/test_gpu_gemm_bf16.log" | head -20; tail -3 "$OUT/test_gpu_gemm_bf16.log"
for t in test_gpu_program test_gpu_smoke; do
  echo "=== $t $(date -u +%T)"
  timeout 150 /tmp/isaac/bin/$t > "$OUT/$t.log" 2>&1; echo "exit $?"
  grep -E "ERROR" -A4 "$OUT/$t.log" | head -20; grep "bf16" "$OUT/$t.log" | head -8; tail -3 "$OUT/$t.log"
done
echo "=== bf16 and f16 tuned against cuBLAS $(date -u +%T)"
timeout 260 /tmp/isaac/bin/isaac-bench-gemm batched --problems bench/problems/gemm_problems.csv --dtypes bf16,f16 \
  --csv "$OUT/h200-gemm-bf16.csv" -- --benchmark_out="$OUT/gemm-bf16.json" --benchmark_out_format=json 2>&1 | tail -60
echo "=== done $(date -u +%T) $SECONDS s"
