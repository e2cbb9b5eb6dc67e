#!/usr/bin/env bash
# Round 64, call 5 (0.1.47): the 18 f64 GEMM rows tuned with the shipped f64 model (S) and with model d
# (the shipped f64 recipe + focus71-f64-square, the user's model), one run each in fresh caches, every
# candidate timed again: does d move f64 LINPACK 512?
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o5
for run in d1 S1; do
  export ISAAC_CACHE_DIR=/tmp/c5-$run
  mkdir -p $ISAAC_CACHE_DIR/models
  [[ $run == d* ]] && cp .bundle/model-d.json $ISAAC_CACHE_DIR/models/gemm-f64.json
  echo "=== tuned f64 $run $(date -u +%T) $SECONDS s"
  timeout 95 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f64 --winners bench/results/gemm-sweep-winners.csv \
    --csv /tmp/o5/tuned-$run.csv --candidates-csv /tmp/o5/candidates-$run.csv > /tmp/o5/tuned-$run.log 2>&1
  echo "exit $?"; grep -E "^f64 +LINPACK|^top-1|geometric mean" /tmp/o5/tuned-$run.log
done
tar cJf "$OUT/call5.tar.xz" -C /tmp/o5 .
echo "=== done $(date -u +%T) $SECONDS s"
