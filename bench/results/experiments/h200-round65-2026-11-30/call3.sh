#!/usr/bin/env bash
# Round 65, call 3 (0.1.48 as committed: sm_balance, bf embedded as gemm-h100-f64): the 18 f64 GEMM rows
# tuned in a fresh cache, every candidate timed again; then the GEMM suite and the smaller suites.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
/tmp/isaac/bin/isaac-info | head -2
mkdir -p /tmp/o3
export ISAAC_CACHE_DIR=/tmp/c3-tuned
echo "=== tuned f64 $(date -u +%T) $SECONDS s"
timeout 95 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f64 --winners bench/results/gemm-sweep-winners.csv \
  --csv /tmp/o3/tuned-f64.csv --candidates-csv /tmp/o3/candidates-f64.csv > /tmp/o3/tuned-f64.log 2>&1
echo "exit $?"; grep -E "^top-1|geometric mean" /tmp/o3/tuned-f64.log
grep -E "^f64,LINPACK,(512|1024)," /tmp/o3/tuned-f64.csv | cut -d, -f1-7,12,13
export ISAAC_CACHE_DIR=/tmp/c3-tests
for t in test_gpu_smoke test_gpu_program test_gpu_aot test_gpu_gemm; do
  echo "=== $t $(date -u +%T) $SECONDS s"
  timeout $((585 - SECONDS)) /tmp/isaac/bin/$t > /tmp/o3/$t.log 2>&1; echo "exit $?"; tail -3 /tmp/o3/$t.log | head -2
  grep -E "ERROR|FAILED" /tmp/o3/$t.log | head -10
done
tar cJf "$OUT/call3.tar.xz" -C /tmp/o3 .
echo "=== done $(date -u +%T) $SECONDS s"
