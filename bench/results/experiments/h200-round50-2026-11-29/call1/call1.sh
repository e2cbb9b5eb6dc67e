#!/usr/bin/env bash
# Session 2026-11-29d, call 1: tile loops (TMA=1 where TMA moves C, <= 4 K tiles per block, more tiles than SMs).
# B = .bundle (this tree), A = .bundle-a (0.1.33's committed build). B's tile-loop GPU test, then per build,
# alternating a b a b, `sets` on f16 QK^T 128 x 512x512x64, 32 x 2048x2048x128 and the LAPACK 4096/3456 winners.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B="KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=8,SW=1,ACC=32,TC=2,TMA=1"
rm -rf /tmp/isaac /tmp/isaac-a && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/a && tar xf .bundle-a/isaac-a.tar.xz -C /tmp/a && mv /tmp/a/isaac /tmp/isaac-a
mkdir -p /tmp/out
export ISAAC_CACHE_DIR=/tmp/isaac-cache-tests
echo "=== b: the tile-loop test $(date -u +%T)"
timeout 150 /tmp/isaac/bin/test_gpu_gemm -tc="*tile loop*" > /tmp/out/test-tile-loop.log 2>&1; echo "exit $?"; grep -E "ERROR|test cases|cases|compiled|CHECK" -A3 /tmp/out/test-tile-loop.log | head -30
for round in 1 2; do
for build in a b; do
  dir=/tmp/isaac$([[ $build == a ]] && echo -a)
  export ISAAC_CACHE_DIR=/tmp/isaac-cache-$build
  echo "=== $build: sets 512 $(date -u +%T)"
  timeout 60 $dir/bin/isaac-bench-gemm sets 512 512 64 --layout TN --dtype f16 --batch 128 --csv "/tmp/out/sets-qk512-$build$round.csv" \
    --params "ML=64,NL=128,MS=8,NS=8,U=64,$B,DB=1,ST=1" --params "ML=128,NL=64,MS=16,NS=4,U=64,$B,DB=1,ST=1" \
    --params "ML=128,NL=128,MS=8,NS=8,U=64,$B,DB=1,ST=1" --params "ML=64,NL=64,MS=8,NS=4,U=64,$B,DB=1,ST=1" 2>&1 | sed -n '/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
  echo "=== $build: sets 2048 $(date -u +%T)"
  timeout 60 $dir/bin/isaac-bench-gemm sets 2048 2048 128 --layout TN --dtype f16 --batch 32 --csv "/tmp/out/sets-qk2048-$build$round.csv" \
    --params "ML=128,NL=128,MS=16,NS=8,U=64,$B,DB=1,ST=2" --params "ML=64,NL=128,MS=8,NS=8,U=64,$B,DB=1,ST=2" \
    --params "ML=128,NL=128,MS=8,NS=8,U=64,$B,DB=1,ST=2" --params "ML=128,NL=64,MS=16,NS=4,U=64,$B,DB=1,ST=2" 2>&1 | sed -n '/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
  echo "=== $build: sets LAPACK $(date -u +%T)"
  timeout 40 $dir/bin/isaac-bench-gemm sets 4096 4096 32 --layout NT --dtype f16 --csv "/tmp/out/sets-lapack4096-$build$round.csv" \
    --params "ML=64,NL=128,MS=8,NS=8,U=16,KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=16,DB=1,SW=1,ACC=32,TC=2,TMA=1" 2>&1 | sed -n '/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
  timeout 40 $dir/bin/isaac-bench-gemm sets 3456 3456 32 --layout NT --dtype f16 --csv "/tmp/out/sets-lapack3456-$build$round.csv" \
    --params "ML=64,NL=64,MS=8,NS=4,U=32,KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=8,DB=0,SW=8,ACC=32,TC=2,TMA=1" 2>&1 | sed -n '/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
done
done
tar cJf "$OUT/call1.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T)"
