#!/usr/bin/env bash
# Every GPU suite, then isaac against cuBLAS with the cached sweep winners (every dtype) and its plot, in
# one call. Run from the repository root through the bundle
# (bash .bundle/run-on-device.sh bash scripts/gpu-suites-on-device.sh); writes to $OUT: tests.log, one
# log per suite, <device>-gemm.csv, gemm-run.json and <device>-gemm.png. Environment: TESTS (default:
# every suite; "" for none), RUN (default 1: the comparison with cuBLAS).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv || true
for t in ${TESTS-test_gpu_smoke test_gpu_gemm test_gpu_program test_gpu_conv test_gpu_aot}; do
  # test_gpu_gemm takes 230-250 s on an H200 since 0.1.35 (its 18 cases), over 330 s with bf16 since 0.1.40;
  # the others under 60 s.
  timeout 480 "$bin/$t" > "$out/$t.log" 2>&1
  echo "$t exit $?" | tee -a "$out/tests.log"
  tail -4 "$out/$t.log" | tee -a "$out/tests.log"
done
if [[ ${RUN:-1} == 1 ]]; then
  echo "=== isaac vs cuBLAS $(date -u +%T) ==="
  timeout -k 10 200 "$bin/isaac-bench-gemm" run --winners bench/results/gemm-sweep-winners.csv \
    --csv "$out/$device-gemm.csv" -- --benchmark_out="$out/gemm-run.json" --benchmark_out_format=json 2>&1 | tail -75
  echo "run exit ${PIPESTATUS[0]}"
  python3 bench/plot_gemm.py --csv "$out/$device-gemm.csv" --out "$out/$device-gemm.png" || echo "plot failed"
fi
echo "=== done $(date -u +%T) ==="
