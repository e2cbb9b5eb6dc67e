#!/usr/bin/env bash
# Session 2026-11-29e, call 6 (experiment switch ISAAC_F64_COPY, not committed): where an f64 TC=1 stage
# issues the cp.async copies of the stage S - 1 ahead. base: before the stage's fragments (0.1.34);
# after: after its last mma; mid: after its first 4-deep step. Nsight Compute's source view of the
# f64 LINPACK 4096 winner (call 4) put 4.7% of the stall samples on the stage's first shared load,
# waiting for a register that the copies had just used as an address. `sets` on the f64 winners of the
# paper's rows and the batched ones, three modes alternating, two rounds; every kernel is checked
# against the float64 reference before it is timed.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
P=()
P+=("LINPACK-512x512x512-NT|512 512 512 --layout NT --batch 1|--params ML=32,NL=32,MS=4,NS=4,U=32,KS=1,KL=2,KG=1,VA=1,VB=2,LA=32,LB=16,DB=1,SW=1,ACC=32,TC=1 --params ML=32,NL=64,MS=4,NS=8,U=64,KS=1,KL=4,KG=1,VA=2,VB=2,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("LINPACK-1024x1024x1024-NT|1024 1024 1024 --layout NT --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=1,VB=2,LA=64,LB=32,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=64,MS=4,NS=8,U=32,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("LINPACK-2048x2048x2048-NT|2048 2048 2048 --layout NT --batch 1|--params ML=64,NL=128,MS=4,NS=16,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=128,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=64,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("LINPACK-4096x4096x4096-NT|4096 4096 4096 --layout NT --batch 1|--params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=1,VB=2,LA=64,LB=64,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=64,MS=4,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1")
P+=("DeepBench-F-2560x16x2560-NN|2560 16 2560 --layout NN --batch 1|--params ML=32,NL=16,MS=2,NS=2,U=16,KS=1,KL=1,KG=8,VA=1,VB=1,LA=32,LB=16,DB=1,SW=1,ACC=32,TC=1 --params ML=32,NL=16,MS=2,NS=4,U=32,KS=1,KL=2,KG=4,VA=2,VB=1,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-F-2560x32x2560-NN|2560 32 2560 --layout NN --batch 1|--params ML=32,NL=32,MS=4,NS=4,U=16,KS=1,KL=2,KG=6,VA=2,VB=1,LA=16,LB=16,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=32,MS=2,NS=8,U=32,KS=1,KL=2,KG=6,VA=2,VB=1,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-F-2560x64x2560-NN|2560 64 2560 --layout NN --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=6,VA=1,VB=2,LA=64,LB=8,DB=1,SW=1,ACC=32,TC=1 --params ML=32,NL=64,MS=4,NS=8,U=32,KS=1,KL=2,KG=3,VA=2,VB=1,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-F-2560x128x2560-NN|2560 128 2560 --layout NN --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=2,LA=32,LB=8,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-B-2560x16x2560-TN|2560 16 2560 --layout TN --batch 1|--params ML=64,NL=16,MS=2,NS=4,U=32,KS=1,KL=2,KG=5,VA=2,VB=2,LA=16,LB=16,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=16,MS=4,NS=4,U=16,KS=1,KL=2,KG=10,VA=2,VB=1,LA=8,LB=16,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-B-2560x32x2560-TN|2560 32 2560 --layout TN --batch 1|--params ML=64,NL=32,MS=4,NS=4,U=32,KS=1,KL=1,KG=8,VA=2,VB=2,LA=16,LB=16,DB=0,SW=1,ACC=32,TC=1 --params ML=64,NL=32,MS=4,NS=4,U=32,KS=1,KL=1,KG=6,VA=2,VB=1,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-B-2560x64x2560-TN|2560 64 2560 --layout TN --batch 1|--params ML=64,NL=32,MS=2,NS=8,U=64,KS=1,KL=1,KG=3,VA=2,VB=2,LA=32,LB=32,DB=0,SW=1,ACC=32,TC=1 --params ML=32,NL=64,MS=4,NS=8,U=32,KS=1,KL=2,KG=3,VA=2,VB=1,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-B-2560x128x2560-TN|2560 128 2560 --layout TN --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=2,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=1,LA=8,LB=16,DB=1,SW=1,ACC=32,TC=1")
P+=("ICA-32x32x60000-NT|32 32 60000 --layout NT --batch 1|--params ML=16,NL=16,MS=2,NS=2,U=64,KS=1,KL=4,KG=64,VA=1,VB=2,LA=16,LB=8,DB=1,SW=8,ACC=32,TC=1 --params ML=32,NL=32,MS=4,NS=2,U=64,KS=1,KL=1,KG=128,VA=2,VB=2,LA=16,LB=16,DB=1,SW=1,ACC=32,TC=1")
P+=("ICA-64x64x60000-NT|64 64 60000 --layout NT --batch 1|--params ML=32,NL=32,MS=4,NS=4,U=32,KS=1,KL=2,KG=128,VA=1,VB=2,LA=32,LB=16,DB=1,SW=1,ACC=32,TC=1 --params ML=32,NL=64,MS=4,NS=4,U=32,KS=1,KL=2,KG=128,VA=2,VB=2,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("ICA-256x256x60000-NT|256 256 60000 --layout NT --batch 1|--params ML=64,NL=64,MS=4,NS=16,U=8,KS=1,KL=1,KG=32,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=32,VA=2,VB=2,LA=32,LB=64,DB=1,SW=1,ACC=32,TC=1")
P+=("LAPACK-4096x4096x32-NT|4096 4096 32 --layout NT --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=64,MS=2,NS=16,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1")
P+=("LAPACK-3456x3456x32-NT|3456 3456 32 --layout NT --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=64,MS=4,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=64,DB=1,SW=8,ACC=32,TC=1")
P+=("LAPACK-896x896x32-NT|896 896 32 --layout NT --batch 1|--params ML=32,NL=32,MS=2,NS=4,U=16,KS=1,KL=1,KG=1,VA=2,VB=2,LA=16,LB=16,DB=1,SW=8,ACC=32,TC=1 --params ML=32,NL=64,MS=2,NS=8,U=8,KS=1,KL=1,KG=1,VA=1,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("b128-512x512x64-TN|512 512 64 --layout TN --batch 128|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=1,VB=2,LA=16,LB=8,DB=1,SW=8,ACC=32,TC=1")
P+=("b128-64x512x512-NN|64 512 512 --layout NN --batch 128|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=8,DB=1,SW=8,ACC=32,TC=1")
P+=("b32-2048x2048x128-TN|2048 2048 128 --layout TN --batch 32|--params ML=128,NL=64,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=1,VB=2,LA=8,LB=4,DB=1,SW=8,ACC=32,TC=1")
P+=("b32-128x2048x2048-NN|128 2048 2048 --layout NN --batch 32|--params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=4,DB=1,SW=8,ACC=32,TC=1")
P+=("b4096-16x16x16-NN|16 16 16 --layout NN --batch 4096|--params ML=16,NL=16,MS=2,NS=2,U=16,KS=1,KL=1,KG=1,VA=1,VB=1,LA=16,LB=16,DB=0,SW=8,ACC=32,TC=1")
P+=("b4096-32x32x32-NN|32 32 32 --layout NN --batch 4096|--params ML=32,NL=32,MS=4,NS=4,U=16,KS=1,KL=1,KG=1,VA=1,VB=1,LA=32,LB=16,DB=0,SW=8,ACC=32,TC=1")
P+=("b1024-64x64x64-NN|64 64 64 --layout NN --batch 1024|--params ML=64,NL=64,MS=8,NS=4,U=16,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=16,DB=1,SW=8,ACC=32,TC=1")
P+=("b256-128x128x128-NN|128 128 128 --layout NN --batch 256|--params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=8,DB=1,SW=8,ACC=32,TC=1")
P+=("b64-256x256x256-NN|256 256 256 --layout NN --batch 64|--params ML=128,NL=64,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=64,LB=4,DB=1,SW=8,ACC=32,TC=1")
P+=("b64-1024x16x1024-NN|1024 16 1024 --layout NN --batch 64|--params ML=128,NL=16,MS=8,NS=4,U=32,KS=1,KL=2,KG=1,VA=2,VB=1,LA=64,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("b32-4096x64x256-NT|4096 64 256 --layout NT --batch 32|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1")
P+=("b16-256x256x4096-TN|256 256 4096 --layout TN --batch 16|--params ML=128,NL=128,MS=8,NS=8,U=16,KS=1,KL=1,KG=4,VA=2,VB=2,LA=8,LB=8,DB=1,SW=8,ACC=32,TC=1")
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
for round in 1 2; do
  for entry in "${P[@]}"; do
    IFS='|' read -r name shape params <<< "$entry"
    modes="base after mid"; [ $round = 2 ] && modes="mid after base"
    for mode in $modes; do
      if [ $mode = base ]; then unset ISAAC_F64_COPY; else export ISAAC_F64_COPY=$mode; fi
      echo "=== $name $mode round $round $(date -u +%T)"
      eval "ISAAC_CACHE_DIR=/tmp/cache-$mode timeout 30 /tmp/isaac/bin/isaac-bench-gemm sets $shape --dtype f64 --lt-algorithms 4 --csv /tmp/out/sets-$name-$mode-r$round.csv $params" 2>&1 | sed -n "$S" | grep -v 'TFLOP/s  '
    done
  done
done
tar cJf "$OUT/call6.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T)"
