#!/usr/bin/env bash
# Round 59, call 3 (the committed library): the tuner against the new f16 sweep winners and cuDNN
# (best of both APIs), f16 then bf16; then the smaller GPU suites.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ISAAC_CACHE_DIR=/tmp/c3-cache
bench=/tmp/isaac/bin/isaac-bench-conv
echo "=== conv f16 $(date -u +%T)"
timeout 230 $bench tuned --winners .bundle/f16-winners.csv --csv "$OUT/conv-f16.csv" > "$OUT/conv-f16.log" 2>&1; echo "exit $?"
grep -E '^f16 |^top-1|^tuned|warning' "$OUT/conv-f16.log"
echo "=== conv bf16 $(date -u +%T) $SECONDS s"
timeout 200 $bench tuned --bf16 --winners bench/results/conv-sweep-winners.csv --csv "$OUT/conv-bf16.csv" \
  > "$OUT/conv-bf16.log" 2>&1; echo "exit $?"
grep -E '^bf16 |^tuned|warning' "$OUT/conv-bf16.log"
python3 bench/plot_tuned.py "$OUT/conv-f16.csv" "$OUT/conv-f16.png" || true
python3 bench/plot_tuned.py "$OUT/conv-bf16.csv" "$OUT/conv-bf16.png" || true
echo "=== suites $(date -u +%T) $SECONDS s"
for t in test_gpu_smoke test_gpu_program test_gpu_aot; do
  timeout $((560 - SECONDS)) /tmp/isaac/bin/$t > "$OUT/$t.log" 2>&1; echo "$t: exit $?"; tail -2 "$OUT/$t.log" | head -1
done
echo "=== done $SECONDS s"
