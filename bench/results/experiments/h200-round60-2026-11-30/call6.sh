#!/usr/bin/env bash
# Round 60, call 6 (0.1.43): f16 CONV data timed on the current kernels (staged stores and splits,
# deep rings), for a model that rates them: focus (the shipped model's own best sets on random
# convolutions, and its best of the other kinds of kernel), then collect (uniform over the
# tensor-core sets), both with N, C and K multiples of 8.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
export ISAAC_CACHE_DIR=/tmp/c6-cache
tune=/tmp/isaac/bin/isaac-tune
echo "=== focus $(date -u +%T) $SECONDS s"
timeout 200 $tune focus --template conv --dtypes f16 --aligned-share 1 --kind-siblings 2 --seed 60 --seconds 170 \
  --out "$OUT/h200-conv-focus60.csv" --quiet > "$OUT/focus.log" 2>&1; echo "exit $?"; tail -3 "$OUT/focus.log"
echo "=== collect $(date -u +%T) $SECONDS s"
timeout 170 $tune collect --template conv --dtypes f16 --tc-share 1 --aligned-share 1 --seed 60 --seconds 140 \
  --out "$OUT/h200-conv-collect60.csv" --quiet > "$OUT/collect.log" 2>&1; echo "exit $?"; tail -3 "$OUT/collect.log"
wc -l "$OUT"/*.csv
echo "=== done $SECONDS s"
