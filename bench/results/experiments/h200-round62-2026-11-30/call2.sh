#!/usr/bin/env bash
# Round 62, call 2: the tuner on the paper's f16 CONV rows (model + top-10 against the brute-force
# winners and cuDNN) with two f16 CONV models, alternating, each run in a fresh cache: `a` (the
# shipped data + focus62-chwn, the shipped recipe), given as the user's model, and the shipped one.
# Every candidate is timed again (--candidates-csv), so that the VI variants of Conv3 show.
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
for run in shipped a a2 shipped2; do
  m=${run%2}
  (( SECONDS > 440 )) && break
  export ISAAC_CACHE_DIR=/tmp/c2-$run
  mkdir -p $ISAAC_CACHE_DIR/models
  [[ $m != shipped ]] && cp .bundle/model-$m.json $ISAAC_CACHE_DIR/models/conv-f16.json
  echo "=== tuned f16, model $m ($run) $(date -u +%T) $SECONDS s"
  timeout $((580 - SECONDS)) $bench tuned --winners /tmp/winners-f16.csv --csv "$OUT/tuned-$run.csv" \
    --candidates-csv "$OUT/candidates-$run.csv" > "$OUT/tuned-$run.log" 2>&1
  echo "exit $?"; grep -E '^f16 |^top-1|^tuned' "$OUT/tuned-$run.log"
done
echo "=== done $SECONDS s"
