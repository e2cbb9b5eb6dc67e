#!/usr/bin/env bash
# Session 2026-11-29 (round 53), call 2 (experiment switch ISAAC_PING_PONG, not committed): f16 TMA tile loops.
# 0: as 0.1.34; 2: a tile loop's leader waits for its C stores to have read the staging at the next
# tile's epilogue, and ping-pong tile loops (two consumer warp groups of 128 threads taking a block's
# tiles in turn, two buffers each) for tiles of 128 accumulators; 4: the same, with a tile loop's tiles
# numbered over all batches (a grid of the blocks the device holds, not of as many per batch).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
for mode in 4 2; do
  echo "=== test_gpu_gemm tile loops / ping-pong, mode $mode $(date -u +%T)"
  ISAAC_PING_PONG=$mode ISAAC_CACHE_DIR=/tmp/tcache-$mode timeout 150 /tmp/isaac/bin/test_gpu_gemm -tc="*tile loops*,*ping-pong*" > /tmp/out/test-loops-$mode.log 2>&1; echo "exit $?"
  grep -E "ERROR|cases" -A3 /tmp/out/test-loops-$mode.log | head -20; tail -3 /tmp/out/test-loops-$mode.log | head -2
done
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
for round in 1 2; do
  while IFS='|' read -r dtype name shape params; do
    modes="0 2 4"; [ $round = 2 ] && modes="4 2 0"
    for mode in $modes; do
      [ $SECONDS -gt 560 ] && break 3
      echo "=== $dtype $name mode $mode round $round $(date -u +%T)"
      eval "ISAAC_PING_PONG=$mode ISAAC_CACHE_DIR=/tmp/cache-$mode timeout 40 /tmp/isaac/bin/isaac-bench-gemm sets $shape --dtype $dtype --lt-algorithms 1 --csv /tmp/out/sets-$dtype-$name-$mode-r$round.csv $params" 2>&1 | sed -n "$S" | grep -v 'TFLOP/s  '
    done
  done < .bundle/problems2.txt
done
tar cJf "$OUT/call2.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
