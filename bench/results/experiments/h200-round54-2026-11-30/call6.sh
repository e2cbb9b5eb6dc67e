#!/usr/bin/env bash
# Session 2026-11-30 (round 54), call 6: the f16 tuner, 0.1.36's shipped model (S) against the f16 model
# retrained with call 5's focus round added (F, a user model in the cache dir), two rounds; batched f16 once.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac /tmp/out /tmp/cache6-* && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
for d in F-r1 F-r2 F-b; do mkdir -p /tmp/cache6-$d/models && cp .bundle/gemm-f16-focus54.json /tmp/cache6-$d/models/gemm-f16.json; done
for round in 1 2; do
  modes="S F"; [ $round = 2 ] && modes="F S"
  for mode in $modes; do
    echo "=== tuned f16 $mode round $round $(date -u +%T)"
    ISAAC_CACHE_DIR=/tmp/cache6-$mode-r$round timeout 110 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f16 \
      --winners bench/results/gemm-sweep-winners.csv --top-k 10 --csv /tmp/out/tuned-f16-$mode-r$round.csv 2>&1 | grep -E "^top-1|geometric mean"
  done
  if [ $round = 1 ]; then
    for mode in S F; do
      echo "=== batched f16 $mode $(date -u +%T)"
      ISAAC_CACHE_DIR=/tmp/cache6-$mode-b timeout 80 /tmp/isaac/bin/isaac-bench-gemm batched --dtypes f16 --csv /tmp/out/batched-f16-$mode.csv 2>&1 | grep -E "geometric mean"
    done
  fi
done
tar cJf "$OUT/call6.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
