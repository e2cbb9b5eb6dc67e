#!/usr/bin/env bash
# Session 2026-11-30 (round 52), call 2 (experiment switch ISAAC_LOOP_LONG, not committed): tile loops
# for long K. Mode 1 lifts the tile loop's caps (4 K tiles per block, 128 rows, 64 accumulators) and,
# for tiles of 128 x 128 or more, the producer warp's register check; mode 0 is 0.1.34. Tiles of
# 128 x 256 take ST=6 at U=32 (4 stages of U=64 and C's staging exceed the shared memory).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
B="KS=1,KL=1,KG=1,VA=8,VB=8,LA=16,LB=32,DB=1,SW=8,ACC=32,TC=2,TMA=1"
C="KS=1,KL=1,KG=1,VA=8,VB=8,LA=16,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1"
run() {  # mode name args...
  local mode=$1 name=$2; shift 2
  echo "=== $name mode $mode round $round $(date -u +%T)"
  ISAAC_LOOP_LONG=$mode ISAAC_CACHE_DIR=/tmp/cache-$mode timeout 100 /tmp/isaac/bin/isaac-bench-gemm sets "$@" --lt-algorithms 4 --csv /tmp/out/sets-$name-$mode-r$round.csv 2>&1 | sed -n "$S"
}
for round in 1 2; do
  modes="0 1"; [ $round = 2 ] && modes="1 0"
  for mode in $modes; do
    run $mode linpack4096 4096 4096 4096 --layout NT --dtype f16 \
      --params "ML=128,NL=256,MS=8,NS=16,U=64,$B" --params "ML=128,NL=256,MS=16,NS=8,U=64,$B" \
      --params "ML=128,NL=256,MS=8,NS=16,U=32,$B,ST=6" --params "ML=128,NL=256,MS=16,NS=8,U=32,$B,ST=6" \
      --params "ML=256,NL=128,MS=16,NS=8,U=32,$B,ST=6" \
      --params "ML=128,NL=128,MS=8,NS=8,U=64,$B" --params "ML=128,NL=128,MS=8,NS=8,U=64,$B,ST=5"
    run $mode pv2048 128 2048 2048 --batch 32 --layout NN --dtype f16 \
      --params "ML=128,NL=256,MS=16,NS=8,U=64,$C" --params "ML=128,NL=256,MS=16,NS=8,U=32,$C,ST=6" \
      --params "ML=128,NL=128,MS=8,NS=8,U=64,$C" --params "ML=128,NL=128,MS=8,NS=8,U=64,$C,ST=5"
  done
done
echo "=== test_gpu_gemm tile loops, mode 1 $(date -u +%T)"
ISAAC_LOOP_LONG=1 ISAAC_CACHE_DIR=/tmp/tcache timeout 150 /tmp/isaac/bin/test_gpu_gemm -tc="*tile loops*" > /tmp/out/test-loops.log 2>&1; echo "exit $?"; grep -E "ERROR" -A4 /tmp/out/test-loops.log | head; tail -3 /tmp/out/test-loops.log | head -2
tar cJf "$OUT/call2.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
