#!/usr/bin/env bash
# Round 62, call 1 (0.1.44 + `focus --template conv --load-siblings/--layouts`): f16 CONV data on
# CHWN convolutions with few input channels (Conv1, Conv3), with the shipped model's first choice in
# other load widths (VI, VF) beside it: seed 62 for training, seed 63 held out.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export ISAAC_CACHE_DIR=/tmp/c1-cache
tune=/tmp/isaac/bin/isaac-tune
focus() {  # seed, seconds
  echo "=== focus $1 $(date -u +%T) $SECONDS s"
  timeout $(( $2 + 30 )) $tune focus --template conv --dtypes f16 --layouts CHWN --c-max 64 --aligned-share 0.7 \
    --kind-siblings 1 --load-siblings 3 --seed $1 --seconds $2 --out "$OUT/h200-conv-focus$1-chwn.csv" > /tmp/focus$1.log 2>&1
  echo "exit $?"; tail -c 300 /tmp/focus$1.log
}
focus 62 200
focus 63 90
wc -l "$OUT"/*.csv
echo "=== done $SECONDS s"
