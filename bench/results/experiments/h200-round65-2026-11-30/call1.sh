#!/usr/bin/env bash
# Round 65, call 1 (0.1.47 + the GEMM feature sm_balance; the shipped f64 model carried over with a zero
# weight on it, so it ranks as 0.1.47's): the 18 f64 GEMM rows tuned with the shipped model (S) and with
# bd (the shipped f64 recipe + focus71, trained with sm_balance; the user's model), every candidate timed
# again; then f64 data on square-ish shapes near 1024 drawn with bd (seed 75 for training, 76 held out).
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o1
for run in bd1 S1; do
  export ISAAC_CACHE_DIR=/tmp/c1-$run
  mkdir -p $ISAAC_CACHE_DIR/models
  [[ $run == bd* ]] && cp .bundle/model-bd.json $ISAAC_CACHE_DIR/models/gemm-f64.json
  echo "=== tuned f64 $run $(date -u +%T) $SECONDS s"
  timeout 95 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f64 --winners bench/results/gemm-sweep-winners.csv \
    --csv /tmp/o1/tuned-$run.csv --candidates-csv /tmp/o1/candidates-$run.csv > /tmp/o1/tuned-$run.log 2>&1
  echo "exit $?"; grep -E "^f64 +LINPACK|^top-1|geometric mean" /tmp/o1/tuned-$run.log
done
tar cJf "$OUT/call1.tar.xz" -C /tmp/o1 .
run_focus() {  # name, seconds, seed
  echo "=== focus $1 $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c1-$1 ISAAC_NO_CACHE=1 timeout -k 10 $(($2 + 40)) /tmp/isaac/bin/isaac-tune focus \
    --model .bundle/model-bd.json --dtypes f64 --m-min 640 --m-max 1600 --n-min 640 --n-max 1600 --k-min 256 \
    --k-max 4096 --square-share 0.5 --aligned-share 0.8 --per-shape 12 --best 4 --kg-siblings 2 --load-siblings 2 \
    --neighbour-siblings 4 --seconds $2 --seed $3 --out /tmp/$1.csv 2>&1 | tr '\r' '\n' | grep -v "^ *$" | tail -3
  wc -l < /tmp/$1.csv; xz -9 -c /tmp/$1.csv > "$OUT/$1.csv.xz"
}
run_focus h200-gemm-focus75-f64-near1024 $((470 - SECONDS)) 75
run_focus h200-gemm-focus76-f64-near1024 $((535 - SECONDS)) 76
echo "=== done $(date -u +%T) $SECONDS s"
