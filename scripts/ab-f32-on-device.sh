#!/usr/bin/env bash
# Two builds of isaac, A (.bundle) and B (.bundle-b), timed against cuBLAS on the f32 GEMM winners in
# alternating processes (A B A B), after B's TC=1 GPU tests. Run from the repository root with both
# folders carried; writes to $OUT: ab-<n>-<build>.csv, b-tests.log.
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
export ISAAC_CACHE_DIR=/tmp/isaac-cache-ab
unpack() { rm -rf /tmp/isaac "$ISAAC_CACHE_DIR"; tar xf "$1/isaac.tar.xz" -C /tmp; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unpack .bundle-b
timeout 200 /tmp/isaac/bin/test_gpu_gemm -tc="GEMM TC=1*" > "$out/b-tests.log" 2>&1
echo "B tests exit $?"; tail -3 "$out/b-tests.log"
for n in 1 2; do
  for build in a b; do
    [[ $build == a ]] && unpack .bundle || unpack .bundle-b
    /tmp/isaac/bin/isaac-bench-gemm run --winners bench/results/gemm-sweep-winners.csv --dtypes f32 \
      --csv "$out/ab-$n-$build.csv" 2>&1 | grep -E "DeepBench\+ICA|LINPACK 1.*rows"
    echo "^ run $n build $build"
  done
done
