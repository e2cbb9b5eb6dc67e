#!/usr/bin/env bash
# Session 2026-11-30 (round 54), call 2 (experiment switch ISAAC_CLUSTER_PAIRS, not committed): cluster pairs
# with the peer's arrivals at the default (release, CTA) semantics (1), and clusters without multicast (2).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
for round in 1 2; do
  while IFS='|' read -r dtype name shape params; do
    modes="0 1 2"; [ $round = 2 ] && modes="2 1 0"
    for mode in $modes; do
      [ $SECONDS -gt 420 ] && break 3
      echo "=== $dtype $name mode $mode round $round $(date -u +%T)"
      eval "ISAAC_CLUSTER_PAIRS=$mode ISAAC_CACHE_DIR=/tmp/cache-$mode timeout 40 /tmp/isaac/bin/isaac-bench-gemm sets $shape --dtype $dtype --lt-algorithms 1 --csv /tmp/out/sets-$dtype-$name-$mode-r$round.csv $params" 2>&1 | sed -n "$S" | grep -v 'TFLOP/s  '
    done
  done < .bundle/problems2.txt
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for mode in 1 0; do
  echo "=== ncu mode $mode $(date -u +%T)"
  ISAAC_CLUSTER_PAIRS=$mode ISAAC_CACHE_DIR=/tmp/cache-$mode timeout 90 $NCU -k regex:isaac_gemm -c 1 --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
    /tmp/isaac/bin/isaac-bench-gemm sets 4096 4096 4096 --layout NT --dtype f16 --repeats 3 --lt-algorithms 1 --csv /tmp/out/ncu-sets.csv \
    --params ML=128,NL=128,MS=16,NS=8,U=64,KG=1,LA=16,LB=16,KS=1,KL=1,VA=8,VB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1 > /tmp/out/ncu-mode$mode.txt 2>&1
  grep -E "Duration|Cluster|Occupancy|Waves|Block Limit|Stall|L2 Cache Throughput|Compute \(SM\)|Warp Cycles|Active Warps" /tmp/out/ncu-mode$mode.txt | head -40
done
tar cJf "$OUT/call2.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
