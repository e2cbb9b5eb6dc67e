#!/usr/bin/env bash
# Round 61, call 3 (0.1.44: log2_tma_stages, DB=0 rings counted at three stages, and the f16 CONV
# model retrained with it on the shipped data + collect60/61 + focus60/61, embedded): the tuner on the
# paper's f16 CONV rows, then bf16, against cuDNN; test_gpu_smoke and test_gpu_conv; f16 again while
# time is left.
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
tuned() {  # name, extra options
  export ISAAC_CACHE_DIR=/tmp/c3-$1
  echo "=== tuned $1 $(date -u +%T) $SECONDS s"
  timeout 150 $bench tuned --winners /tmp/winners-f16.csv ${2:-} --csv "$OUT/tuned-$1.csv" > "$OUT/tuned-$1.log" 2>&1
  echo "exit $?"; grep -E '^(f16|bf16) |^top-1|^tuned' "$OUT/tuned-$1.log"
}
tuned f16
tuned bf16 --bf16
export ISAAC_CACHE_DIR=/tmp/c3-tests
echo "=== test_gpu_smoke $(date -u +%T) $SECONDS s"
timeout 100 /tmp/isaac/bin/test_gpu_smoke > /tmp/smoke.log 2>&1; echo "exit $?"; tail -3 /tmp/smoke.log
echo "=== test_gpu_conv $(date -u +%T) $SECONDS s"
timeout 230 /tmp/isaac/bin/test_gpu_conv > /tmp/conv.log 2>&1; echo "exit $?"; tail -3 /tmp/conv.log
grep -E "ERROR|FAILED" /tmp/conv.log /tmp/smoke.log | head -20
(( SECONDS < 440 )) && tuned f16-again
echo "=== done $SECONDS s"
