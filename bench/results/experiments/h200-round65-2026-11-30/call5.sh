#!/usr/bin/env bash
# Round 65, call 5 (0.1.48 + the re-benchmark timing each candidate for at least 2 ms, up to 200 runs):
# test_gpu_smoke (the timer's test); the 18 f64 GEMM rows tuned twice and the 18 f16 rows once, each in
# a fresh cache, every candidate timed again: does the re-benchmark choose the list's best more often?
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o5
echo "=== test_gpu_smoke $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c5-smoke timeout 120 /tmp/isaac/bin/test_gpu_smoke > /tmp/o5/test_gpu_smoke.log 2>&1; echo "exit $?"
tail -3 /tmp/o5/test_gpu_smoke.log | head -2
for run in f64-1 f16-1 f64-2; do
  (( SECONDS > 440 )) && break
  export ISAAC_CACHE_DIR=/tmp/c5-$run
  echo "=== tuned $run $(date -u +%T) $SECONDS s"
  timeout 110 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes ${run%-*} --winners bench/results/gemm-sweep-winners.csv \
    --csv /tmp/o5/tuned-$run.csv --candidates-csv /tmp/o5/candidates-$run.csv > /tmp/o5/tuned-$run.log 2>&1
  echo "exit $?"; grep -E "^top-1|geometric mean|^candidates" /tmp/o5/tuned-$run.log
done
tar cJf "$OUT/call5.tar.xz" -C /tmp/o5 .
echo "=== done $(date -u +%T) $SECONDS s"
