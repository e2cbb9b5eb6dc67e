#!/usr/bin/env bash
# Issue 6 on the GPU machine, in one call: the GPU test suites that the tuner touches, then
# `isaac-tune collect` for the GEMM model's training data. Run from the repository root through the
# bundle (bash .bundle/run-on-device.sh bash scripts/collect-on-device.sh); writes to $OUT:
#   run.log (everything), tests.log, collect-gemm.csv (the dataset), search.log (search timing).
# Environment: COLLECT_SECONDS (default 300), COLLECT_ARGS (more collect options).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv || true
nproc
echo "=== GPU tests $(date -u +%T) ==="
for t in test_gpu_smoke test_gpu_program test_gpu_gemm; do
  timeout 150 "$bin/$t" 2>&1 | tail -15 | tee -a "$out/tests.log"
  echo "$t exit ${PIPESTATUS[0]}" | tee -a "$out/tests.log"
done
if [[ -f .bundle/probe-model.json ]]; then
  echo "=== search timing $(date -u +%T) ==="
  for shape in "2560 16 2560 --layout NN" "4096 4096 4096 --layout NT" "32 32 60000 --layout NT" "1760 128 1760 --layout NT --dtype f16"; do
    # shellcheck disable=SC2086
    "$bin/isaac-tune" search $shape --model .bundle/probe-model.json --top 3 2>&1 | tee -a "$out/search.log"
  done
fi
echo "=== collect $(date -u +%T) ==="
# shellcheck disable=SC2086
ISAAC_NO_CACHE=1 "$bin/isaac-tune" collect --out "$out/collect-gemm.csv" --seconds "${COLLECT_SECONDS:-300}" \
  --dtypes f32,f16,f64 --uniform-share 0.5 ${COLLECT_ARGS:-}
echo "collect exit $?"
wc -l "$out/collect-gemm.csv"
echo "=== done $(date -u +%T) ==="
