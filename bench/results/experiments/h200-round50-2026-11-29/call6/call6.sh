#!/usr/bin/env bash
# Session 2026-11-29d, call 6: the GEMM GPU suite and the smoke test on the final commit (93f1a8c).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
export ISAAC_CACHE_DIR=/tmp/isaac-cache-tests
timeout 240 /tmp/isaac/bin/test_gpu_gemm > "$OUT/test_gpu_gemm.log" 2>&1; echo "gemm exit $?"; grep -E "ERROR" -A4 "$OUT/test_gpu_gemm.log" | head; tail -3 "$OUT/test_gpu_gemm.log" | head -2
timeout 40 /tmp/isaac/bin/test_gpu_smoke > "$OUT/test_gpu_smoke.log" 2>&1; echo "smoke exit $?"; tail -3 "$OUT/test_gpu_smoke.log" | head -2
