#!/usr/bin/env bash
# Session 2026-11-29d, call 5: the tile-loop GPU test under compute-sanitizer (memcheck, then synccheck).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
export ISAAC_CACHE_DIR=/tmp/isaac-cache-tests
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck synccheck; do
  echo "=== $tool $(date -u +%T)"
  timeout 250 $CS --tool $tool --print-limit 20 /tmp/isaac/bin/test_gpu_gemm -tc="*tile loop*" > /tmp/out/sanitizer-$tool.log 2>&1
  echo "exit $?"; grep -E "ERROR SUMMARY|test cases|assertions|Invalid|Barrier|error" /tmp/out/sanitizer-$tool.log | head -12
done
tar cJf "$OUT/call5.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T)"
