#!/usr/bin/env bash
# Session 2026-11-29 (round 53), call 5: test_gpu_gemm on the committed code, with a longer limit than
# call 4's 240 s (which stopped it after the ping-pong case).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
export ISAAC_CACHE_DIR=/tmp/isaac-cache-tests
start=$SECONDS
timeout 340 /tmp/isaac/bin/test_gpu_gemm > $OUT/test_gpu_gemm.log 2>&1; echo "exit $? after $((SECONDS - start)) s"
grep -E "ERROR" -A4 $OUT/test_gpu_gemm.log | head -20; tail -3 $OUT/test_gpu_gemm.log | head -2
