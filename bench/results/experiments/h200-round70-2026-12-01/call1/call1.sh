#!/usr/bin/env bash
# Round 70, call 1 (16-bit staging of the CONV epilogue on sm_90; the temporary switch
# ISAAC_EXPERIMENT_F32_STAGING gives 0.1.51's f32 staging): test_gpu_conv's TMA, bf16 and staged cases,
# then chosen sets (.bundle/loop-problems.csv, loop-sets.csv) and the paper's f16 rows (sweep winners
# and the tuner against cuDNN) with each staging in turns.
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
export ISAAC_CACHE_DIR=/tmp/c1-tests
echo "=== test_gpu_conv (TMA, bf16, staged) $(date -u +%T) $SECONDS s"
timeout 150 /tmp/isaac/bin/test_gpu_conv -tc="CONV TMA*,CONV bf16*,CONV staged*" > "$OUT/conv-tests.log" 2>&1; echo "exit $?"
tail -3 "$OUT/conv-tests.log"; grep -E "ERROR|FAILED" "$OUT/conv-tests.log" | head -10
sets() {  # name, environment
  export ISAAC_CACHE_DIR=/tmp/c1-$1
  echo "=== sets $1 ($2) $(date -u +%T) $SECONDS s"
  env $2 timeout 100 $bench tuned --problems .bundle/loop-problems.csv --winners .bundle/loop-sets.csv \
    --csv "$OUT/sets-$1.csv" > "/tmp/sets-$1.log" 2>&1
  echo "exit $?"; grep -E '^f16 ' "/tmp/sets-$1.log"
}
tuned() {  # name, environment
  export ISAAC_CACHE_DIR=/tmp/c1-tuned-$1
  echo "=== tuned $1 ($2) $(date -u +%T) $SECONDS s"
  env $2 timeout 110 $bench tuned --winners /tmp/winners-f16.csv --csv "$OUT/tuned-$1.csv" > "/tmp/tuned-$1.log" 2>&1
  echo "exit $?"; grep -E '^(f16|bf16) |^top-1|^tuned' "/tmp/tuned-$1.log"
}
sets b16 "ISAAC_NONE=1"
sets f32 "ISAAC_EXPERIMENT_F32_STAGING=1"
tuned b16 "ISAAC_NONE=1"
tuned f32 "ISAAC_EXPERIMENT_F32_STAGING=1"
(( SECONDS < 470 )) && sets b16-2 "ISAAC_NONE=1"
(( SECONDS < 540 )) && sets f32-2 "ISAAC_EXPERIMENT_F32_STAGING=1"
echo "=== done $SECONDS s"
