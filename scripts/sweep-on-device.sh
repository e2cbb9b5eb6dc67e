#!/usr/bin/env bash
# A GEMM sweep on the GPU machine in one call (issue 4): the GPU GEMM suite first, then a sweep that starts
# from the cached winners (--merge) over the problems named, then isaac against cuBLAS for every dtype
# with the merged winners. Run from the repository root through the bundle
# (bash .bundle/run-on-device.sh bash scripts/sweep-on-device.sh); writes to $OUT:
#   tests.log (+ one log per suite), memcheck.log, gemm-sweep-winners.csv, gemm-sweep-all.csv,
#   h100-gemm.csv, gemm-run.json.
# Environment:
#   TESTS         suites to run first (default test_gpu_gemm; "" for none); each is also run under
#                 compute-sanitizer memcheck on MEMCHECK_CASES (default "", none)
#   SWEEP_DTYPES  default f16
#   SWEEP_ONLY    space-separated job-name parts (e.g. "DeepBench ICA"), swept one after another;
#                 default "": every problem
#   SWEEP_SECONDS budget of each part (default 200)
#   TC_FRACTION   share of the sample from tensor-core sets (default 0.5)
#   SWEEP_TC      sample only the sets with this TC (default -1: all)
#   SWEEP_SECONDS_<n>  the budget of the n-th part (from 1), where it differs from SWEEP_SECONDS
#   RUN           1 (default): isaac against cuBLAS afterwards
#   RUN_DTYPES    the dtypes of that run (default f32,f16,f64)
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv || true
for t in ${TESTS-test_gpu_gemm}; do
  echo "=== $t $(date -u +%T) ==="
  timeout 300 "$bin/$t" > "$out/$t.log" 2>&1
  echo "$t exit $?" | tee -a "$out/tests.log"
  tail -4 "$out/$t.log" | tee -a "$out/tests.log"
  if [[ -n ${MEMCHECK_CASES:-} ]]; then
    sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    timeout 200 "$sanitizer" --tool memcheck "$bin/$t" -tc="$MEMCHECK_CASES" >> "$out/memcheck.log" 2>&1
    echo "memcheck $t exit $?" | tee -a "$out/tests.log"
    tail -3 "$out/memcheck.log"
  fi
done
cp bench/results/gemm-sweep-winners.csv "$out/gemm-sweep-winners.csv"
read -ra parts <<< "${SWEEP_ONLY:-}"
((${#parts[@]})) || parts=("")
part=0
for only in "${parts[@]}"; do
  part=$((part + 1))
  seconds_var=SWEEP_SECONDS_$part
  seconds=${!seconds_var:-${SWEEP_SECONDS:-200}}
  echo "=== ${SWEEP_DTYPES:-f16} sweep of '${only}' for ${seconds} s $(date -u +%T) ==="
  timeout -k 10 $((seconds + 60)) "$bin/isaac-bench-gemm" sweep --dtypes "${SWEEP_DTYPES:-f16}" --merge \
    --only "$only" --tc-fraction "${TC_FRACTION:-0.5}" --tc "${SWEEP_TC:--1}" --budget-seconds "$seconds" \
    --out "$out/gemm-sweep-winners.csv" --all "$out/gemm-sweep-all.csv" | tail -40
  echo "sweep exit ${PIPESTATUS[0]}"
done
if [[ ${RUN:-1} == 1 ]]; then
  echo "=== isaac vs cuBLAS $(date -u +%T) ==="
  timeout -k 10 200 "$bin/isaac-bench-gemm" run --winners "$out/gemm-sweep-winners.csv" --csv "$out/h100-gemm.csv" \
    --dtypes "${RUN_DTYPES:-f32,f16,f64}" \
    -- --benchmark_out="$out/gemm-run.json" --benchmark_out_format=json 2>&1 | tail -70
  echo "run exit ${PIPESTATUS[0]}"
fi
echo "=== done $(date -u +%T) ==="
