#!/usr/bin/env bash
# The closing GPU run of a CONV change in one call: isaac against cuDNN with the cached winners,
# the tuner (model top-1 and top-10) against them, then the GPU suites. Run from the repository
# root through the bundle (bash .bundle/run-on-device.sh bash scripts/conv-final-on-device.sh);
# writes to $OUT: tests.log (+ one log per suite), h100-conv.csv, h100-conv-tuned.csv, conv-*.json.
# Environment: TESTS (default: every GPU suite), RUN_SECONDS (default 150).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache
echo "=== isaac vs cuDNN $(date -u +%T) ==="
timeout -k 10 $((${RUN_SECONDS:-150} + 60)) "$bin/isaac-bench-conv" run --winners bench/results/conv-sweep-winners.csv \
  --csv "$out/h100-conv.csv" --budget "${RUN_SECONDS:-150}" --benchmark_out="$out/conv-run.json" \
  --benchmark_out_format=json 2>&1 | tail -35
echo "run exit ${PIPESTATUS[0]}"
echo "=== tuned $(date -u +%T) ==="
timeout -k 10 240 "$bin/isaac-bench-conv" tuned --winners bench/results/conv-sweep-winners.csv --top-k 10 \
  --csv "$out/h100-conv-tuned.csv" --benchmark_out="$out/conv-tuned.json" --benchmark_out_format=json 2>&1 | tail -35
echo "tuned exit ${PIPESTATUS[0]}"
for t in ${TESTS-test_gpu_conv test_gpu_smoke test_gpu_program test_gpu_aot test_gpu_gemm}; do
  echo "=== $t $(date -u +%T) ==="
  timeout 300 "$bin/$t" > "$out/$t.log" 2>&1
  echo "$t exit $?" | tee -a "$out/tests.log"
  tail -3 "$out/$t.log" | tee -a "$out/tests.log"
done
echo "=== done $(date -u +%T) ==="
