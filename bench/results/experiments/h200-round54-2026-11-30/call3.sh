#!/usr/bin/env bash
# Session 2026-11-30 (round 54), call 3: the f16 tuner with the wave fill of deep TMA pipelines counted
# one block per SM. base: 0.1.35's binaries; A: the new features, the shipped f16 model; B: the new
# features, the f16 model retrained on the same data with them (a user model in the cache dir).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac /tmp/old && tar xf .bundle/isaac.tar.xz -C /tmp && mkdir -p /tmp/old && tar xf .bundle/old.tar.xz -C /tmp/old
rm -rf /tmp/out /tmp/cache-* && mkdir -p /tmp/out /tmp/cache-B-r1/models && cp .bundle/gemm-f16-retrained.json /tmp/cache-B-r1/models/gemm-f16.json
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
bin() { if [ $1 = base ]; then echo /tmp/old/isaac/bin; else echo /tmp/isaac/bin; fi; }
lib() { if [ $1 = base ]; then echo /tmp/old/isaac/lib; else echo /tmp/isaac/lib; fi; }
for round in 1 2; do
  modes="base A B"; [ $round = 2 ] && modes="B A base"
  for mode in $modes; do
    [ $SECONDS -gt 470 ] && break 2
    echo "=== tuned f16 $mode round $round $(date -u +%T)"
    LD_LIBRARY_PATH=$(lib $mode):$LD_LIBRARY_PATH ISAAC_CACHE_DIR=/tmp/cache-$mode-r$round timeout 110 $(bin $mode)/isaac-bench-gemm tuned --dtypes f16 \
      --winners bench/results/gemm-sweep-winners.csv --top-k 10 --csv /tmp/out/tuned-f16-$mode-r$round.csv 2>&1 | grep -E "^top-1|geometric mean"
  done
  if [ $round = 1 ]; then
    for mode in base B; do
      echo "=== batched f16 $mode $(date -u +%T)"
      [ $mode = B ] && mkdir -p /tmp/cache-B-b/models && cp .bundle/gemm-f16-retrained.json /tmp/cache-B-b/models/gemm-f16.json
      LD_LIBRARY_PATH=$(lib $mode):$LD_LIBRARY_PATH ISAAC_CACHE_DIR=/tmp/cache-$mode-b timeout 80 $(bin $mode)/isaac-bench-gemm batched --dtypes f16 --csv /tmp/out/batched-f16-$mode.csv 2>&1 | grep -E "geometric mean"
    done
  fi
  [ $round = 1 ] && mkdir -p /tmp/cache-B-r2/models && cp .bundle/gemm-f16-retrained.json /tmp/cache-B-r2/models/gemm-f16.json
done
tar cJf "$OUT/call3.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
