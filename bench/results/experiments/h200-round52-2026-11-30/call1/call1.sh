#!/usr/bin/env bash
# Session 2026-11-30 (round 52), call 1 (experiment switch ISAAC_FRAGMENT_PREFETCH, not committed):
# TC=1 kernels load the first step's fragments of stage t + 1 during stage t's last step.
# 0: as 0.1.34; 1: barrier, copies, next fragments, products; 2: barrier, next fragments, products, copies.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
for mode in 1 2; do
  echo "=== test_gpu_gemm TC=1 mode $mode $(date -u +%T)"
  ISAAC_FRAGMENT_PREFETCH=$mode ISAAC_CACHE_DIR=/tmp/tcache-$mode timeout 150 /tmp/isaac/bin/test_gpu_gemm -tc="GEMM TC=1*" > /tmp/out/test-tc1-$mode.log 2>&1; echo "exit $?"
  grep -E "ERROR" -A4 /tmp/out/test-tc1-$mode.log | head -16; tail -3 /tmp/out/test-tc1-$mode.log | head -2
done
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
for round in 1 2; do
  while IFS='|' read -r dtype name shape params; do
    modes="0 1 2"; [ $round = 2 ] && modes="2 1 0"
    for mode in $modes; do
      [ $SECONDS -gt 560 ] && break 3
      echo "=== $dtype $name mode $mode round $round $(date -u +%T)"
      eval "ISAAC_FRAGMENT_PREFETCH=$mode ISAAC_CACHE_DIR=/tmp/cache-$mode timeout 30 /tmp/isaac/bin/isaac-bench-gemm sets $shape --dtype $dtype --lt-algorithms 1 --csv /tmp/out/sets-$dtype-$name-$mode-r$round.csv $params" 2>&1 | sed -n "$S" | grep -v 'TFLOP/s  '
    done
  done < .bundle/problems.txt
done
tar cJf "$OUT/call1.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
