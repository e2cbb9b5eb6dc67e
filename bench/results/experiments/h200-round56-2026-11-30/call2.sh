#!/usr/bin/env bash
# Round 56, call 2: the new GPU examples; an f64 focus round with the model's neighbours of its first
# choice (--neighbour-siblings, new); test_gpu_conv and test_gpu_gemm on this build.
set -uo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
export ISAAC_CACHE_DIR=/tmp/c2-cache
echo "=== examples $(date -u +%T)"
/tmp/isaac/bin/example_gemm_on_gpu; echo "exit $?"
/tmp/isaac/bin/example_gemm_on_gpu 1 257 4099; echo "exit $?"
/tmp/isaac/bin/example_conv_on_gpu; echo "exit $?"
echo "=== focus $(date -u +%T)"
timeout 200 /tmp/isaac/bin/isaac-tune focus --dtypes f64 --seconds 150 --out "$OUT/h200-gemm-focus56-f64.csv" \
  --m-min 256 --m-max 2048 --n-min 256 --n-max 2048 --k-min 256 --k-max 2048 --square-share 0.5 --aligned-share 0.8 \
  --per-shape 12 --best 5 --kg-siblings 1 --load-siblings 2 --neighbour-siblings 4 --seed 56 2>&1 | tr '\r' '\n' | tail -4
echo "=== suites $(date -u +%T)"
for t in test_gpu_conv test_gpu_gemm; do
  timeout 300 /tmp/isaac/bin/$t > "$OUT/$t.log" 2>&1; echo "$t exit $?"; tail -3 "$OUT/$t.log"
done
echo "=== done $(date -u +%T) $SECONDS s"
