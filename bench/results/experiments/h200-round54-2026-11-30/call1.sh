#!/usr/bin/env bash
# Session 2026-11-30 (round 54), call 1 (experiment switch ISAAC_CLUSTER_PAIRS, not committed): TMA kernels
# with a producer warp in clusters of two blocks on adjacent column tiles, A multicast by the first block.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
echo "=== test_gpu_gemm TMA=1 cases, cluster pairs on $(date -u +%T)"
ISAAC_CLUSTER_PAIRS=1 ISAAC_CACHE_DIR=/tmp/tcache-1 timeout 200 /tmp/isaac/bin/test_gpu_gemm -tc="*TMA=1*" > /tmp/out/test-tma-clusters.log 2>&1; echo "exit $?"
grep -E "ERROR|FATAL" -A6 /tmp/out/test-tma-clusters.log | head -40; tail -4 /tmp/out/test-tma-clusters.log
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
for round in 1 2; do
  while IFS='|' read -r dtype name shape params; do
    modes="0 1"; [ $round = 2 ] && modes="1 0"
    for mode in $modes; do
      [ $SECONDS -gt 555 ] && break 3
      echo "=== $dtype $name mode $mode round $round $(date -u +%T)"
      eval "ISAAC_CLUSTER_PAIRS=$mode ISAAC_CACHE_DIR=/tmp/cache-$mode timeout 40 /tmp/isaac/bin/isaac-bench-gemm sets $shape --dtype $dtype --lt-algorithms 1 --csv /tmp/out/sets-$dtype-$name-$mode-r$round.csv $params" 2>&1 | sed -n "$S" | grep -v 'TFLOP/s  '
    done
  done < .bundle/problems.txt
done
tar cJf "$OUT/call1.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
