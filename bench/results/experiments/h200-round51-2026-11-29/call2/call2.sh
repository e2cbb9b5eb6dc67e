#!/usr/bin/env bash
# Session 2026-11-29e, call 2 (experiment build: register margin -40 instead of 46, not committed):
# f64 DMMA sets with U = 16 on 8 x 8 thread tiles (now refused by the register margin) against the
# winners, two rounds; then Nsight Compute on the f64 LINPACK 4096 winner and cuBLAS (warp states).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
P=()
P+=("LINPACK-2048x2048x2048|2048 2048 2048 --layout NT --batch 1|--params ML=64,NL=128,MS=4,NS=16,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=128,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=64,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=16,KG=1,LA=32,LB=64,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1 --params ML=128,NL=64,MS=8,NS=8,U=16,KG=1,LA=64,LB=32,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1 --params ML=128,NL=128,MS=8,NS=8,U=16,KG=1,LA=64,LB=64,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1")
P+=("LINPACK-4096x4096x4096|4096 4096 4096 --layout NT --batch 1|--params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=1,VB=2,LA=64,LB=64,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=64,MS=4,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=32,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=16,KG=1,LA=32,LB=64,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1 --params ML=128,NL=64,MS=8,NS=8,U=16,KG=1,LA=64,LB=32,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1 --params ML=128,NL=128,MS=8,NS=8,U=16,KG=1,LA=64,LB=64,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1 --params ML=128,NL=128,MS=8,NS=8,U=8,KG=1,LA=64,LB=64,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-F-2560x128x2560|2560 128 2560 --layout NN --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=2,LA=32,LB=8,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=16,KG=4,LA=32,LB=8,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=16,KG=8,LA=32,LB=8,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1")
P+=("DeepBench-B-2560x128x2560|2560 128 2560 --layout TN --batch 1|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=2,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=8,VA=2,VB=1,LA=8,LB=16,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=16,KG=4,LA=8,LB=8,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1")
P+=("ICA-256x256x60000|256 256 60000 --layout NT --batch 1|--params ML=64,NL=64,MS=4,NS=16,U=8,KS=1,KL=1,KG=32,VA=2,VB=2,LA=32,LB=32,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=32,VA=2,VB=2,LA=32,LB=64,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=16,KG=32,LA=32,LB=64,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1 --params ML=128,NL=128,MS=8,NS=8,U=16,KG=32,LA=64,LB=64,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1")
P+=("b32-2048x2048x128|2048 2048 128 --layout TN --batch 32|--params ML=64,NL=64,MS=4,NS=8,U=16,KS=1,KL=1,KG=1,VA=1,VB=1,LA=16,LB=16,DB=1,SW=8,ACC=32,TC=1 --params ML=128,NL=64,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=1,VB=2,LA=8,LB=4,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=16,KG=1,LA=8,LB=8,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1 --params ML=128,NL=64,MS=8,NS=8,U=16,KG=1,LA=8,LB=8,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1")
P+=("b32-128x2048x2048|128 2048 2048 --layout NN --batch 32|--params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=8,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=32,LB=4,DB=1,SW=8,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=16,KG=1,LA=32,LB=8,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1")
P+=("b64-256x256x256|256 256 256 --layout NN --batch 64|--params ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=1,LA=32,LB=8,DB=1,SW=8,ACC=32,TC=1 --params ML=128,NL=64,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=2,VB=2,LA=64,LB=4,DB=1,SW=8,ACC=32,TC=1 --params ML=128,NL=64,MS=8,NS=8,U=16,KG=1,LA=64,LB=4,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1 --params ML=64,NL=128,MS=8,NS=8,U=16,KG=1,LA=32,LB=8,KS=1,KL=1,VA=2,VB=2,DB=1,SW=1,ACC=32,TC=1")
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
export ISAAC_CACHE_DIR=/tmp/cache-sets
for round in 1 2; do
  for entry in "${P[@]}"; do
    IFS='|' read -r name shape params <<< "$entry"
    echo "=== $name round $round $(date -u +%T)"
    eval "timeout 60 /tmp/isaac/bin/isaac-bench-gemm sets $shape --dtype f64 --csv /tmp/out/sets-$name-r$round.csv $params" 2>&1 | sed -n "$S"
  done
done
echo "=== ncu $(date -u +%T)"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
{ head -1 bench/results/gemm-sweep-winners.csv; grep "^f64,LINPACK,4096," bench/results/gemm-sweep-winners.csv; } > /tmp/one.csv
timeout 240 "$ncu" --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats \
  --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis -k regex:'^(isaac_gemm|nvjet|sm90|cutlass|sm80)' \
  /tmp/isaac/bin/isaac-bench-gemm run --winners /tmp/one.csv --dtypes f64 --repeats 2 --peak-size 256 --csv /tmp/one-out.csv > /tmp/out/ncu-f64-linpack4096.txt 2> /tmp/out/ncu.err
echo "ncu exit $?"
grep -E "^  [a-zA-Z_]|Duration|SM Busy|Issue Slots Busy|Executed Instructions  |Registers Per|Achieved Occupancy|Stall|Warp Cycles Per Issued" /tmp/out/ncu-f64-linpack4096.txt | head -60
tar cJf "$OUT/call2.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T)"
