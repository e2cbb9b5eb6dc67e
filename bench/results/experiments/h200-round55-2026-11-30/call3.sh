#!/usr/bin/env bash
# Round 55, call 3: the f64 GEMM tuner, 0.1.37's shipped model (S) against the f64 model retrained with
# call 2's focus round added (F, a user model in the cache dir), two rounds; batched f64 once each.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac /tmp/out /tmp/cache3-* && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
for d in F-r1 F-r2 F-b; do mkdir -p /tmp/cache3-$d/models && cp .bundle/gemm-f64-focus55.json /tmp/cache3-$d/models/gemm-f64.json; done
for round in 1 2; do
  modes="F S"; [ $round = 2 ] && modes="S F"
  for mode in $modes; do
    echo "=== tuned f64 $mode round $round $(date -u +%T)"
    ISAAC_CACHE_DIR=/tmp/cache3-$mode-r$round timeout 110 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f64 \
      --winners bench/results/gemm-sweep-winners.csv --top-k 10 --csv /tmp/out/tuned-f64-$mode-r$round.csv 2>&1 | grep -E "^top-1|geometric mean"
  done
done
for mode in S F; do
  echo "=== batched f64 $mode $(date -u +%T)"
  ISAAC_CACHE_DIR=/tmp/cache3-$mode-b timeout 80 /tmp/isaac/bin/isaac-bench-gemm batched --dtypes f64 --csv /tmp/out/batched-f64-$mode.csv 2>&1 | grep -E "geometric mean"
done
tar cJf "$OUT/call3.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
