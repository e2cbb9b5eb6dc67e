#!/usr/bin/env bash
# Issue 7's comparison on the GPU machine: model + top-k, pruning + annealing, runtime autotune and the
# brute-force sweep's winners, on the paper's GEMM and CONV problems, each search's quality and cost
# measured in one process per template. Run from the repository root through the bundle
# (bash .bundle/run-on-device.sh bash scripts/searches-on-device.sh). Environment: TESTS=all runs the
# GPU suites first (or name some: TESTS="test_gpu_program"); SEARCHES (default "gemm conv"); DTYPES (GEMM,
# default f32,f16,f64). Writes to $OUT: tests.log, <device>-{gemm,conv}-searches.csv and the Google
# Benchmark JSON of each. The searches run with isaac's caches and the driver's JIT cache off
# (ISAAC_NO_CACHE, CUDA_CACHE_DISABLE): a search must not find kernels that another search compiled.
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache-searches
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | awk '{print tolower($2)}')
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv || true
tests=${TESTS:-}
[[ $tests == all ]] && tests="test_gpu_smoke test_gpu_program test_gpu_conv test_gpu_aot test_gpu_gemm"
if [[ -n $tests ]]; then
  echo "=== GPU tests $(date -u +%T) ==="
  for t in $tests; do
    timeout 240 "$bin/$t" > "$out/$t.log" 2>&1
    echo "$t exit $?" | tee -a "$out/tests.log"
    tail -4 "$out/$t.log" | tee -a "$out/tests.log"
  done
fi
for what in ${SEARCHES:-gemm conv}; do
  echo "=== $what $(date -u +%T) ==="
  if [[ $what == gemm ]]; then
    ISAAC_NO_CACHE=1 CUDA_CACHE_DISABLE=1 "$bin/isaac-bench-gemm" searches --dtypes "${DTYPES:-f32,f16,f64}" ${SEARCH_ARGS:-} \
      --csv "$out/$device-gemm-searches-$(echo "${DTYPES:-all}" | tr , -).csv" \
      -- --benchmark_out="$out/gemm-searches.json" --benchmark_out_format=json
  else
    ISAAC_NO_CACHE=1 CUDA_CACHE_DISABLE=1 "$bin/isaac-bench-conv" searches --winners bench/results/conv-sweep-winners.csv ${SEARCH_ARGS:-} \
      --csv "$out/$device-conv-searches.csv" --benchmark_out="$out/conv-searches.json" --benchmark_out_format=json
  fi
  echo "$what exit $?"
done
echo "=== done $(date -u +%T) ==="
