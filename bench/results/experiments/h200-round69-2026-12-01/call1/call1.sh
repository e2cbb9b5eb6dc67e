#!/usr/bin/env bash
# Round 69, call 1 (0.1.51 candidate: tile loops in the TMA CONV kernels; the build carries the
# temporary switch ISAAC_EXPERIMENT_NO_CONV_LOOP, which gives the grids of 0.1.50): the GPU CONV tests
# whose cases loop (TMA, bf16, staged), then the tuner on the paper's f16 CONV rows against cuDNN, with
# loops and without, in turns.
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
timeout 170 /tmp/isaac/bin/test_gpu_conv -tc="CONV TMA*,CONV bf16*,CONV staged*" > "$OUT/conv-tests.log" 2>&1; echo "exit $?"
tail -3 "$OUT/conv-tests.log"; grep -E "ERROR|FAILED" "$OUT/conv-tests.log" | head -10
tuned() {  # name, environment
  export ISAAC_CACHE_DIR=/tmp/c1-$1
  echo "=== tuned $1 ($2) $(date -u +%T) $SECONDS s"
  env $2 timeout 110 $bench tuned --winners /tmp/winners-f16.csv --candidates-csv "$OUT/candidates-$1.csv" \
    --csv "$OUT/tuned-$1.csv" > "$OUT/tuned-$1.log" 2>&1
  echo "exit $?"; grep -E '^(f16|bf16) |^top-1|^tuned|geometric' "$OUT/tuned-$1.log" | tail -20
}
tuned loop "ISAAC_NONE=1"
tuned grid "ISAAC_EXPERIMENT_NO_CONV_LOOP=1"
(( SECONDS < 420 )) && tuned loop2 "ISAAC_NONE=1"
(( SECONDS < 480 )) && tuned grid2 "ISAAC_EXPERIMENT_NO_CONV_LOOP=1"
echo "=== done $SECONDS s"
