#!/usr/bin/env bash
# Tensor-core (TC=1) f16 GEMM on the GPU machine, in one call (issue 4): the GPU GEMM suites, a sweep of
# the f16 problems that starts from the cached winners and gives TC=1 sets a share of its sample, then
# isaac against cuBLAS for every dtype with the merged winners. Run from the repository root through the
# bundle (bash .bundle/run-on-device.sh bash scripts/tc-on-device.sh); writes to $OUT:
#   tests.log, gemm-sweep-winners.csv, gemm-sweep-all.csv, h100-gemm.csv, gemm-run.json, run.log.
# Environment: SWEEP_DTYPES (default f16), SWEEP_SECONDS (default 200), TESTS (default 1: run the suites first), COLLECT_SECONDS
# (default 0: also collect f16 rows with --tc-share 0.7 for the model).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv || true
if [[ ${TESTS:-1} == 1 ]]; then
  echo "=== GPU tests $(date -u +%T) ==="
  timeout 120 "$bin/test_gpu_gemm" -tc="*TC=1*" 2>&1 | tail -12 | tee -a "$out/tests.log"
  echo "test_gpu_gemm TC=1 exit ${PIPESTATUS[0]}" | tee -a "$out/tests.log"
  for t in test_gpu_gemm test_gpu_smoke; do
    timeout 180 "$bin/$t" -tce="*TC=1*" 2>&1 | tail -12 | tee -a "$out/tests.log"
    echo "$t exit ${PIPESTATUS[0]}" | tee -a "$out/tests.log"
  done
fi
echo "=== ${SWEEP_DTYPES:-f16} sweep $(date -u +%T) ==="
cp bench/results/gemm-sweep-winners.csv "$out/gemm-sweep-winners.csv"
timeout -k 10 $((${SWEEP_SECONDS:-200} + 60)) "$bin/isaac-bench-gemm" sweep --dtypes "${SWEEP_DTYPES:-f16}" --merge --tc-fraction 0.7 \
  --budget-seconds "${SWEEP_SECONDS:-200}" --out "$out/gemm-sweep-winners.csv" --all "$out/gemm-sweep-all.csv"
echo "sweep exit $?"
echo "=== isaac vs cuBLAS $(date -u +%T) ==="
timeout -k 10 150 "$bin/isaac-bench-gemm" run --winners "$out/gemm-sweep-winners.csv" --csv "$out/h100-gemm.csv" \
  -- --benchmark_out="$out/gemm-run.json" --benchmark_out_format=json 2>&1 | tail -70
echo "run exit ${PIPESTATUS[0]}"
if ((${COLLECT_SECONDS:-0} > 0)); then
  echo "=== collect f16 $(date -u +%T) ==="
  ISAAC_NO_CACHE=1 "$bin/isaac-tune" collect --out "$out/collect-tc.csv" --seconds "$COLLECT_SECONDS" \
    --dtypes f16 --uniform-share 0.3 --tc-share 0.7 --seed 2026112201
  echo "collect exit $?"
  wc -l "$out/collect-tc.csv"
fi
echo "=== done $(date -u +%T) ==="
