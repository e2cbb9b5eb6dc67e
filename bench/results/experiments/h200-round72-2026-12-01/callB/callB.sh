#!/usr/bin/env bash
# Round 72, call B (call A's bundle: filter tiles fitted to K, TMA sets free of the load-layout rule):
# f16 NHWC CONV data for the next model (focus 72), a held-out round (focus 73), then the chosen sets
# on Conv11/Conv12 (fitted against the power-of-two sweep winners; the tuner's top-1 beside them).
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ISAAC_CACHE_DIR=/tmp/cB-cache
tune=/tmp/isaac/bin/isaac-tune
focus() {  # seed, seconds
  echo "=== focus $1 $(date -u +%T) $SECONDS s"
  timeout $(( $2 + 30 )) $tune focus --template conv --dtypes f16 --layouts NHWC --aligned-share 1 --kind-siblings 1 \
    --neighbour-siblings 3 --seed $1 --seconds $2 --out "$OUT/h200-conv-focus$1-nhwc.csv" > /tmp/focus$1.log 2>&1
  echo "exit $?"; tail -c 300 /tmp/focus$1.log; echo
}
focus 72 290
focus 73 75
export ISAAC_CACHE_DIR=/tmp/cB-sets
echo "=== fitted sets $(date -u +%T) $SECONDS s"
timeout 130 /tmp/isaac/bin/isaac-bench-conv tuned --top-k 1 --problems .bundle/fitted-problems.csv \
  --winners .bundle/fitted-sets.csv --csv "$OUT/sets-fitted.csv" > /tmp/sets.log 2>&1
echo "exit $?"; grep -E '^f16 ' /tmp/sets.log
wc -l "$OUT"/*.csv
echo "=== done $SECONDS s"
