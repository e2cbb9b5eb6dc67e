#!/usr/bin/env bash
# Round 61, call 1 (0.1.44 candidate: the log2_tma_stages feature, zero-weighted in the shipped
# models): f16 CONV data on small outputs (P, Q <= 28), where grids fit on the SMs and TMA rings
# deepen: focus (the shipped model's best sets, its best of other kinds) then collect (uniform over
# the tensor-core sets), both with N, C and K multiples of 8.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export ISAAC_CACHE_DIR=/tmp/c1-cache
tune=/tmp/isaac/bin/isaac-tune
echo "=== focus $(date -u +%T) $SECONDS s"
timeout 230 $tune focus --template conv --dtypes f16 --aligned-share 1 --kind-siblings 2 --pq-max 28 --seed 61 \
  --seconds 210 --out "$OUT/h200-conv-focus61.csv" > /tmp/focus.log 2>&1; echo "exit $?"; tail -c 400 /tmp/focus.log
echo "=== collect $(date -u +%T) $SECONDS s"
timeout 250 $tune collect --template conv --dtypes f16 --tc-share 1 --aligned-share 1 --pq-max 28 --seed 61 \
  --seconds 230 --out "$OUT/h200-conv-collect61.csv" > /tmp/collect.log 2>&1; echo "exit $?"; tail -c 400 /tmp/collect.log
wc -l "$OUT"/*.csv
echo "=== done $SECONDS s"
