#!/usr/bin/env bash
# Session 2026-11-29e, call 3: f64 TC=1 fragments read two at a time (row/column pairs) and C's rows
# stored two at a time. The GEMM GPU suite and CONV's TC=1 cases; then `sets` on the f64 winners of
# every layout but TN (where nothing changes) in three modes, alternating, two rounds:
#   old    ISAAC_NO_DMMA_PAIRS=1 (0.1.34's kernels)
#   pairs  fragments in pairs, C stored one row at a time (ISAAC_NO_PAIR_STORES=1)
#   full   fragments in pairs, C's rows two at a time
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
export ISAAC_CACHE_DIR=/tmp/isaac-cache-tests
echo "=== test gemm $(date -u +%T)"
timeout 280 /tmp/isaac/bin/test_gpu_gemm > /tmp/out/test-gemm.log 2>&1; echo "exit $?"; grep -E "ERROR" -A4 /tmp/out/test-gemm.log | head -20; tail -3 /tmp/out/test-gemm.log | head -2
echo "=== test conv TC=1 $(date -u +%T)"
timeout 100 /tmp/isaac/bin/test_gpu_conv -tc="*TC=1*" > /tmp/out/test-conv-tc1.log 2>&1; echo "exit $?"; grep -E "ERROR" -A4 /tmp/out/test-conv-tc1.log | head; tail -3 /tmp/out/test-conv-tc1.log | head -2
P=()
P+=("LINPACK-512x512x512|512 512 512 --layout NT --batch 1|--params ML=32,NL=32,MS=4,NS=4,U=32,KS=1,KL=2,KG=1,VA=1,VB=2,LA=32,LB=16,DB=1,SW=1,ACC=32,TC=1 --params ML=32,NL=64,MS=4,NS=8,U=64,KS=1,KL=4,KG=1,VA=2,VB=2,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("LINPACK-1024x1024x1024|1024 1024 1024 --layout NT --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=1,VB=2,LA=64,LB=32,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=64,MS=4,NS=8,U=32,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("LINPACK-2048x2048x2048|2048 2048 2048 --layout NT --batch 1|--params ML=64,NL=128,MS=4,NS=16,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=128,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=64,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("LINPACK-4096x4096x4096|4096 4096 4096 --layout NT --batch 1|--params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=1,VB=2,LA=64,LB=64,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=64,MS=4,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1")
P+=("DeepBench-F-2560x16x2560|2560 16 2560 --layout NN --batch 1|--params ML=32,NL=16,MS=2,NS=2,U=16,KS=1,KL=1,KG=8,VA=1,VB=1,LA=32,LB=16,DB=1,SW=1,ACC=32,TC=1 --params ML=32,NL=16,MS=2,NS=4,U=32,KS=1,KL=2,KG=4,VA=2,VB=1,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-F-2560x32x2560|2560 32 2560 --layout NN --batch 1|--params ML=32,NL=32,MS=4,NS=4,U=16,KS=1,KL=2,KG=6,VA=2,VB=1,LA=16,LB=16,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=32,MS=2,NS=8,U=32,KS=1,KL=2,KG=6,VA=2,VB=1,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-F-2560x64x2560|2560 64 2560 --layout NN --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=6,VA=1,VB=2,LA=64,LB=8,DB=1,SW=1,ACC=32,TC=1 --params ML=32,NL=64,MS=4,NS=8,U=32,KS=1,KL=2,KG=3,VA=2,VB=1,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-F-2560x128x2560|2560 128 2560 --layout NN --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=2,LA=32,LB=8,DB=1,SW=1,ACC=32,TC=1")
P+=("ICA-32x32x60000|32 32 60000 --layout NT --batch 1|--params ML=16,NL=16,MS=2,NS=2,U=64,KS=1,KL=4,KG=64,VA=1,VB=2,LA=16,LB=8,DB=1,SW=8,ACC=32,TC=1 --params ML=32,NL=32,MS=4,NS=2,U=64,KS=1,KL=1,KG=128,VA=2,VB=2,LA=16,LB=16,DB=1,SW=1,ACC=32,TC=1")
P+=("ICA-64x64x60000|64 64 60000 --layout NT --batch 1|--params ML=32,NL=32,MS=4,NS=4,U=32,KS=1,KL=2,KG=128,VA=1,VB=2,LA=32,LB=16,DB=1,SW=1,ACC=32,TC=1 --params ML=32,NL=64,MS=4,NS=4,U=32,KS=1,KL=2,KG=128,VA=2,VB=2,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("ICA-256x256x60000|256 256 60000 --layout NT --batch 1|--params ML=64,NL=64,MS=4,NS=16,U=8,KS=1,KL=1,KG=32,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=32,VA=2,VB=2,LA=32,LB=64,DB=1,SW=1,ACC=32,TC=1")
P+=("LAPACK-4096x4096x32|4096 4096 32 --layout NT --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=64,MS=2,NS=16,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1")
P+=("LAPACK-3456x3456x32|3456 3456 32 --layout NT --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=64,MS=4,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=64,DB=1,SW=8,ACC=32,TC=1")
P+=("LAPACK-896x896x32|896 896 32 --layout NT --batch 1|--params ML=32,NL=32,MS=2,NS=4,U=16,KS=1,KL=1,KG=1,VA=2,VB=2,LA=16,LB=16,DB=1,SW=8,ACC=32,TC=1 --params ML=32,NL=64,MS=2,NS=8,U=8,KS=1,KL=1,KG=1,VA=1,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("b128-64x512x512|64 512 512 --layout NN --batch 128|--params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=8,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=8,DB=1,SW=8,ACC=32,TC=1")
P+=("b32-128x2048x2048|128 2048 2048 --layout NN --batch 32|--params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=8,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=4,DB=1,SW=8,ACC=32,TC=1")
P+=("b4096-16x16x16|16 16 16 --layout NN --batch 4096|--params ML=16,NL=16,MS=2,NS=4,U=16,KS=1,KL=1,KG=1,VA=1,VB=1,LA=16,LB=16,DB=0,SW=8,ACC=32,TC=1 --params ML=16,NL=16,MS=2,NS=2,U=16,KS=1,KL=1,KG=1,VA=1,VB=1,LA=16,LB=16,DB=0,SW=8,ACC=32,TC=1")
P+=("b4096-32x32x32|32 32 32 --layout NN --batch 4096|--params ML=32,NL=32,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=1,VB=1,LA=32,LB=16,DB=0,SW=8,ACC=32,TC=1 --params ML=32,NL=32,MS=4,NS=4,U=16,KS=1,KL=1,KG=1,VA=1,VB=1,LA=32,LB=16,DB=0,SW=8,ACC=32,TC=1")
P+=("b1024-64x64x64|64 64 64 --layout NN --batch 1024|--params ML=64,NL=64,MS=4,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=8,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=64,MS=8,NS=4,U=16,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=16,DB=1,SW=8,ACC=32,TC=1")
P+=("b256-128x128x128|128 128 128 --layout NN --batch 256|--params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=1,VB=1,LA=64,LB=8,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=8,DB=1,SW=8,ACC=32,TC=1")
P+=("b64-256x256x256|256 256 256 --layout NN --batch 64|--params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=8,DB=1,SW=8,ACC=32,TC=1 --params ML=128,NL=64,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=64,LB=4,DB=1,SW=8,ACC=32,TC=1")
P+=("b64-1024x16x1024|1024 16 1024 --layout NN --batch 64|--params ML=128,NL=16,MS=8,NS=4,U=32,KS=1,KL=2,KG=1,VA=2,VB=1,LA=64,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("b32-4096x64x256|4096 64 256 --layout NT --batch 32|--params ML=128,NL=64,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=64,LB=32,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1")
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
run() {  # mode name shape params
  local env=""
  case $1 in old) env="ISAAC_NO_DMMA_PAIRS=1";; pairs) env="ISAAC_NO_PAIR_STORES=1";; full) env="";; esac
  eval "$env ISAAC_CACHE_DIR=/tmp/cache-$1 timeout 40 /tmp/isaac/bin/isaac-bench-gemm sets $3 --dtype f64 --csv /tmp/out/sets-$2-$1-r$round.csv $4" 2>&1 | sed -n "$S"
}
for round in 1 2; do
  for entry in "${P[@]}"; do
    IFS='|' read -r name shape params <<< "$entry"
    modes="old pairs full"; [ $round = 2 ] && modes="full pairs old"
    for mode in $modes; do
      echo "=== $name $mode round $round $(date -u +%T)"
      run $mode "$name" "$shape" "$params"
    done
  done
done
tar cJf "$OUT/call3.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T)"
