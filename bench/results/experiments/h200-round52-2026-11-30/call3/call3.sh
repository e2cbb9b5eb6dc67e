#!/usr/bin/env bash
# Session 2026-11-30 (round 52), call 3 (0.1.34, no switch): K splits that fill the SMs exactly on the
# ICA rows, whose grids hold a few tiles: KG = resident blocks / tiles (132 SMs) beside the space's KG.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
export ISAAC_CACHE_DIR=/tmp/cache
F16A="ML=128,NL=128,MS=16,NS=8,U=64,KS=1,KL=1,VA=8,VB=8,LA=16,LB=16,DB=1,SW=1,ACC=32,TC=2,TMA=1,ST=6"
F16B="ML=128,NL=64,MS=16,NS=4,U=64,KS=1,KL=1,VA=8,VB=8,LA=16,LB=8,DB=1,SW=8,ACC=32,TC=2,TMA=1,ST=8"
F32="ML=128,NL=128,MS=8,NS=8,U=32,KS=1,KL=1,VA=4,VB=4,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=2"
F64="ML=64,NL=64,MS=4,NS=16,U=8,KS=1,KL=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1"
F16S="ML=64,NL=64,MS=8,NS=4,U=64,KS=1,KL=1,VA=8,VB=8,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1,ST=12"
F16T="ML=64,NL=32,MS=8,NS=2,U=64,KS=1,KL=1,VA=8,VB=8,LA=8,LB=4,DB=1,SW=1,ACC=32,TC=2,TMA=1,ST=15"
for round in 1 2; do
  echo "=== round $round $(date -u +%T)"
  timeout 100 /tmp/isaac/bin/isaac-bench-gemm sets 256 256 60000 --layout NT --dtype f16 --lt-algorithms 4 --csv /tmp/out/sets-f16-ica256-r$round.csv \
    --params "$F16A,KG=24" --params "$F16A,KG=32" --params "$F16A,KG=33" --params "$F16B,KG=16" --params "$F16B,KG=15" 2>&1 | sed -n "$S"
  timeout 100 /tmp/isaac/bin/isaac-bench-gemm sets 256 256 60000 --layout NT --dtype f32 --lt-algorithms 4 --csv /tmp/out/sets-f32-ica256-r$round.csv \
    --params "$F32,KG=32" --params "$F32,KG=33" 2>&1 | sed -n "$S"
  timeout 100 /tmp/isaac/bin/isaac-bench-gemm sets 256 256 60000 --layout NT --dtype f64 --lt-algorithms 4 --csv /tmp/out/sets-f64-ica256-r$round.csv \
    --params "$F64,KG=32" --params "$F64,KG=41" --params "$F64,KG=40" 2>&1 | sed -n "$S"
  timeout 100 /tmp/isaac/bin/isaac-bench-gemm sets 64 64 60000 --layout NT --dtype f16 --lt-algorithms 4 --csv /tmp/out/sets-f16-ica64-r$round.csv \
    --params "$F16S,KG=48" --params "$F16S,KG=66" --params "$F16S,KG=132" 2>&1 | sed -n "$S"
  timeout 100 /tmp/isaac/bin/isaac-bench-gemm sets 32 32 60000 --layout NT --dtype f16 --lt-algorithms 4 --csv /tmp/out/sets-f16-ica32-r$round.csv \
    --params "$F16T,KG=64" --params "$F16T,KG=132" 2>&1 | sed -n "$S"
done
tar cJf "$OUT/call3.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
