#!/usr/bin/env bash
# Round 59, call 2: staged stores only where the output's runs are contiguous (Conv11's K = 174 keeps
# the direct stores): the f16 winners timed by isaac alone; test_gpu_conv; then the f16 sweep again
# (seeded by the earlier winners, and Conv9 in NHWC/KRSC, which call 1 ran at 429 TFLOP/s).
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bench=/tmp/isaac/bin/isaac-bench-conv
ISAAC_CACHE_DIR=/tmp/c2-cache timeout 120 $bench run --winners .bundle/f16-winners.csv --csv "$OUT/new.csv" \
  --benchmark_filter='^isaac/' > "$OUT/new.log" 2>&1; echo "run: exit $?"
cut -d, -f2,10 "$OUT/new.csv" | tr '\n' ' '; echo
echo "=== test_gpu_conv $(date -u +%T) $SECONDS s"
timeout 300 /tmp/isaac/bin/test_gpu_conv > "$OUT/test_gpu_conv.log" 2>&1; echo "exit $?"
tail -3 "$OUT/test_gpu_conv.log"; grep -E "ERROR|FAILED|wrong|outside" "$OUT/test_gpu_conv.log" | head -20
echo "=== sweep f16 $(date -u +%T) $SECONDS s"
cp .bundle/winners-seeded.csv "$OUT/conv-sweep-winners.csv"
ISAAC_CACHE_DIR=/tmp/c2-cache timeout 260 $bench sweep --dtypes f16 --wgmma 60 --budget 220 \
  --out "$OUT/conv-sweep-winners.csv" > "$OUT/sweep.log" 2>&1; echo "sweep: exit $?"
grep -E "^\[" "$OUT/sweep.log" | cut -c1-260
echo "=== done $SECONDS s"
