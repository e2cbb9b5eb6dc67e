#!/usr/bin/env bash
# Round 59, call 4 (the committed library, CG splits staged too): the f16 winners by isaac alone; the
# tuner against the f16 sweep winners and cuDNN, f16 then bf16; test_gpu_conv.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ISAAC_CACHE_DIR=/tmp/c4-cache
bench=/tmp/isaac/bin/isaac-bench-conv
timeout 100 $bench run --winners .bundle/f16-winners.csv --csv "$OUT/winners-f16.csv" --benchmark_filter='^isaac/' \
  > "$OUT/winners-f16.log" 2>&1; echo "run: exit $?"
cut -d, -f2,10 "$OUT/winners-f16.csv" | tr '\n' ' '; echo
echo "=== conv f16 $(date -u +%T) $SECONDS s"
timeout 200 $bench tuned --winners .bundle/f16-winners.csv --csv "$OUT/conv-f16.csv" > "$OUT/conv-f16.log" 2>&1; echo "exit $?"
grep -E '^f16 |^top-1|^tuned' "$OUT/conv-f16.log"
echo "=== conv bf16 $(date -u +%T) $SECONDS s"
timeout 180 $bench tuned --bf16 --winners bench/results/conv-sweep-winners.csv --csv "$OUT/conv-bf16.csv" \
  > "$OUT/conv-bf16.log" 2>&1; echo "exit $?"
grep -E '^bf16 |^tuned' "$OUT/conv-bf16.log"
python3 bench/plot_tuned.py "$OUT/conv-f16.csv" "$OUT/conv-f16.png" || true
python3 bench/plot_tuned.py "$OUT/conv-bf16.csv" "$OUT/conv-bf16.png" || true
echo "=== test_gpu_conv $(date -u +%T) $SECONDS s"
timeout $((590 - SECONDS)) /tmp/isaac/bin/test_gpu_conv > "$OUT/test_gpu_conv.log" 2>&1; echo "exit $?"
tail -3 "$OUT/test_gpu_conv.log"; grep -E "ERROR|FAILED|wrong|outside" "$OUT/test_gpu_conv.log" | head -20
echo "=== done $SECONDS s"
