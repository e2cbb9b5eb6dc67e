#!/usr/bin/env bash
# CONV tensor cores on the GPU machine in one call: the GPU CONV suite (and memcheck on the cases
# named), then CONV training data from `isaac-tune collect --template conv` (uniform over
# conv_space, TC_SHARE of the rows from the tensor-core sets alone, every other one wgmma where the
# input has such sets). Run from the repository root
# through the bundle (bash .bundle/run-on-device.sh bash scripts/conv-tc-on-device.sh); writes
# to $OUT: tests.log (+ one log per suite), memcheck.log, collect-conv.csv.
# Environment: TESTS (default test_gpu_conv), MEMCHECK_CASES (default "*hand-picked*"),
#   COLLECT_SECONDS (default 240; 0: none), COLLECT_SEED (default 21), TC_SHARE (default 0.5),
#   COLLECT_DTYPES (default f16,f32), ALIGNED_SHARE (default 0: the share of inputs with N, C and K
#   rounded up to multiples of 8, which the f16 wgmma sets need).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache
for t in ${TESTS-test_gpu_conv}; do
  echo "=== $t $(date -u +%T) ==="
  timeout 300 "$bin/$t" > "$out/$t.log" 2>&1
  echo "$t exit $?" | tee -a "$out/tests.log"
  tail -4 "$out/$t.log" | tee -a "$out/tests.log"
  if [[ -n ${MEMCHECK_CASES-*hand-picked*} ]]; then
    sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    timeout 200 "$sanitizer" --tool memcheck "$bin/$t" -tc="${MEMCHECK_CASES-*hand-picked*}" >> "$out/memcheck.log" 2>&1
    echo "memcheck $t exit $?" | tee -a "$out/tests.log"
    tail -3 "$out/memcheck.log"
  fi
done
if [[ ${COLLECT_SECONDS:-240} != 0 ]]; then
  echo "=== conv collect $(date -u +%T) ==="
  ISAAC_NO_CACHE=1 timeout -k 10 $((${COLLECT_SECONDS:-240} + 60)) "$bin/isaac-tune" collect --template conv \
    --dtypes "${COLLECT_DTYPES:-f16,f32}" --tc-share "${TC_SHARE:-0.5}" --aligned-share "${ALIGNED_SHARE:-0}" --seed "${COLLECT_SEED:-21}" --seconds "${COLLECT_SECONDS:-240}" \
    --out "$out/collect-conv.csv" --quiet 2>&1 | tail -12
  echo "collect exit ${PIPESTATUS[0]}"
fi
echo "=== done $(date -u +%T) ==="
