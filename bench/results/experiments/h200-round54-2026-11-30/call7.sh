#!/usr/bin/env bash
# Session 2026-11-30 (round 54), call 7: 0.1.36 as committed (the wave fill of deep TMA pipelines, the
# f16 model retrained with focus54). The smoke and program suites; `batched` and `tuned` for every dtype, and their plots.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac /tmp/out && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
export ISAAC_CACHE_DIR=/tmp/isaac-cache-tests-r54b
rm -rf $ISAAC_CACHE_DIR
echo "=== test_gpu_smoke $(date -u +%T)"
timeout 40 /tmp/isaac/bin/test_gpu_smoke > /tmp/out/test_gpu_smoke.log 2>&1; echo "exit $?"; tail -3 /tmp/out/test_gpu_smoke.log | head -2
echo "=== test_gpu_program $(date -u +%T)"
timeout 60 /tmp/isaac/bin/test_gpu_program > /tmp/out/test_gpu_program.log 2>&1; echo "exit $?"; grep -E "ERROR" -A4 /tmp/out/test_gpu_program.log | head -12; tail -3 /tmp/out/test_gpu_program.log | head -2
export ISAAC_CACHE_DIR=/tmp/isaac-cache-bench-r54b
rm -rf $ISAAC_CACHE_DIR
echo "=== batched $(date -u +%T)"
timeout 120 /tmp/isaac/bin/isaac-bench-gemm batched --csv /tmp/out/h200-gemm-batched.csv 2>&1 | grep -E "geometric mean"
echo "=== tuned $(date -u +%T)"
timeout 170 /tmp/isaac/bin/isaac-bench-gemm tuned --winners bench/results/gemm-sweep-winners.csv --top-k 10 \
  --csv /tmp/out/h200-gemm-tuned.csv 2>&1 | grep -E "^top-1|geometric mean"
python3 bench/plot_batched.py /tmp/out/h200-gemm-batched.csv /tmp/out/h200-gemm-batched.png 2>&1 | tail -1
python3 bench/plot_tuned.py /tmp/out/h200-gemm-tuned.csv /tmp/out/h200-gemm-tuned.png 2>&1 | tail -1
tar cJf "$OUT/call7.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
