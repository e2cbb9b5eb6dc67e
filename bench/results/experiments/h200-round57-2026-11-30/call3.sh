#!/usr/bin/env bash
# Round 57, call 3: test_gpu_gemm's last two cases (call 2's run reached its timeout before them),
# then README's main job on 0.1.40.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "=== the last two cases of test_gpu_gemm $(date -u +%T)"
ISAAC_CACHE_DIR=/tmp/c3-cache timeout 150 /tmp/isaac/bin/test_gpu_gemm --duration=true \
  -tc="GEMM: a split's kernels launched to overlap*,GEMM: a deterministic split runs on two streams*" \
  > "$OUT/test_gpu_gemm_last.log" 2>&1; echo "exit $?"; grep -E "^[0-9.]+ s:|Status|assertions" "$OUT/test_gpu_gemm_last.log"
echo "=== main job $(date -u +%T)"
ISAAC_BUILD_DIR=$OUT bash .bundle/run-on-device.sh > "$OUT/main-job.log" 2>&1; echo "exit $?"
sed -n '/=== summary/,$p' "$OUT/main-job.log"
grep -E "^top-1|^tuned isaac|geometric mean" "$OUT/main-job.log"
echo "=== done $(date -u +%T) $SECONDS s"
