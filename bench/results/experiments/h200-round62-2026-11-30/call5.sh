#!/usr/bin/env bash
# Round 62, call 5 (0.1.45 as committed): test_gpu_program and test_gpu_aot.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export ISAAC_CACHE_DIR=/tmp/c5-tests
/tmp/isaac/bin/isaac-info | head -1
for t in test_gpu_program test_gpu_aot; do
  echo "=== $t $(date -u +%T) $SECONDS s"
  timeout 200 /tmp/isaac/bin/$t > /tmp/$t.log 2>&1; echo "exit $?"; tail -3 /tmp/$t.log
  grep -E "ERROR|FAILED" /tmp/$t.log | head -10
done
echo "=== done $SECONDS s"
