#!/usr/bin/env bash
# CONV training data on the GPU machine: isaac-tune focus --template conv (uniform over conv_space
# where no CONV model ships, the model's top otherwise). Writes $OUT/focus-conv.csv.
# Environment: CONV_SECONDS (default 180), CONV_SEED (default 11), THEN (a script to run afterwards).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache
echo "=== conv data $(date -u +%T) ==="
ISAAC_NO_CACHE=1 "$bin/isaac-tune" focus --template conv --out "$out/focus-conv.csv" --seconds "${CONV_SECONDS:-180}" \
  --seed "${CONV_SEED:-11}" --dtypes f32,f16
echo "conv data exit $?"
wc -l "$out/focus-conv.csv"
if [[ -n ${THEN:-} ]]; then bash "$THEN"; fi
echo "=== done $(date -u +%T) ==="
