#!/usr/bin/env bash
# Round 63, call 3 (0.1.46: model a embedded as gemm-h100-f32): README's GEMM stage (the 54 rows
# tuned, f32, f16, f64) with its table and plot; test_gpu_smoke, test_gpu_program and test_gpu_aot;
# then f32 tuned twice more with model b (a + focus67-thin + focus68-long, as the user's model)
# against the shipped a, alternating.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o3
/tmp/isaac/bin/isaac-info | head -3
echo "=== gemm stage $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c3-main timeout 260 /tmp/isaac/bin/isaac-bench-gemm tuned --winners bench/results/gemm-sweep-winners.csv \
  --csv "$OUT/h200-main-job-gemm.csv" > /tmp/o3/gemm-tuned.log 2>&1
echo "exit $?"; grep -E "^top-1|geometric mean|^candidates" /tmp/o3/gemm-tuned.log
python3 bench/plot_tuned.py "$OUT/h200-main-job-gemm.csv" "$OUT/h200-main-job-gemm.png" 2>&1 | tail -1
for t in test_gpu_smoke test_gpu_program test_gpu_aot; do
  echo "=== $t $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c3-$t timeout 150 /tmp/isaac/bin/$t > /tmp/o3/$t.log 2>&1; echo "exit $?"; tail -3 /tmp/o3/$t.log | head -2
done
for run in B1 A1 A2 B2; do
  (( SECONDS > 480 )) && break
  export ISAAC_CACHE_DIR=/tmp/c3-$run
  mkdir -p $ISAAC_CACHE_DIR/models
  [[ $run == B* ]] && cp .bundle/model-b.json $ISAAC_CACHE_DIR/models/gemm-f32.json
  echo "=== tuned f32 $run $(date -u +%T) $SECONDS s"
  timeout 100 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f32 --winners bench/results/gemm-sweep-winners.csv \
    --csv /tmp/o3/tuned-$run.csv > /tmp/o3/tuned-$run.log 2>&1
  echo "exit $?"; grep -E "^top-1|geometric mean" /tmp/o3/tuned-$run.log
done
tar cJf "$OUT/call3.tar.xz" -C /tmp/o3 .
echo "=== done $(date -u +%T) $SECONDS s"
