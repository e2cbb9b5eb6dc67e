#!/usr/bin/env bash
# Session 2026-11-30 (round 54), call 8: the final commit's GEMM GPU suite (and AOT's, if time is left).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac /tmp/out && tar xf .bundle/isaac.tar.xz -C /tmp && mkdir -p /tmp/out
export ISAAC_CACHE_DIR=/tmp/isaac-cache-call8
rm -rf $ISAAC_CACHE_DIR
echo "=== test_gpu_gemm $(date -u +%T)"
timeout 290 /tmp/isaac/bin/test_gpu_gemm > /tmp/out/test_gpu_gemm.log 2>&1; echo "exit $?"
grep -E "ERROR" -A4 /tmp/out/test_gpu_gemm.log | head -20; tail -3 /tmp/out/test_gpu_gemm.log | head -2
if [ $SECONDS -lt 300 ]; then
  echo "=== test_gpu_aot $(date -u +%T)"
  timeout $((330 - SECONDS)) /tmp/isaac/bin/test_gpu_aot > /tmp/out/test_gpu_aot.log 2>&1; echo "exit $?"; tail -3 /tmp/out/test_gpu_aot.log | head -2
fi
tar cJf "$OUT/call8.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
