#!/usr/bin/env bash
# Round 72, call D (0.1.54 as committed: fitted filter tiles, TMA sets free of the load-layout rule, the
# shipped f16 CONV model): the tuner on the paper's f16 rows once more, then on the same rows in bf16.
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
for run in f16 bf16; do
  export ISAAC_CACHE_DIR=/tmp/cD-$run
  echo "=== tuned $run $(date -u +%T) $SECONDS s"
  timeout $((195 - SECONDS)) /tmp/isaac/bin/isaac-bench-conv tuned --winners /tmp/winners-f16.csv \
    $([[ $run == bf16 ]] && echo --bf16) --csv "$OUT/tuned-$run.csv" > /tmp/tuned-$run.log 2>&1
  echo "exit $?"; grep -E '^(f16|bf16) |^top-1|^tuned' /tmp/tuned-$run.log
done
echo "=== done $SECONDS s"
