#!/usr/bin/env bash
# Round 59, call 1: the staged CONV stores. The f16 sweep winners timed by isaac alone, old library
# (0.1.41 as committed) and new in alternating processes; the sets the TMA register estimate now
# allows; then test_gpu_conv on the new library.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/old && tar xf .bundle/old.tar.xz -C /tmp/old
ab() {  # label, library folder, bench binary, winners
  LD_LIBRARY_PATH=$2:/tmp/isaac/lib:$LD_LIBRARY_PATH ISAAC_CACHE_DIR=/tmp/cache-$1 timeout 120 $3 run --winners "$4" \
    --csv "$OUT/ab-$1.csv" --benchmark_filter='^isaac/' > "$OUT/ab-$1.log" 2>&1
  echo "$1: exit $?"
}
for i in 1 2; do
  ab old-$i /tmp/old/lib /tmp/old/bin/isaac-bench-conv .bundle/f16-winners.csv
  ab new-$i /tmp/isaac/lib /tmp/isaac/bin/isaac-bench-conv .bundle/f16-winners.csv
done
ab candidates /tmp/isaac/lib /tmp/isaac/bin/isaac-bench-conv .bundle/f16-candidates.csv
for f in old-1 new-1 old-2 new-2 candidates; do echo "== $f"; cut -d, -f2,10,13 "$OUT/ab-$f.csv"; done
echo "=== test_gpu_conv $(date -u +%T) $SECONDS s"
timeout 330 /tmp/isaac/bin/test_gpu_conv > "$OUT/test_gpu_conv.log" 2>&1; echo "exit $?"
tail -4 "$OUT/test_gpu_conv.log"; grep -E "ERROR|FAILED|wrong|outside" "$OUT/test_gpu_conv.log" | head -20
echo "=== done $SECONDS s"
