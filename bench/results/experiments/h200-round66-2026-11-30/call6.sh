#!/usr/bin/env bash
# Round 66, call 6 (0.1.49's bundle of calls 4-5): isaac-tune collect's throughput with its defaults,
# 60 s, seed 31, as round 56 measured it (53.9 and 54.8 kernels/s; 14.0-14.3 ms a kernel timing).
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "=== collect seed 31 $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c6 timeout 110 /tmp/isaac/bin/isaac-tune collect --seconds 60 --seed 31 \
  --out "$OUT/collect-seed31.csv" 2>&1 | tr '\r' '\n' | grep -v "^ *$" | tail -8
echo "=== done $(date -u +%T) $SECONDS s"
