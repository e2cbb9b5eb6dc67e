#!/usr/bin/env bash
# Round 58, call 4: cuDNN's graph API beside its legacy API in isaac-bench-conv. First two problems in
# bf16 (to see the graph engines run, and how long the search takes), then the main job's CONV
# stages: f32 and f16 against the sweep's winners, and bf16.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ISAAC_CACHE_DIR=/tmp/c4-cache
bench=/tmp/isaac/bin/isaac-bench-conv
{ head -2 bench/problems/conv_problems.csv; grep -E "^(Conv9|Conv14)," bench/problems/conv_problems.csv; } > /tmp/two.csv
echo "=== two problems in bf16 $(date -u +%T)"
start=$SECONDS
timeout 120 $bench tuned --bf16 --problems /tmp/two.csv --winners bench/results/conv-sweep-winners.csv \
  --csv "$OUT/two-bf16.csv" > "$OUT/two-bf16.log" 2>&1; echo "exit $? in $((SECONDS - start)) s"
grep -E "^cudnn/|^bf16 |^tuned|warning" "$OUT/two-bf16.log"
if ((SECONDS - start > 90)) || ! grep -q "graph engine" "$OUT/two-bf16.log"; then echo "stopping: see two-bf16.log"; exit 1; fi
echo "=== conv f32 and f16 $(date -u +%T)"
timeout 300 $bench tuned --winners bench/results/conv-sweep-winners.csv --csv "$OUT/conv-tuned.csv" \
  > "$OUT/conv-tuned.log" 2>&1; echo "exit $?"
grep -E '^(f32|f16) |^top-1|^tuned|warning' "$OUT/conv-tuned.log"
python3 bench/plot_tuned.py "$OUT/conv-tuned.csv" "$OUT/conv-tuned.png" || true
echo "=== conv bf16 $(date -u +%T)"
timeout 170 $bench tuned --bf16 --winners bench/results/conv-sweep-winners.csv --csv "$OUT/conv-bf16.csv" \
  > "$OUT/conv-bf16.log" 2>&1; echo "exit $?"
grep -E '^bf16 |^tuned|warning' "$OUT/conv-bf16.log"
python3 bench/plot_tuned.py "$OUT/conv-bf16.csv" "$OUT/conv-bf16.png" || true
grep -hE "^cudnn/" "$OUT/conv-tuned.log" "$OUT/conv-bf16.log" | awk '{print $1, $NF, $(NF-1), $(NF-2), $(NF-3)}'
echo "=== done $(date -u +%T) $SECONDS s"
