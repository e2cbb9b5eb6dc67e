#!/usr/bin/env bash
# Session 2026-11-29e, call 1: f64 DMMA on sm_90 as m16n8k16 / m16n8k8 / m16n8k4 (ISAAC_DMMA_DEPTH caps the depth).
# GPU tests (TC=1 GEMM and CONV, depth 16 allowed); then `sets` on the f64 winners at depths 4, 8, 16, two rounds.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
export ISAAC_CACHE_DIR=/tmp/isaac-cache-tests
echo "=== test gemm TC=1 $(date -u +%T)"
timeout 150 /tmp/isaac/bin/test_gpu_gemm -tc="*TC=1: f16, f32 and f64*" > /tmp/out/test-gemm-tc1.log 2>&1; echo "exit $?"; grep -E "ERROR" -A4 /tmp/out/test-gemm-tc1.log | head; tail -3 /tmp/out/test-gemm-tc1.log | head -2
echo "=== test conv TC=1 $(date -u +%T)"
timeout 100 /tmp/isaac/bin/test_gpu_conv -tc="*TC=1*" > /tmp/out/test-conv-tc1.log 2>&1; echo "exit $?"; grep -E "ERROR" -A4 /tmp/out/test-conv-tc1.log | head; tail -3 /tmp/out/test-conv-tc1.log | head -2
P=()
P+=("LINPACK-1024x1024x1024|1024 1024 1024 --layout NT|--params "ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=1,VB=2,LA=64,LB=32,DB=1,SW=1,ACC=32,TC=1" --params "ML=64,NL=64,MS=4,NS=8,U=32,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1" --params "ML=64,NL=64,MS=4,NS=8,U=8,KS=1,KL=1,KG=4,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1"")
P+=("LINPACK-2048x2048x2048|2048 2048 2048 --layout NT|--params "ML=64,NL=128,MS=4,NS=16,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=128,DB=1,SW=8,ACC=32,TC=1" --params "ML=64,NL=64,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1" --params "ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=64,DB=1,SW=1,ACC=32,TC=1"")
P+=("LINPACK-4096x4096x4096|4096 4096 4096 --layout NT|--params "ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=1,VB=2,LA=64,LB=64,DB=1,SW=1,ACC=32,TC=1" --params "ML=64,NL=64,MS=4,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1" --params "ML=64,NL=64,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1"")
P+=("DeepBench-F-2560x64x2560|2560 64 2560 --layout NN|--params "ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=6,VA=1,VB=2,LA=64,LB=8,DB=1,SW=1,ACC=32,TC=1" --params "ML=32,NL=64,MS=4,NS=8,U=32,KS=1,KL=2,KG=3,VA=2,VB=1,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1" --params "ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=1,LA=32,LB=16,DB=1,SW=1,ACC=32,TC=1"")
P+=("DeepBench-F-2560x128x2560|2560 128 2560 --layout NN|--params "ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=2,LA=32,LB=8,DB=1,SW=1,ACC=32,TC=1" --params "ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=1,LA=32,LB=16,DB=1,SW=1,ACC=32,TC=1"")
P+=("DeepBench-B-2560x128x2560|2560 128 2560 --layout TN|--params "ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=2,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=1" --params "ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=1,LA=8,LB=16,DB=1,SW=1,ACC=32,TC=1" --params "ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=4,VA=2,VB=1,LA=8,LB=16,DB=1,SW=1,ACC=32,TC=1"")
P+=("ICA-64x64x60000|64 64 60000 --layout NT|--params "ML=32,NL=32,MS=4,NS=4,U=32,KS=1,KL=2,KG=128,VA=1,VB=2,LA=32,LB=16,DB=1,SW=1,ACC=32,TC=1" --params "ML=32,NL=64,MS=4,NS=4,U=32,KS=1,KL=2,KG=128,VA=2,VB=2,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1" --params "ML=64,NL=64,MS=4,NS=4,U=16,KS=1,KL=1,KG=256,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1"")
P+=("ICA-256x256x60000|256 256 60000 --layout NT|--params "ML=64,NL=64,MS=4,NS=16,U=8,KS=1,KL=1,KG=32,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1" --params "ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=32,VA=2,VB=2,LA=32,LB=64,DB=1,SW=1,ACC=32,TC=1" --params "ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=64,VA=2,VB=2,LA=32,LB=64,DB=1,SW=1,ACC=32,TC=1"")
P+=("LAPACK-4096x4096x32|4096 4096 32 --layout NT|--params "ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1" --params "ML=64,NL=64,MS=2,NS=16,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1" --params "ML=64,NL=64,MS=4,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=64,DB=1,SW=8,ACC=32,TC=1"")
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
for round in 1 2; do
  for entry in "${P[@]}"; do
    IFS='|' read -r name shape params <<< "$entry"
    for d in 4 8 16; do
      [ $round = 2 ] && d=$((20 - d)) && [ $d = 12 ] && d=8
      echo "=== $name depth $d round $round $(date -u +%T)"
      eval "ISAAC_DMMA_DEPTH=$d ISAAC_CACHE_DIR=/tmp/cache-d$d timeout 40 /tmp/isaac/bin/isaac-bench-gemm sets $shape --dtype f64 --csv /tmp/out/sets-$name-d$d-r$round.csv $params" 2>&1 | sed -n "$S"
    done
  done
done
tar cJf "$OUT/call1.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T)"
