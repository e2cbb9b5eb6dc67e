#!/usr/bin/env bash
# Round 61, call 4 (0.1.44, the bundle of call 3): test_gpu_program and test_gpu_aot, whose DSL
# convolutions are tuned by the retrained f16 CONV model.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export ISAAC_CACHE_DIR=/tmp/c4-tests
for t in test_gpu_program test_gpu_aot; do
  echo "=== $t $(date -u +%T) $SECONDS s"
  timeout 200 /tmp/isaac/bin/$t > /tmp/$t.log 2>&1; echo "exit $?"; tail -3 /tmp/$t.log
  grep -E "ERROR|FAILED" /tmp/$t.log | head -10
done
echo "=== done $SECONDS s"
