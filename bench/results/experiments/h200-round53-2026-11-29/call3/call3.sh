#!/usr/bin/env bash
# Session 2026-11-29 (round 53), call 3: 0.1.35 as committed (ping-pong tile loops for 128-accumulator
# tiles, tile loops numbered over all batches, C's store wait deferred to the next tile). The GEMM GPU
# suite, the smoke and program suites; `batched` and `tuned` for every dtype.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
export ISAAC_CACHE_DIR=/tmp/isaac-cache-tests
echo "=== test_gpu_gemm $(date -u +%T)"
timeout 230 /tmp/isaac/bin/test_gpu_gemm > /tmp/out/test_gpu_gemm.log 2>&1; echo "exit $?"; grep -E "ERROR" -A4 /tmp/out/test_gpu_gemm.log | head -24; grep -E "stages 0|MESSAGE: [0-9]+ cases$" /tmp/out/test_gpu_gemm.log | head -4; tail -3 /tmp/out/test_gpu_gemm.log | head -2
echo "=== test_gpu_smoke $(date -u +%T)"
timeout 40 /tmp/isaac/bin/test_gpu_smoke > /tmp/out/test_gpu_smoke.log 2>&1; echo "exit $?"; tail -3 /tmp/out/test_gpu_smoke.log | head -2
echo "=== test_gpu_program $(date -u +%T)"
timeout 60 /tmp/isaac/bin/test_gpu_program > /tmp/out/test_gpu_program.log 2>&1; echo "exit $?"; grep -E "ERROR" -A4 /tmp/out/test_gpu_program.log | head -12; tail -3 /tmp/out/test_gpu_program.log | head -2
export ISAAC_CACHE_DIR=/tmp/isaac-cache-bench
echo "=== batched $(date -u +%T)"
timeout 110 /tmp/isaac/bin/isaac-bench-gemm batched --csv /tmp/out/h200-gemm-batched.csv 2>&1 | grep -E "geometric mean"
echo "=== tuned $(date -u +%T)"
timeout 150 /tmp/isaac/bin/isaac-bench-gemm tuned --winners bench/results/gemm-sweep-winners.csv --top-k 10 \
  --csv /tmp/out/h200-gemm-tuned.csv 2>&1 | grep -E "^top-1|geometric mean"
tar cJf "$OUT/call3.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T)"
