#!/usr/bin/env bash
# Round 65, call 2 (the call 1 bundle): the 18 f64 GEMM rows tuned with bf (the shipped f64 recipe +
# focus75, with sm_balance) and bdf (the same + focus71), as the user's model, alternating, each in a
# fresh cache, every candidate timed again.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o2
for run in bf1 bdf1 bf2 bdf2; do
  export ISAAC_CACHE_DIR=/tmp/c2-$run
  mkdir -p $ISAAC_CACHE_DIR/models
  cp .bundle/model-${run%[0-9]}.json $ISAAC_CACHE_DIR/models/gemm-f64.json
  echo "=== tuned f64 $run $(date -u +%T) $SECONDS s"
  timeout 95 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f64 --winners bench/results/gemm-sweep-winners.csv \
    --csv /tmp/o2/tuned-$run.csv --candidates-csv /tmp/o2/candidates-$run.csv > /tmp/o2/tuned-$run.log 2>&1
  echo "exit $?"; grep -E "^top-1|geometric mean" /tmp/o2/tuned-$run.log
  grep -E "^f64,LINPACK,(512|1024)," /tmp/o2/tuned-$run.csv | cut -d, -f1-7,12,13
done
tar cJf "$OUT/call2.tar.xz" -C /tmp/o2 .
echo "=== done $(date -u +%T) $SECONDS s"
