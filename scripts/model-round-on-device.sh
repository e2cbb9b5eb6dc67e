#!/usr/bin/env bash
# One round of a model's loop on the GPU machine: new training data, a model trained on it and every
# dataset of the template in bench/data, then the tuned proof with that model (installed as the user's
# model in the cache folder, which takes precedence over the shipped one). From the repository root,
# through the bundle:
#   bash .bundle/run-on-device.sh bash scripts/model-round-on-device.sh
# Writes to $OUT: new-data.csv(.xz), <template>-h100.json (the new model), <device>-<template>-tuned.csv
# (and, for GEMM, its plot).
# Environment:
#   TEMPLATE=gemm (default) or conv
#   DATA=focus (default)  isaac-tune focus: the current model's best sets on random inputs
#   DATA=collect          GEMM only: isaac-tune collect of tensor-core sets (--tc-share 0.7) for
#                         COLLECT_DTYPES (default f64)
#   SECONDS_BUDGET (default 240), SEED (default 11).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
template=${TEMPLATE:-gemm}
export ISAAC_CACHE_DIR=/tmp/isaac-cache-round
rm -rf "$ISAAC_CACHE_DIR"
echo "=== $template ${DATA:-focus} $(date -u +%T) ==="
if [[ ${DATA:-focus} == collect ]]; then
  ISAAC_NO_CACHE=1 "$bin/isaac-tune" collect --out "$out/new-data.csv" --seconds "${SECONDS_BUDGET:-240}" \
    --dtypes "${COLLECT_DTYPES:-f64}" --uniform-share 0.3 --tc-share 0.7 --seed "${SEED:-11}" 2>&1 | tail -4 | cut -c1-300
else
  dtypes=f32,f16,f64
  [[ $template == conv ]] && dtypes=f32,f16
  ISAAC_NO_CACHE=1 timeout -k 10 $((${SECONDS_BUDGET:-240} + 60)) "$bin/isaac-tune" focus --template "$template" \
    --dtypes "$dtypes" --out "$out/new-data.csv" --seconds "${SECONDS_BUDGET:-240}" --seed "${SEED:-11}" 2>&1 \
    | tail -3 | cut -c1-400
fi
xz -9 -k "$out/new-data.csv"
echo "=== train $(date -u +%T) ==="
data=$(ls bench/data/h*-"$template"-*.csv.xz | tr '\n' ',')"$out/new-data.csv"
"$bin/isaac-tune" train --data "$data" --hidden 64 --epochs 200 --seed 1 --out "$out/$template-h100.json" \
  --device "NVIDIA H100 80GB HBM3" --compute-capability 90 2>&1 | tail -1
mkdir -p "$ISAAC_CACHE_DIR/models"
for d in f16 f32 f64; do cp "$out/$template-h100.json" "$ISAAC_CACHE_DIR/models/$template-$d.json"; done
echo "=== tuned $(date -u +%T) ==="
TUNED=$template bash scripts/tuned-on-device.sh 2>&1 | grep -v '^isaac/\|^cublas/\|^cudnn/\|^brute\|^top' | tail -64
if [[ $template == gemm ]]; then
  python3 bench/plot_tuned.py "$out"/*-gemm-tuned.csv "$out/h100-gemm-tuned.png" || echo "plot failed"
fi
echo "=== done $(date -u +%T) ==="
