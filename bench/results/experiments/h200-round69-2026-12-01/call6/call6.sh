#!/usr/bin/env bash
# Round 69, call 6 (call 3's bundle, the committed kernels): Nsight Compute on one launch of the
# 128 x 128 tile loop in ResNet-50's res2 1 x 1 expansion (100352 x 256 x 64, 0.58x cuDNN) and in
# Conv10 (0.93x), for where the 1 x 1 layer's time goes.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu)
for name in R1x1-b Conv10-a; do
  export ISAAC_CACHE_DIR=/tmp/c6-$name
  { head -4 .bundle/loop-problems.csv | tail -1; grep "^$name," .bundle/loop-problems.csv; } > /tmp/p-$name.csv
  { head -1 .bundle/loop-sets.csv; grep ",$name," .bundle/loop-sets.csv; } > /tmp/w-$name.csv
  echo "=== $name $(date -u +%T) $SECONDS s"
  timeout 120 $ncu --clock-control none -k regex:isaac_conv --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy \
    /tmp/isaac/bin/isaac-bench-conv run --problems /tmp/p-$name.csv --winners /tmp/w-$name.csv \
    > "$OUT/ncu-$name.log" 2>&1
  echo "exit $?"; grep -E "Duration|Throughput|Stall|Warp Cycles|Achieved Occupancy|Registers|Block Limit|Issued" "$OUT/ncu-$name.log" | head -30
done
echo "=== done $SECONDS s"
