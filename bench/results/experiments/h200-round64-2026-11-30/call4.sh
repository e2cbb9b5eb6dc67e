#!/usr/bin/env bash
# Round 64, call 4 (0.1.47 as committed, model e embedded as conv-h100-f32): README's CONV stage (the 28
# rows tuned, f32 and f16, beside the brute force and cuDNN) with its plot; then test_gpu_program and
# test_gpu_aot.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o4
/tmp/isaac/bin/isaac-info | head -1
echo "=== conv stage $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c4-main timeout 250 /tmp/isaac/bin/isaac-bench-conv tuned --winners bench/results/conv-sweep-winners.csv \
  --csv "$OUT/h200-main-job-conv.csv" > /tmp/o4/conv-tuned.log 2>&1
echo "exit $?"; grep -E '^(f32|f16) .*Conv(2|14) |^top-1|^tuned' /tmp/o4/conv-tuned.log
python3 bench/plot_tuned.py "$OUT/h200-main-job-conv.csv" "$OUT/h200-main-job-conv.png" 2>&1 | tail -1
for t in test_gpu_program test_gpu_aot; do
  echo "=== $t $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c4-$t timeout $((390 - SECONDS)) /tmp/isaac/bin/$t > /tmp/o4/$t.log 2>&1; echo "exit $?"; tail -3 /tmp/o4/$t.log | head -2
done
tar cJf "$OUT/call4.tar.xz" -C /tmp/o4 .
echo "=== done $(date -u +%T) $SECONDS s"
