#!/usr/bin/env bash
# Round 72, call A (filter tiles fitted to K, uncommitted): test_gpu_conv (its random TC=2 sets now drawn
# from a space with fitted tiles, and the TMA cases with five fitted shapes), the chosen sets on
# Conv11/Conv12 (fitted against the power-of-two sweep winners), the tuner on the paper's f16 rows
# against cuDNN, test_gpu_smoke/program/aot, then the TMA cases under compute-sanitizer memcheck.
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
suite() {  # name, timeout, doctest args
  export ISAAC_CACHE_DIR=/tmp/cA-tests
  echo "=== $1 $(date -u +%T) $SECONDS s"
  timeout $2 /tmp/isaac/bin/$1 ${3:-} > "$OUT/$1.log" 2>&1; echo "exit $?"
  tail -3 "$OUT/$1.log"; grep -E "ERROR|FAILED" "$OUT/$1.log" | head -10
}
suite test_gpu_conv 260
export ISAAC_CACHE_DIR=/tmp/cA-sets
echo "=== fitted sets $(date -u +%T) $SECONDS s"
timeout 100 $bench tuned --problems .bundle/fitted-problems.csv --winners .bundle/fitted-sets.csv \
  --csv "$OUT/sets-fitted.csv" > /tmp/sets.log 2>&1
echo "exit $?"; grep -E '^f16 |^top-1|^tuned' /tmp/sets.log
export ISAAC_CACHE_DIR=/tmp/cA-f16
echo "=== tuned f16 $(date -u +%T) $SECONDS s"
timeout 110 $bench tuned --winners /tmp/winners-f16.csv --csv "$OUT/tuned-f16.csv" > /tmp/tuned-f16.log 2>&1
echo "exit $?"; grep -E '^(f16|bf16) |^top-1|^tuned' /tmp/tuned-f16.log
(( SECONDS < 470 )) && suite test_gpu_smoke 40
(( SECONDS < 500 )) && suite test_gpu_program 30
(( SECONDS < 520 )) && suite test_gpu_aot 30
echo "=== done $SECONDS s"
