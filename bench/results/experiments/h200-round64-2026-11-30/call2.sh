#!/usr/bin/env bash
# Round 64, call 2 (0.1.46): an f32 CONV focus round on NHWC inputs near Conv2 (few channels, wide
# outputs), drawn with model c (call 1), timing each input's first choice in other load widths and its
# best neighbours: c ranks Conv2's winner (a VF=2 variant) below its VF=1 twin, and lost Conv2 in call 1.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tune=/tmp/isaac/bin/isaac-tune
opts="--template conv --model .bundle/model-c.json --dtypes f32 --f32-tensor-cores --layouts NHWC --n-min 4 --n-max 64
  --c-min 8 --c-max 128 --k-min 16 --k-max 128 --pq-min 16 --pq-max 256 --aligned-share 0.7 --per-shape 12 --best 4
  --load-siblings 3 --neighbour-siblings 4"
for spec in "h200-conv-focus73-f32-nhwc 73 230" "h200-conv-focus74-f32-nhwc 74 60"; do
  set -- $spec
  echo "=== focus $1 $3 s $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c2-$1 ISAAC_NO_CACHE=1 timeout -k 10 $(($3 + 30)) $tune focus --out /tmp/$1.csv --seconds $3 \
    --seed $2 $opts 2>&1 | tr '\r' '\n' | grep -v "^ *$" | tail -2
  wc -l < /tmp/$1.csv; xz -9 -c /tmp/$1.csv > "$OUT/$1.csv.xz"
done
echo "=== done $(date -u +%T) $SECONDS s"
