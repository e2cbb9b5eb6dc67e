#!/usr/bin/env bash
# Round 58, call 1: bf16 convolutions on the GPU (test_gpu_conv, every case), then the paper's CONV
# problems tuned in bf16 beside cuDNN's bf16, and in f16 with the sweep for the same-day comparison.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
echo "=== test_gpu_conv $(date -u +%T)"
ISAAC_CACHE_DIR=/tmp/c1-cache timeout 300 /tmp/isaac/bin/test_gpu_conv --duration=true > "$OUT/test_gpu_conv.log" 2>&1
echo "exit $?"; grep -E "^[0-9.]+ s:|Status|assertions|ERROR" "$OUT/test_gpu_conv.log" | head -40
echo "=== conv bf16 tuned $(date -u +%T)"
ISAAC_CACHE_DIR=/tmp/c1-cache timeout 240 /tmp/isaac/bin/isaac-bench-conv tuned --bf16 \
  --winners bench/results/conv-sweep-winners.csv --csv "$OUT/conv-bf16.csv" > "$OUT/conv-bf16.log" 2>&1
echo "exit $?"; grep -E "^bf16 |^tuned|^no bf16|error" "$OUT/conv-bf16.log"
python3 bench/plot_tuned.py "$OUT/conv-bf16.csv" "$OUT/conv-bf16.png" || echo "plot failed"
echo "=== done $(date -u +%T) $SECONDS s"
