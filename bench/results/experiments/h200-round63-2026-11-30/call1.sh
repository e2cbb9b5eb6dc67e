#!/usr/bin/env bash
# Round 63, call 1 (0.1.45): f32 GEMM focus rounds with the TF32 sets, for the two f32 top-10 misses
# (DeepBench-B 2560x32, ICA 64): thin shapes and long-K shapes, each input timed at the model's best
# sets, its first in other load widths, its best neighbours and a KG sibling. Two training files, two
# held-out ones (other seeds). Then the f32 rows tuned with the shipped model, every candidate timed.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tune=/tmp/isaac/bin/isaac-tune
sib="--f32-tensor-cores --dtypes f32 --per-shape 12 --best 4 --load-siblings 3 --neighbour-siblings 4 --kg-siblings 1"
thin="--m-min 1024 --m-max 8192 --n-min 16 --n-max 128 --k-min 1024 --k-max 8192 --aligned-share 0.8"
long="--m-min 16 --m-max 512 --n-min 16 --n-max 512 --k-min 16384 --k-max 65536 --aligned-share 0.7"
run_focus() {  # name seconds seed ranges...
  local name=$1 secs=$2 seed=$3; shift 3
  echo "=== focus $name $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c1-$name ISAAC_NO_CACHE=1 timeout -k 10 $((secs + 40)) $tune focus --out /tmp/$name.csv \
    --seconds $secs --seed $seed $sib "$@" 2>&1 | tr '\r' '\n' | grep -v "^ *$" | tail -4
  wc -l < /tmp/$name.csv; xz -9 -c /tmp/$name.csv > "$OUT/$name.csv.xz"
}
run_focus h200-gemm-focus63-f32-thin 140 63 $thin
run_focus h200-gemm-focus64-f32-long 110 64 $long
run_focus h200-gemm-focus65-f32-thin 45 65 $thin
run_focus h200-gemm-focus66-f32-long 45 66 $long
echo "=== tuned f32, shipped model $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c1-tuned timeout $((585 - SECONDS)) /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f32 \
  --winners bench/results/gemm-sweep-winners.csv --csv "$OUT/tuned-shipped.csv" \
  --candidates-csv "$OUT/candidates-shipped.csv" > /tmp/tuned.log 2>&1
echo "exit $?"; grep -E "^top-1|geometric mean" /tmp/tuned.log
xz -c /tmp/tuned.log > "$OUT/tuned-shipped.log.xz"
echo "=== done $(date -u +%T) $SECONDS s"
