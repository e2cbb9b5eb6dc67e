#!/usr/bin/env bash
# Round 68, call 1: ping-pong and tile loops over long K (temporary env switches ISAAC_X_KTILES,
# ISAAC_X_PP_MIN100), sets against the grids and cuBLAS on shapes where the grid's waves quantise badly.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o1
B="VA=8,VB=8,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1"
run() {  # tag sizes layout sets...
  local tag=$1 m=$2 n=$3 k=$4 lay=$5; shift 5
  local args=(); for p in "$@"; do args+=(--params "$p"); done
  for mode in grid loop; do
    if [ $mode = loop ]; then export ISAAC_X_KTILES=1000 ISAAC_X_PP_MIN100=120; else unset ISAAC_X_KTILES ISAAC_X_PP_MIN100; fi
    echo "=== $tag $mode $(date -u +%T) $SECONDS s"
    ISAAC_CACHE_DIR=/tmp/c1-$mode timeout 120 /tmp/isaac/bin/isaac-bench-gemm sets $m $n $k --layout $lay --dtype f16 "${args[@]}" \
      --csv "$OUT/$tag-$mode.csv" > /tmp/o1/$tag-$mode.log 2>&1
    echo "exit $?"; grep -E "^(set|cublas)[0-9]*/" /tmp/o1/$tag-$mode.log | awk '{print $1, $2, $NF}' | head -20
    grep -iE "error|illegal|wrong" /tmp/o1/$tag-$mode.log | head -5
  done
}
run conv10 25088 256 1152 TN "ML=128,NL=256,MS=8,NS=16,U=64,$B" "ML=256,NL=128,MS=16,NS=8,U=64,$B" \
  "ML=128,NL=128,MS=16,NS=8,U=64,$B" "ML=128,NL=128,MS=16,NS=8,U=32,$B,ST=8" "ML=64,NL=256,MS=8,NS=16,U=64,$B" \
  "ML=128,NL=128,MS=8,NS=8,U=64,$B" "ML=128,NL=64,MS=8,NS=8,U=64,$B"
run conv9 100352 128 576 TN "ML=128,NL=128,MS=16,NS=8,U=64,VA=8,VB=8,LA=8,LB=8,DB=0,SW=1,ACC=32,TC=2,TMA=1" "ML=256,NL=128,MS=16,NS=8,U=64,$B" \
  "ML=128,NL=128,MS=16,NS=8,U=64,$B" "ML=128,NL=128,MS=16,NS=8,U=32,$B,ST=8" "ML=128,NL=128,MS=8,NS=8,U=64,$B" "ML=128,NL=64,MS=8,NS=8,U=64,$B"
run linpack4096 4096 4096 4096 NT "ML=128,NL=256,MS=8,NS=16,U=64,VA=8,VB=8,LA=16,LB=32,DB=1,SW=8,ACC=32,TC=2,TMA=1" \
  "ML=128,NL=128,MS=16,NS=8,U=64,VA=8,VB=8,LA=16,LB=16,DB=1,SW=8,ACC=32,TC=2,TMA=1" "ML=128,NL=128,MS=16,NS=8,U=32,VA=8,VB=8,LA=16,LB=16,DB=1,SW=8,ACC=32,TC=2,TMA=1,ST=8"
run linpack2048 2048 2048 2048 NT "ML=128,NL=256,MS=16,NS=8,U=64,VA=8,VB=8,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=2,TMA=1" \
  "ML=128,NL=128,MS=16,NS=8,U=64,VA=8,VB=8,LA=16,LB=16,DB=1,SW=1,ACC=32,TC=2,TMA=1" "ML=128,NL=128,MS=16,NS=8,U=32,VA=8,VB=8,LA=16,LB=16,DB=1,SW=1,ACC=32,TC=2,TMA=1,ST=8"
tar cJf "$OUT/call1.tar.xz" -C /tmp/o1 .
echo "=== done $(date -u +%T) $SECONDS s"
