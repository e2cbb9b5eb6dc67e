#!/usr/bin/env bash
# Round 55, call 1: f16 CONV models A/B over the 14 f16 CONV rows (isaac-bench-conv tuned, top-k 10):
# shipped, m1 (shipped data + collect7 + focus16), m2 (all f16 CONV data), in alternating order.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
done
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
n=0
for model in shipped m1 m2 m2 m1 shipped; do
  n=$((n+1))
  export ISAAC_CACHE_DIR=/tmp/isaac-cache-c1-$n
  rm -rf "$ISAAC_CACHE_DIR"; mkdir -p "$ISAAC_CACHE_DIR/models"
  [[ $model != shipped ]] && cp .bundle/models/$model/conv-f16.json "$ISAAC_CACHE_DIR/models/"
  echo "=== $n $model $(date -u +%T)"
  timeout 150 /tmp/isaac/bin/isaac-bench-conv tuned --winners .bundle/winners-f16.csv --top-k 10 \
    --csv "$OUT/conv-tuned-$n-$model.csv" --candidates-csv "$OUT/conv-candidates-$n-$model.csv" 2>&1 |
    grep -E "^top-1|^tuned|candidates:|rror"
done
echo "=== done $(date -u +%T) $SECONDS s"
cd "$OUT" && tar cf call1.tar *.csv && rm -f *.csv
