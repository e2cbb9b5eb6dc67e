#!/usr/bin/env bash
# Round 57, call 4: test_gpu_aot with the bf16 function of the exported header.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ISAAC_CACHE_DIR=/tmp/c4-cache timeout 200 /tmp/isaac/bin/test_gpu_aot > "$OUT/test_gpu_aot.log" 2>&1; echo "exit $?"
grep -E "ERROR|bgemm" -A3 "$OUT/test_gpu_aot.log" | head -20; tail -3 "$OUT/test_gpu_aot.log"
echo "=== done $SECONDS s"
