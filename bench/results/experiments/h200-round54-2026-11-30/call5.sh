#!/usr/bin/env bash
# Session 2026-11-30 (round 54), call 5: an f16 focus round (0.1.36's model) on thin GEMMs with a long K,
# where deep TMA pipelines split many ways (f16 ICA 256's top-10 miss), with KG siblings.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac /tmp/out && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
export ISAAC_CACHE_DIR=/tmp/isaac-cache-focus54 ISAAC_NO_CACHE=1
echo "=== focus $(date -u +%T)"
timeout -k 10 300 /tmp/isaac/bin/isaac-tune focus --out /tmp/out/h200-gemm-focus54-f16.csv --seconds 200 --seed 54 \
  --dtypes f16 --m-min 64 --m-max 1024 --n-min 64 --n-max 1024 --k-min 8192 --k-max 65536 \
  --kg-siblings 3 --aligned-share 0.8 2>&1 | tr '\r' '\n' | tail -3
echo "focus exit ${PIPESTATUS[0]}"
wc -l /tmp/out/h200-gemm-focus54-f16.csv
xz -9 /tmp/out/h200-gemm-focus54-f16.csv
cp /tmp/out/h200-gemm-focus54-f16.csv.xz "$OUT/"
echo "=== done $(date -u +%T) $SECONDS s"
