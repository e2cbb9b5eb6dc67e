#!/usr/bin/env bash
# Round 63, call 4 (0.1.46 as committed): data for f32 CONV Conv14 (CHWN, 1x1, C = 1024, K = 2048,
# 7 x 7, top-10 at 0.941-0.948 since round 56): an f32 focus round with the TF32 sets on CHWN
# convolutions with many channels and small outputs, each with the model's first choice in three other
# load widths and its best set of each other kind; a second seed held out. Then the f32 CONV rows tuned,
# every candidate timed again.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tune=/tmp/isaac/bin/isaac-tune
opts="--template conv --dtypes f32 --f32-tensor-cores --layouts CHWN --n-min 8 --n-max 32 --c-min 256 --c-max 2048
  --k-min 256 --k-max 2048 --pq-min 7 --pq-max 14 --aligned-share 0.7 --load-siblings 3 --kind-siblings 1"
for spec in "h200-conv-focus69-f32-chwn 69 140" "h200-conv-focus70-f32-chwn 70 50"; do
  set -- $spec
  echo "=== focus $1 $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c4-$1 ISAAC_NO_CACHE=1 timeout -k 10 $(($3 + 40)) $tune focus --out /tmp/$1.csv --seconds $3 \
    --seed $2 $opts 2>&1 | tr '\r' '\n' | grep -v "^ *$" | tail -2
  wc -l < /tmp/$1.csv; xz -9 -c /tmp/$1.csv > "$OUT/$1.csv.xz"
done
python3 - > /tmp/winners-f32.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open('bench/results/conv-sweep-winners.csv')))
w = csv.writer(sys.stdout, lineterminator='\n')
w.writerow(rows[0].keys())
for r in rows:
    if r['dtype'] == 'f32': w.writerow(r.values())
PY
echo "=== conv tuned f32 $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c4-tuned timeout $((370 - SECONDS)) /tmp/isaac/bin/isaac-bench-conv tuned --winners /tmp/winners-f32.csv \
  --csv "$OUT/conv-tuned-f32.csv" --candidates-csv "$OUT/conv-candidates-f32.csv" > /tmp/conv-tuned.log 2>&1
echo "exit $?"; grep -E '^f32 .*Conv14|^top-1|^tuned' /tmp/conv-tuned.log
xz -c /tmp/conv-tuned.log > "$OUT/conv-tuned-f32.log.xz"
echo "=== done $(date -u +%T) $SECONDS s"
