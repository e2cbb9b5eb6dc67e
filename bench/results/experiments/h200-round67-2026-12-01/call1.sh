#!/usr/bin/env bash
# Round 67, call 1 (0.1.49): the memory floor of every GEMM row on the H200 (never measured there),
# with the brute-force winners and cuBLAS in the same process; tuned f16 and f64 beside it; a sweep of
# the f16 DeepBench rows on the H200, seeded with the committed winners, into a copy.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o1
echo "=== run (floor) $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c1-run timeout 300 /tmp/isaac/bin/isaac-bench-gemm run --winners bench/results/gemm-sweep-winners.csv \
  --csv "$OUT/h200-gemm.csv" --floor-csv "$OUT/h200-gemm-floor.csv" > /tmp/o1/run.log 2>&1
echo "exit $?"; sed -n '/Bandwidth-bound rows against/,$p' /tmp/o1/run.log | head -20
echo "=== tuned f16,f64 $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c1-tuned timeout 150 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f16,f64 --winners bench/results/gemm-sweep-winners.csv \
  --csv "$OUT/tuned-f16-f64.csv" > /tmp/o1/tuned.log 2>&1
echo "exit $?"; grep -E "^top-1|geometric mean" /tmp/o1/tuned.log
echo "=== sweep f16 DeepBench $(date -u +%T) $SECONDS s"
cp bench/results/gemm-sweep-winners.csv /tmp/o1/sweep-winners.csv
ISAAC_CACHE_DIR=/tmp/c1-sweep timeout $((560 - SECONDS)) /tmp/isaac/bin/isaac-bench-gemm sweep --dtypes f16 --only DeepBench --merge \
  --out /tmp/o1/sweep-winners.csv --all /tmp/o1/sweep-all.csv --budget-seconds $((480 - SECONDS)) --candidates 64 > /tmp/o1/sweep.log 2>&1
echo "exit $?"; tail -12 /tmp/o1/sweep.log
cp /tmp/o1/sweep-winners.csv "$OUT/sweep-winners.csv"
tar cJf "$OUT/call1.tar.xz" -C /tmp/o1 .
echo "=== done $(date -u +%T) $SECONDS s"
