#!/usr/bin/env bash
# Round 66, call 5 (0.1.49 as in call 4): the GPU suites test_gpu_program, test_gpu_aot, test_gpu_gemm
# and test_gpu_conv.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o5
for t in test_gpu_program test_gpu_aot test_gpu_gemm test_gpu_conv; do
  echo "=== $t $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c5-$t timeout $((585 - SECONDS)) /tmp/isaac/bin/$t > /tmp/o5/$t.log 2>&1; echo "exit $?"
  tail -3 /tmp/o5/$t.log | head -2
done
tar cJf "$OUT/call5.tar.xz" -C /tmp/o5 .
echo "=== done $(date -u +%T) $SECONDS s"
