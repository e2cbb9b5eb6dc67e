#!/usr/bin/env bash
# Round 55, call 6: 0.1.38 (5cbb621): test_gpu_program and test_gpu_aot (isaac::compile through the tuner).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac /tmp/c6-* && tar xf .bundle/isaac.tar.xz -C /tmp
for t in test_gpu_program test_gpu_aot; do
  echo "=== $t $(date -u +%T)"
  ISAAC_CACHE_DIR=/tmp/c6-$t timeout 100 /tmp/isaac/bin/$t > "$OUT/$t.log" 2>&1; echo "exit $?"; tail -3 "$OUT/$t.log" | head -2
done
echo "=== done $(date -u +%T) $SECONDS s"
