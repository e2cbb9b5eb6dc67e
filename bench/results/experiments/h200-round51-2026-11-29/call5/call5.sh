#!/usr/bin/env bash
# Session 2026-11-29e, call 5 (experiment switches, not committed): tile loops of 128-accumulator tiles
# with two consumer warp groups (256 x 128, 128 x 256) and a producer warp: 288 threads at 167-168
# registers (ptxas, no spills), one block per SM. "big" = ISAAC_PRODUCER_FORCE=1 ISAAC_LOOP_ROWS=256
# ISAAC_LOOP_CELLS=128 (the rule's producer-register check and its 128-row / 64-cell caps lifted);
# "base" = the committed rule (those sets as plain grids). `sets` checks every kernel against the
# float64 reference before timing it.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
B="KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1"
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
run() {  # mode name args...
  local mode=$1 name=$2; shift 2
  if [ $mode = big ]; then export ISAAC_PRODUCER_FORCE=1 ISAAC_LOOP_ROWS=256 ISAAC_LOOP_CELLS=128; else unset ISAAC_PRODUCER_FORCE ISAAC_LOOP_ROWS ISAAC_LOOP_CELLS; fi
  echo "=== $name $mode round $round $(date -u +%T)"
  ISAAC_CACHE_DIR=/tmp/cache-$mode timeout 60 /tmp/isaac/bin/isaac-bench-gemm sets "$@" --csv /tmp/out/sets-$name-$mode-r$round.csv 2>&1 | sed -n "$S"
}
for round in 1 2; do
  modes="base big"; [ $round = 2 ] && modes="big base"
  for mode in $modes; do
    run $mode qk2048 2048 2048 128 --batch 32 --layout TN --dtype f16 \
      --params "ML=128,NL=128,MS=16,NS=8,U=64,$B,ST=2" --params "ML=256,NL=128,MS=16,NS=8,U=64,$B,ST=2" \
      --params "ML=128,NL=256,MS=16,NS=8,U=64,$B,ST=2" --params "ML=128,NL=256,MS=8,NS=16,U=64,$B,ST=2"
    run $mode qk512 512 512 64 --batch 128 --layout TN --dtype f16 \
      --params "ML=128,NL=128,MS=8,NS=8,U=64,$B,ST=1" --params "ML=64,NL=128,MS=8,NS=8,U=64,$B,ST=2" \
      --params "ML=256,NL=128,MS=16,NS=8,U=64,$B,ST=2" --params "ML=128,NL=256,MS=16,NS=8,U=64,$B,ST=2" \
      --params "ML=128,NL=256,MS=8,NS=16,U=64,$B,ST=2"
    run $mode lapack4096 4096 4096 32 --layout NT --dtype f16 \
      --params "ML=64,NL=128,MS=8,NS=8,U=16,KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=16,DB=1,SW=1,ACC=32,TC=2,TMA=1" \
      --params "ML=128,NL=128,MS=8,NS=8,U=32,$B,ST=2" --params "ML=256,NL=128,MS=16,NS=8,U=32,$B,ST=2" \
      --params "ML=128,NL=256,MS=8,NS=16,U=32,$B,ST=2" --params "ML=128,NL=256,MS=16,NS=8,U=32,$B,ST=2"
    run $mode lapack3456 3456 3456 32 --layout NT --dtype f16 \
      --params "ML=64,NL=128,MS=8,NS=8,U=32,$B,ST=2" --params "ML=256,NL=128,MS=16,NS=8,U=32,$B,ST=2" \
      --params "ML=128,NL=256,MS=8,NS=16,U=32,$B,ST=2"
  done
done
tar cJf "$OUT/call5.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T)"
