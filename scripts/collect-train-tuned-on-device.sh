#!/usr/bin/env bash
# New tensor-core training data, a model trained on it and every dataset of bench/data, and the tuned
# proof with that model (installed as the user's model, which takes precedence over the shipped one).
# From the repository root, through the bundle:
#   bash .bundle/run-on-device.sh bash scripts/collect-train-tuned-on-device.sh
# Writes to $OUT: collect-tc.csv(.xz), gemm-h100.json, <device>-gemm-tuned.csv and its plot.
# Environment: COLLECT_DTYPES (default f64), COLLECT_SECONDS (default 150), COLLECT_SEED (default 3).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache-collect
rm -rf "$ISAAC_CACHE_DIR"
echo "=== collect $(date -u +%T) ==="
ISAAC_NO_CACHE=1 "$bin/isaac-tune" collect --out "$out/collect-tc.csv" --seconds "${COLLECT_SECONDS:-150}" \
  --dtypes "${COLLECT_DTYPES:-f64}" --uniform-share 0.3 --tc-share 0.7 --seed "${COLLECT_SEED:-3}" 2>&1 | tail -4 | cut -c1-300
xz -9 -k "$out/collect-tc.csv"
echo "=== train $(date -u +%T) ==="
data=$(ls bench/data/h100-gemm-*.csv.xz | tr '\n' ',')"$out/collect-tc.csv"
"$bin/isaac-tune" train --data "$data" --hidden 64 --epochs 200 --seed 1 --out "$out/gemm-h100.json" \
  --device "NVIDIA H100 80GB HBM3" --compute-capability 90 2>&1 | tail -1
mkdir -p "$ISAAC_CACHE_DIR/models"
for d in f16 f32 f64; do cp "$out/gemm-h100.json" "$ISAAC_CACHE_DIR/models/gemm-$d.json"; done
echo "=== tuned $(date -u +%T) ==="
TUNED=gemm GEMM_WINNERS=bench/results/gemm-sweep-winners-acc32.csv bash scripts/tuned-on-device.sh 2>&1 \
  | grep -v '^isaac/\|^cublas/\|^brute\|^top' | tail -64
python3 bench/plot_tuned.py "$out"/*-gemm-tuned.csv "$out/h100-gemm-tuned.png" || echo "plot failed"
echo "=== done $(date -u +%T) ==="
