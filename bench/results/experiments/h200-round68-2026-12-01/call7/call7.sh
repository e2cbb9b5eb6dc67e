#!/usr/bin/env bash
# Round 68, call 7: tile loops of 128-accumulator tiles of two cooperating groups (128 x 256, 288
# threads; temporary switch ISAAC_X_LOOP_CELLS=128) against their grids on a transformer's QKV and FFN up
# GEMMs; the GPU tile-loop cases with the switch on.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o7
B="VA=8,VB=8,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1"
for shape in "8192 3072 768" "8192 2304 768"; do
  set -- $shape
  for cells in 64 128; do
    ISAAC_X_LOOP_CELLS=$cells ISAAC_CACHE_DIR=/tmp/c7-$cells timeout 30 /tmp/isaac/bin/isaac-bench-gemm sets $1 $2 $3 --layout TN --dtype f16 \
      --params "ML=128,NL=256,MS=8,NS=16,U=64,$B" --params "ML=128,NL=256,MS=8,NS=16,U=32,$B,ST=6" --params "ML=128,NL=256,MS=16,NS=8,U=32,$B,ST=6" \
      --csv "$OUT/sets-$1x$2x$3-$cells.csv" > /tmp/o7/sets-$1x$2x$3-$cells.log 2>&1 || echo "exit $? $shape $cells"
    echo "$shape cells<=$cells: $(grep -E "^(set|cublas)[0-9]*/" /tmp/o7/sets-$1x$2x$3-$cells.log | grep -v "ERROR OCC" | awk '{printf "%s ", $2}')"
  done
done
echo "=== tile-loop cases $(date -u +%T) $SECONDS s"
ISAAC_X_LOOP_CELLS=128 timeout $((170 - SECONDS)) /tmp/isaac/bin/test_gpu_gemm -tc="*tile loops, each block*" > /tmp/o7/test.log 2>&1; echo "exit $?"
grep -E "MESSAGE|test cases|assertions|ERROR" /tmp/o7/test.log | tail -5
tar cJf "$OUT/call7.tar.xz" -C /tmp/o7 .
echo "=== done $(date -u +%T) $SECONDS s"
