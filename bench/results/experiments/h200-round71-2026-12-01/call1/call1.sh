#!/usr/bin/env bash
# Round 71, call 1 (the committed 0.1.53, 20d459a): test_gpu_conv, test_gpu_smoke, test_gpu_program,
# test_gpu_aot, the tuner on the paper's f16 CONV rows against cuDNN, then test_gpu_conv's TMA cases
# under compute-sanitizer memcheck while time is left.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python3 - > /tmp/winners-f16.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open('bench/results/conv-sweep-winners.csv')))
w = csv.writer(sys.stdout, lineterminator='\n')
w.writerow(rows[0].keys())
for r in rows:
    if r['dtype'] == 'f16': w.writerow(r.values())
PY
suite() {  # name, timeout
  export ISAAC_CACHE_DIR=/tmp/c1-tests
  echo "=== $1 $(date -u +%T) $SECONDS s"
  timeout $2 /tmp/isaac/bin/$1 > "$OUT/$1.log" 2>&1; echo "exit $?"
  tail -3 "$OUT/$1.log"; grep -E "ERROR|FAILED" "$OUT/$1.log" | head -10
}
suite test_gpu_conv 250
suite test_gpu_smoke 100
suite test_gpu_program 60
suite test_gpu_aot 60
export ISAAC_CACHE_DIR=/tmp/c1-f16
echo "=== tuned f16 $(date -u +%T) $SECONDS s"
timeout 110 /tmp/isaac/bin/isaac-bench-conv tuned --winners /tmp/winners-f16.csv --csv "$OUT/tuned-f16.csv" > /tmp/tuned-f16.log 2>&1
echo "exit $?"; grep -E '^(f16|bf16) |^top-1|^tuned' /tmp/tuned-f16.log
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
if (( SECONDS < 480 )); then
  export ISAAC_CACHE_DIR=/tmp/c1-tests
  echo "=== memcheck CONV TMA* $(date -u +%T) $SECONDS s"
  timeout $((560 - SECONDS)) $san --tool memcheck --print-limit 20 /tmp/isaac/bin/test_gpu_conv -tc="CONV TMA*" > "$OUT/memcheck-tma.log" 2>&1
  echo "exit $?"; grep -E "ERROR SUMMARY|test cases|assertions" "$OUT/memcheck-tma.log" | tail -3
fi
echo "=== done $SECONDS s"
