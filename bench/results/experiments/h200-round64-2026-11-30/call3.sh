#!/usr/bin/env bash
# Round 64, call 3 (0.1.47: model e, the shipped f32 CONV recipe + focus69-chwn + focus73-nhwc, embedded
# as conv-h100-f32): the f32 CONV rows tuned with e (E) and with 0.1.46's model as the user's model (S),
# alternating E, S, E, each in a fresh cache, every candidate timed again; then test_gpu_smoke and
# test_gpu_conv.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
/tmp/isaac/bin/isaac-info | head -2
python3 - > /tmp/winners-f32.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open('bench/results/conv-sweep-winners.csv')))
w = csv.writer(sys.stdout, lineterminator='\n')
w.writerow(rows[0].keys())
for r in rows:
    if r['dtype'] == 'f32': w.writerow(r.values())
PY
mkdir -p /tmp/o3
for run in E1 S1 E2; do
  export ISAAC_CACHE_DIR=/tmp/c3-$run
  mkdir -p $ISAAC_CACHE_DIR/models
  [[ $run == S* ]] && cp .bundle/model-shipped-0.1.46.json $ISAAC_CACHE_DIR/models/conv-f32.json
  echo "=== conv tuned f32 $run $(date -u +%T) $SECONDS s"
  timeout 115 /tmp/isaac/bin/isaac-bench-conv tuned --winners /tmp/winners-f32.csv \
    --csv /tmp/o3/tuned-$run.csv --candidates-csv /tmp/o3/candidates-$run.csv > /tmp/o3/tuned-$run.log 2>&1
  echo "exit $?"; grep -E '^f32 .*Conv(2|14) |^top-1|^tuned' /tmp/o3/tuned-$run.log
done
export ISAAC_CACHE_DIR=/tmp/c3-tests
for t in test_gpu_smoke test_gpu_conv; do
  echo "=== $t $(date -u +%T) $SECONDS s"
  timeout $((580 - SECONDS)) /tmp/isaac/bin/$t > /tmp/o3/$t.log 2>&1; echo "exit $?"; tail -3 /tmp/o3/$t.log | head -2
  grep -E "ERROR|FAILED" /tmp/o3/$t.log | head -10
done
tar cJf "$OUT/call3.tar.xz" -C /tmp/o3 .
echo "=== done $(date -u +%T) $SECONDS s"
