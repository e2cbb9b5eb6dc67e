#!/usr/bin/env bash
# Round 60, call 3 (0.1.43): the tuner against cuDNN in bf16 (the f16 winners' problems and layouts); the
# smaller GPU suites; the TMA CONV cases (rings of 8 to 16 stages among them) under compute-sanitizer memcheck.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ISAAC_CACHE_DIR=/tmp/c3-cache
bench=/tmp/isaac/bin/isaac-bench-conv
echo "=== conv bf16 $(date -u +%T) $SECONDS s"
timeout 180 $bench tuned --bf16 --winners bench/results/conv-sweep-winners.csv --csv "$OUT/conv-bf16.csv" \
  > "$OUT/conv-bf16.log" 2>&1; echo "exit $?"
grep -E '^bf16 |^top-1|^tuned' "$OUT/conv-bf16.log"
for t in test_gpu_smoke test_gpu_program test_gpu_aot; do
  echo "=== $t $(date -u +%T) $SECONDS s"
  timeout 120 /tmp/isaac/bin/$t > "$OUT/$t.log" 2>&1; echo "exit $?"; tail -3 "$OUT/$t.log"
done
echo "=== memcheck: CONV TMA $(date -u +%T) $SECONDS s"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout $((585 - SECONDS)) $sanitizer --tool memcheck --error-exitcode 3 /tmp/isaac/bin/test_gpu_conv \
  -tc="CONV TMA*" > "$OUT/memcheck-conv-tma.log" 2>&1; echo "exit $?"
tail -5 "$OUT/memcheck-conv-tma.log"
echo "=== done $SECONDS s"
