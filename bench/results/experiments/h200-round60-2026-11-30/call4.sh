#!/usr/bin/env bash
# Round 60, call 4: GEMM's rings of 5 to 7 stages (fit_gemm_pipeline_depth) against four stages
# (ST=0) on the sets the tuner chose with them for the paper's f16 rows (bench/results/h200-main-job-gemm.csv):
# `isaac-bench-gemm sets` times the sets as given, in one process with cuBLAS, twice in opposite orders.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ISAAC_CACHE_DIR=/tmp/c4-cache
i=0; mkdir -p /tmp/sets
while read -r dtype m n k layout given base; do
  i=$((i + 1))
  five=$(echo "$given" | sed 's/ST=[0-9]*/ST=5/')
  for order in 1 2; do
    if [[ $order == 1 ]]; then sets=("$given" "$base" "$five"); else sets=("$five" "$base" "$given"); fi
    args=(); for s in "${sets[@]}"; do args+=(--params "$s"); done
    timeout 100 /tmp/isaac/bin/isaac-bench-gemm sets "$m" "$n" "$k" --layout "$layout" --dtype "$dtype" "${args[@]}" \
      --csv "/tmp/sets/sets-$i-$order.csv" > "/tmp/sets/sets-$i-$order.log" 2>&1
    echo "$i.$order $dtype $m $n $k $layout: exit $? at $SECONDS s"
  done
done < .bundle/gemm-st-sets.txt
tail -n +2 -q /tmp/sets/*.csv | grep -v "^dtype" | sort > "$OUT/sets.csv"
echo "=== done $SECONDS s"
