#!/usr/bin/env bash
# Round 69, call 7 (the bundle of commit 9acffe6, the session's last): test_gpu_conv, test_gpu_smoke,
# test_gpu_program and test_gpu_aot on the very commit.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export ISAAC_CACHE_DIR=/tmp/c7
for t in test_gpu_conv test_gpu_smoke test_gpu_program test_gpu_aot; do
  echo "=== $t $(date -u +%T) $SECONDS s"
  timeout 200 /tmp/isaac/bin/$t > "$OUT/$t.log" 2>&1; echo "exit $?"
  tail -3 "$OUT/$t.log"; grep -E "ERROR|FAILED" "$OUT/$t.log" | head -5
done
echo "=== done $SECONDS s"
