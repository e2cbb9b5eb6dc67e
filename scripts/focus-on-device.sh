#!/usr/bin/env bash
# A focused round of GEMM training data on the GPU machine (isaac-tune focus: the model's own best sets
# on random inputs), then, optionally, the tuned proof. From the repository root, through the bundle:
#   bash .bundle/run-on-device.sh bash scripts/focus-on-device.sh
# Writes $OUT/$FOCUS_NAME.csv (default focus-gemm.csv). Environment: FOCUS_SECONDS (default 180),
# FOCUS_SEED (default 7), FOCUS_MODEL (a model file instead of the shipped one), FOCUS_ARGS (more
# options of isaac-tune focus, e.g. "--dtypes f16 --k-max 512 --kind-siblings 2"), FOCUS_NAME,
# THEN (a script to run afterwards).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
name=${FOCUS_NAME:-focus-gemm}
export ISAAC_CACHE_DIR=/tmp/isaac-cache ISAAC_NO_CACHE=1
echo "=== focus $name $(date -u +%T) ==="
# shellcheck disable=SC2086  # FOCUS_ARGS is a list of options
timeout -k 10 $((${FOCUS_SECONDS:-180} + 90)) "$bin/isaac-tune" focus --out "$out/$name.csv" \
  --seconds "${FOCUS_SECONDS:-180}" --seed "${FOCUS_SEED:-7}" ${FOCUS_MODEL:+--model "$FOCUS_MODEL"} ${FOCUS_ARGS:-} 2>&1 |
  tr '\r' '\n' | tail -2
echo "focus exit ${PIPESTATUS[0]}"
wc -l "$out/$name.csv"
if [[ -n ${THEN:-} ]]; then unset ISAAC_NO_CACHE; bash "$THEN"; fi
echo "=== done $(date -u +%T) ==="
