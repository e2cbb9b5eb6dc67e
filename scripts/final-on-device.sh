#!/usr/bin/env bash
# The last GPU call of a session: the GPU suites touched by the tuner and the caches, the caches'
# cold and warm runs, then THEN (e.g. scripts/tuned-on-device.sh). Writes to $OUT: tests.log, caches.log.
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache-final
rm -rf "$ISAAC_CACHE_DIR"
echo "=== GPU tests $(date -u +%T) ==="
for t in test_gpu_program test_gpu_aot test_gpu_conv; do
  timeout 200 "$bin/$t" 2>&1 | tail -12 | tee -a "$out/tests.log"
  echo "$t exit ${PIPESTATUS[0]}" | tee -a "$out/tests.log"
done
echo "=== caches: cold then warm $(date -u +%T) ==="
for run in cold warm; do
  echo "--- $run" | tee -a "$out/caches.log"
  "$bin/isaac-bench-gemm" program 2>&1 | tail -2 | tee -a "$out/caches.log"
done
"$bin/isaac-tune" cache show 2>&1 | tee -a "$out/caches.log"
if [[ -n ${THEN:-} ]]; then bash "$THEN"; fi
echo "=== done $(date -u +%T) ==="
