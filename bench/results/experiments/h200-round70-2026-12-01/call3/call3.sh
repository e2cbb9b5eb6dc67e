#!/usr/bin/env bash
# Round 70, call 3 (call 2's bundle, the committed 0.1.52): test_gpu_gemm (the GEMM emitter's stmatrix
# staging moved to TiledKernelBuilder), then Nsight Compute on one launch of the 128 x 128 tile loop
# of ResNet-50's res2 1 x 1 expansion (R1x1-b) and of Conv10 (Conv10-a) with the 16-bit staging.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ISAAC_CACHE_DIR=/tmp/c3-tests
echo "=== test_gpu_gemm $(date -u +%T) $SECONDS s"
timeout 420 /tmp/isaac/bin/test_gpu_gemm > "$OUT/test_gpu_gemm.log" 2>&1; echo "exit $?"
tail -3 "$OUT/test_gpu_gemm.log"; grep -E "ERROR|FAILED" "$OUT/test_gpu_gemm.log" | head -10
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu)
for name in R1x1-b Conv10-a; do
  (( SECONDS < 480 )) || break
  export ISAAC_CACHE_DIR=/tmp/c3-$name
  { grep "^name," .bundle/loop-problems.csv; grep "^$name," .bundle/loop-problems.csv; } > /tmp/p-$name.csv
  { head -1 .bundle/loop-sets.csv; grep ",$name," .bundle/loop-sets.csv; } > /tmp/w-$name.csv
  echo "=== $name $(date -u +%T) $SECONDS s"
  timeout 100 $ncu --clock-control none -k regex:isaac_conv --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy \
    /tmp/isaac/bin/isaac-bench-conv run --problems /tmp/p-$name.csv --winners /tmp/w-$name.csv \
    > "$OUT/ncu-$name.log" 2>&1
  echo "exit $?"; grep -E "Duration|Throughput|Stall|Warp Cycles|Achieved Occupancy|Registers|Block Limit|Issued" "$OUT/ncu-$name.log" | head -30
done
echo "=== done $SECONDS s"
