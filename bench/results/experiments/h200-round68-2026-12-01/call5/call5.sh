#!/usr/bin/env bash
# Round 68, call 5 (0.1.50, the committed build): the GEMM GPU suite (its new long-K loop shapes made
# smaller after call 4, where the suite ran past its timeout in its last case), smoke, program and AOT.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o5
for t in test_gpu_gemm test_gpu_smoke test_gpu_program test_gpu_aot; do
  echo "=== $t $(date -u +%T) $SECONDS s"
  timeout $((570 - SECONDS)) /tmp/isaac/bin/$t > /tmp/o5/$t.log 2>&1; echo "exit $?"; grep -E "test cases|assertions|ERROR" /tmp/o5/$t.log | tail -3
done
grep -E "MESSAGE: .*cases" /tmp/o5/test_gpu_gemm.log | tail -6
tar cJf "$OUT/call5.tar.xz" -C /tmp/o5 .
echo "=== done $(date -u +%T) $SECONDS s"
