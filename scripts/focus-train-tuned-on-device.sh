#!/usr/bin/env bash
# One round of the GEMM model's loop on the GPU machine: a focus round (the current model's best sets
# on random inputs), a model trained on every dataset of bench/data plus that round, then the tuned
# proof with the new model (installed as the user's model in the cache folder, which takes precedence
# over the shipped one). From the repository root, through the bundle:
#   bash .bundle/run-on-device.sh bash scripts/focus-train-tuned-on-device.sh
# Writes to $OUT: focus-gemm.csv(.xz), gemm-h100.json (the new model), <device>-gemm-tuned.csv.
# Environment: FOCUS_SECONDS (default 240), FOCUS_SEED (default 11).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache-focus
rm -rf "$ISAAC_CACHE_DIR"
echo "=== focus $(date -u +%T) ==="
ISAAC_NO_CACHE=1 "$bin/isaac-tune" focus --out "$out/focus-gemm.csv" --seconds "${FOCUS_SECONDS:-240}" \
  --seed "${FOCUS_SEED:-11}" 2>&1 | tail -4 | cut -c1-400
xz -9 -k "$out/focus-gemm.csv"
echo "=== train $(date -u +%T) ==="
data=$(ls bench/data/h100-gemm-*.csv.xz | tr '\n' ',')"$out/focus-gemm.csv"
"$bin/isaac-tune" train --data "$data" --hidden 64 --epochs 200 --seed 1 --out "$out/gemm-h100.json" \
  --device "NVIDIA H100 80GB HBM3" --compute-capability 90 2>&1 | tail -1
mkdir -p "$ISAAC_CACHE_DIR/models"
for d in f16 f32 f64; do cp "$out/gemm-h100.json" "$ISAAC_CACHE_DIR/models/gemm-$d.json"; done
echo "=== tuned $(date -u +%T) ==="
TUNED=gemm GEMM_WINNERS=bench/results/gemm-sweep-winners-acc32.csv bash scripts/tuned-on-device.sh 2>&1 \
  | grep -v '^isaac/\|^cublas/\|^brute\|^top' | tail -64
echo "=== done $(date -u +%T) ==="
