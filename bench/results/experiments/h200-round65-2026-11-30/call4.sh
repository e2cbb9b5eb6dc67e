#!/usr/bin/env bash
# Round 65, call 4 (0.1.48 as committed): README's GEMM stage, the 54 rows tuned (f32, f16, f64) in a
# fresh cache beside the brute-force best and cuBLAS, with its plot.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
/tmp/isaac/bin/isaac-info | head -2
echo "=== gemm stage $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c4-main timeout 420 /tmp/isaac/bin/isaac-bench-gemm tuned --winners bench/results/gemm-sweep-winners.csv \
  --csv "$OUT/h200-main-job-gemm.csv" --candidates-csv "$OUT/candidates.csv" > "$OUT/gemm-tuned.log" 2>&1
echo "exit $?"; grep -E "^top-1|geometric mean|^candidates" "$OUT/gemm-tuned.log"
python3 bench/plot_tuned.py "$OUT/h200-main-job-gemm.csv" "$OUT/h200-main-job-gemm.png" 2>&1 | tail -1
echo "=== done $(date -u +%T) $SECONDS s"
