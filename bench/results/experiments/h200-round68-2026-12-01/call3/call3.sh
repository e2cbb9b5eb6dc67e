#!/usr/bin/env bash
# Round 68, call 3: where a loop beats the grid of the same set (K tiles, tiles per block), and what
# the tuner makes of the relaxed rules (temporary env switches ISAAC_X_PP_KTILES, ISAAC_X_LOOP_KTILES,
# ISAAC_X_PP_MIN100) on the paper's f16 rows, the batched rows and five CONV problems as GEMMs.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o3
relax() { export ISAAC_X_PP_KTILES=1000 ISAAC_X_LOOP_KTILES=1000 ISAAC_X_PP_MIN100=150; }
strict() { unset ISAAC_X_PP_KTILES ISAAC_X_LOOP_KTILES ISAAC_X_PP_MIN100; }
B="VA=8,VB=8,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1"
PP="ML=128,NL=128,MS=16,NS=8,U=64,$B"; LOOP="ML=128,NL=128,MS=8,NS=8,U=64,$B"
echo "=== rule data $(date -u +%T) $SECONDS s"
for shape in "25088 256 576" "25088 256 1152" "25088 256 2304" "25088 256 4608" "16896 256 1152" "8448 512 1152" "33792 256 1152" "33792 256 4608" "4096 4096 1024" "8448 512 2304"; do
  set -- $shape
  for env in strict relax; do
    $env
    ISAAC_CACHE_DIR=/tmp/c3-$env timeout 60 /tmp/isaac/bin/isaac-bench-gemm sets $1 $2 $3 --layout TN --dtype f16 --params "$PP" --params "$LOOP" \
      --csv "/tmp/o3/rule-$1x$2x$3-$env.csv" > /tmp/o3/rule-$1x$2x$3-$env.log 2>&1 || echo "exit $? $shape $env"
    echo "$shape $env $(grep -E "^(set|cublas)[0-9]*/" /tmp/o3/rule-$1x$2x$3-$env.log | grep -v "ERROR OCC" | awk '{printf "%s ", $2}')"
  done
done
for env in strict relax; do
  $env
  echo "=== tuned f16 $env $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c3-tuned-$env timeout 150 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f16 --winners bench/results/gemm-sweep-winners.csv \
    --csv "$OUT/tuned-f16-$env.csv" > /tmp/o3/tuned-$env.log 2>&1; echo "exit $?"; grep -E "^top-1|geometric mean" /tmp/o3/tuned-$env.log
  echo "=== batched f16 $env $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c3-batched-$env timeout 150 /tmp/isaac/bin/isaac-bench-gemm batched --dtypes f16 --csv "$OUT/batched-f16-$env.csv" > /tmp/o3/batched-$env.log 2>&1
  echo "exit $?"; grep -iE "geometric" /tmp/o3/batched-$env.log
  echo "=== conv-as-gemm f16 $env $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c3-batched-$env timeout 100 /tmp/isaac/bin/isaac-bench-gemm batched --problems .bundle/conv-as-gemm.csv --dtypes f16 \
    --csv "$OUT/conv-as-gemm-f16-$env.csv" > /tmp/o3/conv-as-gemm-$env.log 2>&1; echo "exit $?"
done
tar cJf "$OUT/call3.tar.xz" -C /tmp/o3 .
echo "=== done $(date -u +%T) $SECONDS s"
