#!/usr/bin/env bash
# One round of the CONV model's loop on the GPU machine: `isaac-tune focus --template conv` (the
# current model's best sets on random convolutions), a model trained on it and every CONV dataset of
# bench/data, then the tuned CONV proof with that model (installed as the user's model in the cache
# folder, which takes precedence over the shipped one). From the repository root, through the bundle:
#   bash .bundle/run-on-device.sh bash scripts/conv-model-round-on-device.sh
# Writes to $OUT: new-conv-data.csv(.xz), conv-h100.json (the new model), <device>-conv-tuned.csv.
# Environment: SECONDS_BUDGET (focus, default 240), SEED (default 31).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache-round
rm -rf "$ISAAC_CACHE_DIR"
echo "=== conv focus $(date -u +%T) ==="
ISAAC_NO_CACHE=1 timeout -k 10 $((${SECONDS_BUDGET:-240} + 60)) "$bin/isaac-tune" focus --template conv --dtypes f32,f16 \
  --out "$out/new-conv-data.csv" --seconds "${SECONDS_BUDGET:-240}" --seed "${SEED:-31}" 2>&1 | tail -3 | cut -c1-300
xz -9 -k "$out/new-conv-data.csv"
echo "=== train $(date -u +%T) ==="
data=$(ls bench/data/h100-conv-*.csv.xz | tr '\n' ',')"$out/new-conv-data.csv"
"$bin/isaac-tune" train --data "$data" --hidden 64 --epochs 200 --seed 1 --out "$out/conv-h100.json" \
  --device "NVIDIA H100 80GB HBM3" --compute-capability 90 2>&1 | tail -1
mkdir -p "$ISAAC_CACHE_DIR/models"
for d in f16 f32 f64; do cp "$out/conv-h100.json" "$ISAAC_CACHE_DIR/models/conv-$d.json"; done
echo "=== tuned $(date -u +%T) ==="
TUNED=conv bash scripts/tuned-on-device.sh 2>&1 | grep -E "top1/bf|top-1 >=|tuned isaac|exit"
echo "=== done $(date -u +%T) ==="
