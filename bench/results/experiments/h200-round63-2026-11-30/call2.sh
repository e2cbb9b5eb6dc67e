#!/usr/bin/env bash
# Round 63, call 2: the f32 GEMM tuner with the shipped model (S) and model a (the shipped recipe on
# the shipped data + focus63-thin + focus64-long, given as the user's model), alternating, each run
# in a fresh cache, every candidate timed again. Then two focus rounds drawn with model a that time
# many neighbours of its first choice (mostly variants: load widths, KL, DB), thin and long-K shapes.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o2
for run in S1 A1 A2 S2; do
  export ISAAC_CACHE_DIR=/tmp/c2-$run
  mkdir -p $ISAAC_CACHE_DIR/models
  [[ $run == A* ]] && cp .bundle/model-a.json $ISAAC_CACHE_DIR/models/gemm-f32.json
  echo "=== tuned f32 $run $(date -u +%T) $SECONDS s"
  timeout 120 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f32 --winners bench/results/gemm-sweep-winners.csv \
    --csv /tmp/o2/tuned-$run.csv --candidates-csv /tmp/o2/candidates-$run.csv > /tmp/tuned-$run.log 2>&1
  echo "exit $?"; grep -E "^top-1|geometric mean" /tmp/tuned-$run.log
  cp /tmp/tuned-$run.log /tmp/o2/
done
tar cJf "$OUT/call2-tuned.tar.xz" -C /tmp/o2 .
unset ISAAC_CACHE_DIR
tune=/tmp/isaac/bin/isaac-tune
sib="--f32-tensor-cores --dtypes f32 --model .bundle/model-a.json --per-shape 16 --best 4 --load-siblings 2 --neighbour-siblings 10"
for spec in "h200-gemm-focus67-f32-thin 67 --m-min 1024 --m-max 8192 --n-min 16 --n-max 128 --k-min 1024 --k-max 8192 --aligned-share 0.8" \
            "h200-gemm-focus68-f32-long 68 --m-min 16 --m-max 512 --n-min 16 --n-max 512 --k-min 16384 --k-max 65536 --aligned-share 0.7"; do
  set -- $spec; name=$1 seed=$2; shift 2
  secs=$(( (570 - SECONDS) / 2 )); [[ $name == *long ]] && secs=$((570 - SECONDS - 15))
  echo "=== focus $name ${secs} s $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c2-$name ISAAC_NO_CACHE=1 timeout -k 10 $((secs + 30)) $tune focus --out /tmp/$name.csv \
    --seconds $secs --seed $seed $sib "$@" 2>&1 | tr '\r' '\n' | grep -v "^ *$" | tail -2
  wc -l < /tmp/$name.csv; xz -9 -c /tmp/$name.csv > "$OUT/$name.csv.xz"
done
echo "=== done $(date -u +%T) $SECONDS s"
