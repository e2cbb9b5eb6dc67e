#!/usr/bin/env bash
# A focused round of GEMM training data on the GPU machine (isaac-tune focus: the model's own best sets
# on random inputs), then, optionally, the tuned proof. From the repository root, through the bundle:
#   bash .bundle/run-on-device.sh bash scripts/focus-on-device.sh
# Writes $OUT/focus-gemm.csv. Environment: FOCUS_SECONDS (default 180), FOCUS_SEED (default 7),
# FOCUS_MODEL (a model file instead of the shipped one), THEN (a script to run afterwards).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache ISAAC_NO_CACHE=1
echo "=== focus $(date -u +%T) ==="
"$bin/isaac-tune" focus --out "$out/focus-gemm.csv" --seconds "${FOCUS_SECONDS:-180}" --seed "${FOCUS_SEED:-7}" \
  ${FOCUS_MODEL:+--model "$FOCUS_MODEL"}
echo "focus exit $?"
wc -l "$out/focus-gemm.csv"
if [[ -n ${THEN:-} ]]; then unset ISAAC_NO_CACHE; bash "$THEN"; fi
echo "=== done $(date -u +%T) ==="
