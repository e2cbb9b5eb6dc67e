#!/usr/bin/env bash
# Round 65, call 6 (0.1.48 as committed): test_gpu_conv (the model scoring the CONV search shares with
# the GEMM search changed form).
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
/tmp/isaac/bin/isaac-info | head -1
echo "=== test_gpu_conv $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c6 timeout 200 /tmp/isaac/bin/test_gpu_conv > "$OUT/test_gpu_conv.log" 2>&1; echo "exit $?"
tail -3 "$OUT/test_gpu_conv.log" | head -2; grep -E "ERROR|FAILED" "$OUT/test_gpu_conv.log" | head -10
echo "=== done $(date -u +%T) $SECONDS s"
