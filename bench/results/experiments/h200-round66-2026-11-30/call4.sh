#!/usr/bin/env bash
# Round 66, call 4 (0.1.49: the race, device_info queried once, the GPU resting after each timed run):
# test_gpu_smoke; README's GEMM stage (54 rows, f32, f16, f64, fresh cache) with its plot; the f64 rows
# once more (is a kernel's time the same from run to run again?); README's CONV stage with its plot.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o4
echo "=== test_gpu_smoke $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c4-smoke timeout 120 /tmp/isaac/bin/test_gpu_smoke > /tmp/o4/test_gpu_smoke.log 2>&1; echo "exit $?"
tail -3 /tmp/o4/test_gpu_smoke.log | head -2
echo "=== gemm stage $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c4-main timeout 300 /tmp/isaac/bin/isaac-bench-gemm tuned --winners bench/results/gemm-sweep-winners.csv \
  --csv "$OUT/h200-main-job-gemm.csv" --candidates-csv /tmp/o4/candidates-gemm.csv > /tmp/o4/gemm-tuned.log 2>&1
echo "exit $?"; grep -E "^top-1|geometric mean|^candidates" /tmp/o4/gemm-tuned.log
grep -o "top-10: rank [0-9]* in [0-9.]* s" /tmp/o4/gemm-tuned.log | awk '{s+=$5; n++} END {printf "tuning: %d rows, %.1f s\n", n, s}'
python3 bench/plot_tuned.py "$OUT/h200-main-job-gemm.csv" "$OUT/h200-main-job-gemm.png" 2>&1 | tail -1
echo "=== tuned f64 again $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c4-f64 timeout 100 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f64 --winners bench/results/gemm-sweep-winners.csv \
  --csv /tmp/o4/tuned-f64-2.csv --candidates-csv /tmp/o4/candidates-f64-2.csv > /tmp/o4/tuned-f64-2.log 2>&1
echo "exit $?"; grep -E "^top-1|geometric mean|^candidates" /tmp/o4/tuned-f64-2.log
echo "=== conv stage $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c4-conv timeout $((580 - SECONDS)) /tmp/isaac/bin/isaac-bench-conv tuned --winners bench/results/conv-sweep-winners.csv \
  --csv "$OUT/h200-main-job-conv.csv" > /tmp/o4/conv-tuned.log 2>&1
echo "exit $?"; grep -E '^top-1|^tuned' /tmp/o4/conv-tuned.log
grep -o "top-10: rank [0-9]* in [0-9.]* s" /tmp/o4/conv-tuned.log | awk '{s+=$5; n++} END {printf "tuning: %d rows, %.1f s\n", n, s}'
python3 bench/plot_tuned.py "$OUT/h200-main-job-conv.csv" "$OUT/h200-main-job-conv.png" 2>&1 | tail -1
tar cJf "$OUT/call4.tar.xz" -C /tmp/o4 .
echo "=== done $(date -u +%T) $SECONDS s"
