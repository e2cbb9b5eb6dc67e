#!/usr/bin/env bash
# Round 55, call 5: the committed 0.1.38 build (5cbb621): the 54 GEMM rows tuned, then the 28 CONV rows.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
done
rm -rf /tmp/isaac /tmp/c5-* && tar xf .bundle/isaac.tar.xz -C /tmp
echo "=== gemm tuned $(date -u +%T)"
ISAAC_CACHE_DIR=/tmp/c5-gemm timeout 230 /tmp/isaac/bin/isaac-bench-gemm tuned --winners bench/results/gemm-sweep-winners.csv \
  --top-k 10 --csv "$OUT/h200-gemm-tuned.csv" 2>&1 | grep -E "^top-1|geometric mean"
python3 bench/plot_tuned.py "$OUT/h200-gemm-tuned.csv" "$OUT/h200-gemm-tuned.png" 2>&1 | tail -1
echo "=== conv tuned $(date -u +%T)"
ISAAC_CACHE_DIR=/tmp/c5-conv timeout 140 /tmp/isaac/bin/isaac-bench-conv tuned --winners bench/results/conv-sweep-winners.csv \
  --top-k 10 --csv "$OUT/h200-conv-tuned.csv" 2>&1 | grep -E "^top-1|^tuned"
python3 bench/plot_tuned.py "$OUT/h200-conv-tuned.csv" "$OUT/h200-conv-tuned.png" 2>&1 | tail -1
echo "=== done $(date -u +%T) $SECONDS s"
