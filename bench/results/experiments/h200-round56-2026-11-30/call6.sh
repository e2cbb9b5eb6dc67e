#!/usr/bin/env bash
# Round 56, call 6: the committed 0.1.39 build: test_gpu_smoke, test_gpu_program, test_gpu_aot and the
# two GPU examples.
set -uo pipefail
cd "$(dirname "$0")/.."
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
export ISAAC_CACHE_DIR=/tmp/c6-cache
/tmp/isaac/bin/isaac-info | head -1
for t in test_gpu_smoke test_gpu_program test_gpu_aot; do
  echo "=== $t $(date -u +%T)"
  timeout 100 /tmp/isaac/bin/$t 2>&1 | tail -3
done
echo "=== examples $(date -u +%T)"
/tmp/isaac/bin/example_gemm_on_gpu 1 257 4093 2>&1 | grep -v warning; echo "exit $?"
/tmp/isaac/bin/example_conv_on_gpu 2>&1 | grep -v warning; echo "exit $?"
echo "=== done $(date -u +%T) $SECONDS s"
