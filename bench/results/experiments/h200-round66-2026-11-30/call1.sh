#!/usr/bin/env bash
# Round 66, call 1 (0.1.49: the re-benchmark races the short kernels close to the fastest):
# test_gpu_smoke and test_gpu_program; the 18 f64 GEMM rows tuned twice and the 18 f16 rows once, each
# in a fresh cache, every candidate timed again: does the re-benchmark choose the list's best more
# often, and at what tuning time (round 65's call 4: f64 0.57-1.15 s a row)?
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o1
for t in test_gpu_smoke test_gpu_program; do
  echo "=== $t $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c1-$t timeout 150 /tmp/isaac/bin/$t > /tmp/o1/$t.log 2>&1; echo "exit $?"
  tail -3 /tmp/o1/$t.log | head -2
done
for run in f64-1 f16-1 f64-2; do
  (( SECONDS > 470 )) && break
  export ISAAC_CACHE_DIR=/tmp/c1-$run
  echo "=== tuned $run $(date -u +%T) $SECONDS s"
  timeout 110 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes ${run%-*} --winners bench/results/gemm-sweep-winners.csv \
    --csv /tmp/o1/tuned-$run.csv --candidates-csv /tmp/o1/candidates-$run.csv > /tmp/o1/tuned-$run.log 2>&1
  echo "exit $?"; grep -E "^top-1|geometric mean|^candidates" /tmp/o1/tuned-$run.log
  grep -o "top-10: rank [0-9]* in [0-9.]* s" /tmp/o1/tuned-$run.log | awk '{s+=$5; n++} END {printf "tuning: %d rows, %.1f s\n", n, s}'
done
tar cJf "$OUT/call1.tar.xz" -C /tmp/o1 .
echo "=== done $(date -u +%T) $SECONDS s"
