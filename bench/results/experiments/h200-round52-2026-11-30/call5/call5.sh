#!/usr/bin/env bash
# Session 2026-11-30 (round 52), call 5 (experiment switch ISAAC_TMAP_PREFETCH, not committed): TMA=1
# kernels. 0: as 0.1.34; 1: thread 0 prefetches the tensor maps (prefetch.tensormap) before it
# initialises the mbarriers; 2: the same, and where a block copies its one or two K tiles at once
# (ST=1-2, no producer warp) thread 0 issues them before the block barrier.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
for mode in 2; do
  echo "=== test_gpu_gemm TMA=1 mode $mode $(date -u +%T)"
  ISAAC_TMAP_PREFETCH=$mode ISAAC_CACHE_DIR=/tmp/tcache-$mode timeout 150 /tmp/isaac/bin/test_gpu_gemm -tc="GEMM TC=2 TMA=1*" > /tmp/out/test-tma-$mode.log 2>&1; echo "exit $?"
  grep -E "ERROR" -A4 /tmp/out/test-tma-$mode.log | head -16; tail -3 /tmp/out/test-tma-$mode.log | head -2
done
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
for round in 1 2; do
  while IFS='|' read -r dtype name shape params; do
    modes="0 1 2"; [ $round = 2 ] && modes="2 1 0"
    for mode in $modes; do
      [ $SECONDS -gt 540 ] && break 3
      echo "=== $dtype $name mode $mode round $round $(date -u +%T)"
      eval "ISAAC_TMAP_PREFETCH=$mode ISAAC_CACHE_DIR=/tmp/cache-$mode timeout 30 /tmp/isaac/bin/isaac-bench-gemm sets $shape --dtype $dtype --lt-algorithms 1 --csv /tmp/out/sets-$dtype-$name-$mode-r$round.csv $params" 2>&1 | sed -n "$S" | grep -v 'TFLOP/s  '
    done
  done < .bundle/problems5.txt
done
tar cJf "$OUT/call5.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
