#!/usr/bin/env bash
# Round 64, call 1 (0.1.46): the f32 CONV tuner with the shipped model (S) against model c (the shipped
# recipe on the shipped data + focus69, the user's model), alternating S, c, c, S, each in a fresh
# cache, every candidate timed again. Then an f64 GEMM focus round on square-ish shapes of 384-768
# (f64 LINPACK 512) that times each input's first choice in other load widths and its best neighbours.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python3 - > /tmp/winners-f32.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open('bench/results/conv-sweep-winners.csv')))
w = csv.writer(sys.stdout, lineterminator='\n')
w.writerow(rows[0].keys())
for r in rows:
    if r['dtype'] == 'f32': w.writerow(r.values())
PY
mkdir -p /tmp/o1
for run in S1 c1 c2 S2; do
  export ISAAC_CACHE_DIR=/tmp/c1-$run
  mkdir -p $ISAAC_CACHE_DIR/models
  [[ $run == c* ]] && cp .bundle/model-c.json $ISAAC_CACHE_DIR/models/conv-f32.json
  echo "=== conv tuned f32 $run $(date -u +%T) $SECONDS s"
  timeout 115 /tmp/isaac/bin/isaac-bench-conv tuned --winners /tmp/winners-f32.csv \
    --csv /tmp/o1/tuned-$run.csv --candidates-csv /tmp/o1/candidates-$run.csv > /tmp/o1/tuned-$run.log 2>&1
  echo "exit $?"; grep -E '^f32 .*Conv14|^top-1|^tuned' /tmp/o1/tuned-$run.log
done
unset ISAAC_CACHE_DIR
tar cJf "$OUT/call1-conv-tuned.tar.xz" -C /tmp/o1 .
tune=/tmp/isaac/bin/isaac-tune
opts="--dtypes f64 --m-min 384 --m-max 768 --n-min 384 --n-max 768 --k-min 256 --k-max 2048 --square-share 0.5
  --aligned-share 0.8 --per-shape 12 --best 4 --load-siblings 3 --neighbour-siblings 4 --kg-siblings 1"
left=$((575 - SECONDS)); train=$((left * 3 / 4 - 20)); held=$((left - train - 45))
for spec in "h200-gemm-focus71-f64-square 71 $train" "h200-gemm-focus72-f64-square 72 $held"; do
  set -- $spec; (( $3 >= 10 )) || continue
  echo "=== focus $1 $3 s $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c1-$1 ISAAC_NO_CACHE=1 timeout -k 10 $(($3 + 20)) $tune focus --out /tmp/$1.csv --seconds $3 \
    --seed $2 $opts 2>&1 | tr '\r' '\n' | grep -v "^ *$" | tail -2
  wc -l < /tmp/$1.csv; xz -9 -c /tmp/$1.csv > "$OUT/$1.csv.xz"
done
echo "=== done $(date -u +%T) $SECONDS s"
