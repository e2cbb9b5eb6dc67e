#!/usr/bin/env bash
# Round 70, call 5 (TMA stores of CONV outputs; the temporary switch ISAAC_EXPERIMENT_NO_TMA_STORE
# gives 0.1.52's staged stores): the whole test_gpu_conv, test_gpu_smoke and test_gpu_program, then
# the chosen sets with and without TMA stores in turns, and the tuner on the paper's f16 rows.
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
  export ISAAC_CACHE_DIR=/tmp/c5-tests
  echo "=== $1 $(date -u +%T) $SECONDS s"
  timeout $2 /tmp/isaac/bin/$1 > "$OUT/$1.log" 2>&1; echo "exit $?"
  tail -3 "$OUT/$1.log"; grep -E "ERROR|FAILED" "$OUT/$1.log" | head -10
}
sets() {  # name, environment
  export ISAAC_CACHE_DIR=/tmp/c5-$1
  echo "=== sets $1 ($2) $(date -u +%T) $SECONDS s"
  env $2 timeout 90 $bench tuned --problems .bundle/loop-problems.csv --winners .bundle/loop-sets.csv \
    --csv "$OUT/sets-$1.csv" > "/tmp/sets-$1.log" 2>&1
  echo "exit $?"; grep -E '^f16 ' "/tmp/sets-$1.log"
}
suite test_gpu_conv 230
suite test_gpu_smoke 60
suite test_gpu_program 40
sets tma "ISAAC_NONE=1"
sets runs "ISAAC_EXPERIMENT_NO_TMA_STORE=1"
if (( SECONDS < 300 )); then
  export ISAAC_CACHE_DIR=/tmp/c5-tuned
  echo "=== tuned f16 $(date -u +%T) $SECONDS s"
  timeout 100 $bench tuned --winners /tmp/winners-f16.csv --csv "$OUT/tuned-f16.csv" > /tmp/tuned-f16.log 2>&1
  echo "exit $?"; grep -E '^f16 |^top-1|^tuned' /tmp/tuned-f16.log
fi
(( SECONDS < 360 )) && sets tma2 "ISAAC_NONE=1"
echo "=== done $SECONDS s"
