#!/usr/bin/env bash
# Round 66, call 3 (0.1.49 + device_info queried once per device): the probe with call 2's library and
# with this one; the 18 f64 GEMM rows tuned twice and the 18 f16 rows once as in call 1: tuning time.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o3 /tmp/old-lib
cp .bundle/probe/probe_timer /tmp/isaac/bin/
xz -dc .bundle/probe/old/libisaac.so.0.1.xz > /tmp/old-lib/libisaac.so.0.1
echo "=== probe, call 2's library $(date -u +%T) $SECONDS s"
LD_LIBRARY_PATH=/tmp/old-lib:$LD_LIBRARY_PATH ISAAC_CACHE_DIR=/tmp/c3-probe timeout 100 /tmp/isaac/bin/probe_timer; echo "exit $?"
echo "=== probe, this library $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c3-probe timeout 100 /tmp/isaac/bin/probe_timer; echo "exit $?"
for run in f64-1 f16-1 f64-2; do
  (( SECONDS > 470 )) && break
  export ISAAC_CACHE_DIR=/tmp/c3-$run
  echo "=== tuned $run $(date -u +%T) $SECONDS s"
  timeout 110 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes ${run%-*} --winners bench/results/gemm-sweep-winners.csv \
    --csv /tmp/o3/tuned-$run.csv --candidates-csv /tmp/o3/candidates-$run.csv > /tmp/o3/tuned-$run.log 2>&1
  echo "exit $?"; grep -E "^top-1|geometric mean|^candidates" /tmp/o3/tuned-$run.log
  grep -o "top-10: rank [0-9]* in [0-9.]* s" /tmp/o3/tuned-$run.log | awk '{s+=$5; n++} END {printf "tuning: %d rows, %.1f s\n", n, s}'
done
tar cJf "$OUT/call3.tar.xz" -C /tmp/o3 .
echo "=== done $(date -u +%T) $SECONDS s"
