#!/usr/bin/env bash
# Round 70, call 2 (the committed 0.1.52, no switch): the whole test_gpu_conv, the tuner on the paper's
# f16 CONV rows against cuDNN, test_gpu_smoke, test_gpu_program and test_gpu_aot, and bf16 while time
# is left.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bench=/tmp/isaac/bin/isaac-bench-conv
python3 - > /tmp/winners-f16.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open('bench/results/conv-sweep-winners.csv')))
w = csv.writer(sys.stdout, lineterminator='\n')
w.writerow(rows[0].keys())
for r in rows:
    if r['dtype'] == 'f16': w.writerow(r.values())
PY
suite() {  # name, timeout
  export ISAAC_CACHE_DIR=/tmp/c2-tests
  echo "=== $1 $(date -u +%T) $SECONDS s"
  timeout $2 /tmp/isaac/bin/$1 > "$OUT/$1.log" 2>&1; echo "exit $?"
  tail -3 "$OUT/$1.log"; grep -E "ERROR|FAILED" "$OUT/$1.log" | head -10
}
tuned() {  # name, extra options
  export ISAAC_CACHE_DIR=/tmp/c2-$1
  echo "=== tuned $1 $(date -u +%T) $SECONDS s"
  timeout 110 $bench tuned --winners /tmp/winners-f16.csv ${2:-} --csv "$OUT/tuned-$1.csv" > "/tmp/tuned-$1.log" 2>&1
  echo "exit $?"; grep -E '^(f16|bf16) |^top-1|^tuned' "/tmp/tuned-$1.log"
}
suite test_gpu_conv 250
tuned f16
suite test_gpu_smoke 100
suite test_gpu_program 60
suite test_gpu_aot 60
(( SECONDS < 460 )) && tuned bf16 --bf16
echo "=== done $SECONDS s"
