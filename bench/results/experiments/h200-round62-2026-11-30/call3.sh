#!/usr/bin/env bash
# Round 62, call 3 (0.1.45, the f16 CONV model with focus62-chwn embedded): test_gpu_smoke and
# test_gpu_conv, then the tuner on the paper's f16 CONV rows in bf16 against cuDNN.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ISAAC_CACHE_DIR=/tmp/c3-tests
/tmp/isaac/bin/isaac-info | head -3
echo "=== test_gpu_smoke $(date -u +%T) $SECONDS s"
timeout 100 /tmp/isaac/bin/test_gpu_smoke > $OUT/smoke.log 2>&1; echo "exit $?"; tail -3 $OUT/smoke.log
echo "=== test_gpu_conv $(date -u +%T) $SECONDS s"
timeout 260 /tmp/isaac/bin/test_gpu_conv > $OUT/conv.log 2>&1; echo "exit $?"; tail -3 $OUT/conv.log
grep -E "ERROR|FAILED" $OUT/conv.log $OUT/smoke.log | head -20
python3 - > /tmp/winners-f16.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open('bench/results/conv-sweep-winners.csv')))
w = csv.writer(sys.stdout, lineterminator='\n')
w.writerow(rows[0].keys())
for r in rows:
    if r['dtype'] == 'f16': w.writerow(r.values())
PY
export ISAAC_CACHE_DIR=/tmp/c3-bf16
echo "=== tuned bf16 $(date -u +%T) $SECONDS s"
timeout $((570 - SECONDS)) /tmp/isaac/bin/isaac-bench-conv tuned --winners /tmp/winners-f16.csv --bf16 \
  --csv "$OUT/tuned-bf16.csv" > "$OUT/tuned-bf16.log" 2>&1
echo "exit $?"; grep -E '^bf16 |^top-1|^tuned' "$OUT/tuned-bf16.log"
echo "=== done $SECONDS s"
