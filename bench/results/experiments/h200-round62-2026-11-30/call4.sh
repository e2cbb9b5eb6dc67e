#!/usr/bin/env bash
# Round 62, call 4 (0.1.45): held-out f16 CONV data over all layouts and shapes, to see whether the
# retrained model lost ground away from CHWN: focus seed 64 drawn from 0.1.44's model's top, seed 65
# from 0.1.45's (each model then ranks both files on the CPU).
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export ISAAC_CACHE_DIR=/tmp/c4-cache
tune=/tmp/isaac/bin/isaac-tune
focus() {  # seed, seconds, model option
  echo "=== focus $1 $(date -u +%T) $SECONDS s"
  timeout $(( $2 + 30 )) $tune focus --template conv --dtypes f16 --aligned-share 1 --kind-siblings 2 --seed $1 \
    --seconds $2 ${3:-} --out "$OUT/h200-conv-focus$1.csv" > /tmp/focus$1.log 2>&1
  echo "exit $?"; tail -c 200 /tmp/focus$1.log
}
focus 64 100 "--model .bundle/model-old.json"
focus 65 100
wc -l "$OUT"/*.csv
echo "=== done $SECONDS s"
