#!/usr/bin/env bash
# Round 55, call 2 (0.1.37, 4d2726f): an f64 GEMM focus round on square-ish shapes with KG and load-width
# siblings (the f64 LINPACK 512/1024 misses); then test_gpu_smoke and test_gpu_conv, and the 28 CONV rows
# tuned (the shipped f16 CONV model is the retrained one) with their plot.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
done
rm -rf /tmp/isaac /tmp/out /tmp/isaac-cache-c2* && tar xf .bundle/isaac.tar.xz -C /tmp && mkdir -p /tmp/out
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export ISAAC_CACHE_DIR=/tmp/isaac-cache-c2f ISAAC_NO_CACHE=1
echo "=== focus $(date -u +%T)"
timeout -k 10 200 /tmp/isaac/bin/isaac-tune focus --out /tmp/out/h200-gemm-focus55-f64.csv --seconds 150 --seed 55 \
  --dtypes f64 --m-min 256 --m-max 2048 --n-min 256 --n-max 2048 --k-min 256 --k-max 2048 \
  --square-share 0.5 --aligned-share 0.8 --kg-siblings 2 --load-siblings 3 2>&1 | tr '\r' '\n' | tail -3
echo "focus exit ${PIPESTATUS[0]}"
wc -l /tmp/out/h200-gemm-focus55-f64.csv
xz -9 /tmp/out/h200-gemm-focus55-f64.csv && cp /tmp/out/h200-gemm-focus55-f64.csv.xz "$OUT/"
unset ISAAC_NO_CACHE
export ISAAC_CACHE_DIR=/tmp/isaac-cache-c2t
for t in test_gpu_smoke test_gpu_conv; do
  echo "=== $t $(date -u +%T)"
  timeout 150 /tmp/isaac/bin/$t > "/tmp/out/$t.log" 2>&1; echo "exit $?"; tail -3 /tmp/out/$t.log | head -2
done
echo "=== conv tuned $(date -u +%T)"
export ISAAC_CACHE_DIR=/tmp/isaac-cache-c2c
timeout 200 /tmp/isaac/bin/isaac-bench-conv tuned --winners bench/results/conv-sweep-winners.csv --top-k 10 \
  --csv /tmp/out/h200-conv-tuned.csv --candidates-csv /tmp/out/conv-candidates-committed.csv 2>&1 | grep -E "^top-1|^tuned|candidates:|rror"
python3 bench/plot_tuned.py /tmp/out/h200-conv-tuned.csv /tmp/out/h200-conv-tuned.png 2>&1 | tail -1
cp /tmp/out/h200-conv-tuned.png "$OUT/" 2>/dev/null
cd /tmp/out && tar cf "$OUT/call2.tar" *.log *.csv
echo "=== done $(date -u +%T) $SECONDS s"
