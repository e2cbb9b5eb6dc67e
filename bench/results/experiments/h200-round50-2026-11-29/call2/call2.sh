#!/usr/bin/env bash
# Session 2026-11-29d, call 2: tile loops with the thread's coordinates read per tile (fewer registers).
# The tile-loop, TMA-store and shallow-pipeline GPU tests; then `sets` on QK^T 512 and 2048 with ring depths
# ST=1, 2, 3 (DB=0) and 4 (DB=1), and the LAPACK winners, two rounds.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B="KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=8,SW=1,ACC=32,TC=2,TMA=1"
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
export ISAAC_CACHE_DIR=/tmp/isaac-cache-tests
for t in "*tile loop*" "*C is read and written by TMA*" "*ST=1 and 2*"; do
  echo "=== test $t $(date -u +%T)"
  timeout 120 /tmp/isaac/bin/test_gpu_gemm -tc="$t" > "/tmp/out/test-${t//[^a-z]/}.log" 2>&1; echo "exit $?"; grep -E "ERROR|test cases|MESSAGE: [0-9]+ cases" -A2 "/tmp/out/test-${t//[^a-z]/}.log" | head -12
done
export ISAAC_CACHE_DIR=/tmp/isaac-cache-b
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
for round in 1 2; do
  echo "=== sets 512 $(date -u +%T)"
  timeout 80 /tmp/isaac/bin/isaac-bench-gemm sets 512 512 64 --layout TN --dtype f16 --batch 128 --csv "/tmp/out/sets-qk512-$round.csv" \
    --params "ML=64,NL=128,MS=8,NS=8,U=64,$B,DB=1,ST=1" --params "ML=64,NL=128,MS=8,NS=8,U=64,$B,DB=1,ST=2" \
    --params "ML=64,NL=128,MS=8,NS=8,U=64,$B,DB=0" --params "ML=64,NL=128,MS=8,NS=8,U=64,$B,DB=1" \
    --params "ML=64,NL=128,MS=8,NS=8,U=32,$B,DB=1" --params "ML=128,NL=64,MS=16,NS=4,U=64,$B,DB=1,ST=2" \
    --params "ML=128,NL=64,MS=16,NS=4,U=64,$B,DB=0" --params "ML=64,NL=64,MS=8,NS=4,U=64,$B,DB=1,ST=2" 2>&1 | sed -n "$S"
  echo "=== sets 2048 $(date -u +%T)"
  timeout 80 /tmp/isaac/bin/isaac-bench-gemm sets 2048 2048 128 --layout TN --dtype f16 --batch 32 --csv "/tmp/out/sets-qk2048-$round.csv" \
    --params "ML=128,NL=64,MS=16,NS=4,U=64,$B,DB=1,ST=2" --params "ML=128,NL=64,MS=16,NS=4,U=64,$B,DB=0" \
    --params "ML=128,NL=64,MS=16,NS=4,U=64,$B,DB=1" --params "ML=64,NL=128,MS=8,NS=8,U=64,$B,DB=1,ST=2" \
    --params "ML=64,NL=128,MS=8,NS=8,U=64,$B,DB=0" --params "ML=128,NL=128,MS=16,NS=8,U=64,$B,DB=1,ST=2" \
    --params "ML=128,NL=128,MS=8,NS=8,U=64,$B,DB=0" 2>&1 | sed -n "$S"
  echo "=== sets LAPACK $(date -u +%T)"
  timeout 40 /tmp/isaac/bin/isaac-bench-gemm sets 4096 4096 32 --layout NT --dtype f16 --csv "/tmp/out/sets-lapack4096-$round.csv" \
    --params "ML=64,NL=128,MS=8,NS=8,U=16,KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=16,DB=1,SW=1,ACC=32,TC=2,TMA=1" \
    --params "ML=64,NL=128,MS=8,NS=8,U=32,KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=16,DB=1,SW=1,ACC=32,TC=2,TMA=1" 2>&1 | sed -n "$S"
  timeout 40 /tmp/isaac/bin/isaac-bench-gemm sets 3456 3456 32 --layout NT --dtype f16 --csv "/tmp/out/sets-lapack3456-$round.csv" \
    --params "ML=64,NL=64,MS=8,NS=4,U=32,KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=8,DB=0,SW=8,ACC=32,TC=2,TMA=1" \
    --params "ML=64,NL=64,MS=8,NS=4,U=32,KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=8,DB=1,SW=8,ACC=32,TC=2,TMA=1" 2>&1 | sed -n "$S"
done
tar cJf "$OUT/call2.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T)"
