#!/usr/bin/env bash
# Session 2026-11-29e, call 4 (the committed 0.1.34 kernels): Nsight Compute's source view (SASS with
# per-instruction stall samples) of the f64 LINPACK 4096 winner; and the sections of the f16 QK^T
# 32 x 2048 x 2048 x 128 winner beside cuBLAS's kernel.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$ncu" --version | tail -1
export ISAAC_CACHE_DIR=/tmp/cache
W64="ML=64,NL=128,MS=8,NS=8,U=8,KS=1,KL=1,KG=1,VA=1,VB=2,LA=64,LB=64,DB=1,SW=1,ACC=32,TC=1"
echo "=== f64 source $(date -u +%T)"
timeout 200 "$ncu" --section SourceCounters --section WarpStateStats --import-source no -k regex:'^isaac_gemm' -c 1 \
  -o /tmp/out/f64-linpack4096 -f /tmp/isaac/bin/isaac-bench-gemm sets 4096 4096 4096 --layout NT --dtype f64 --repeats 2 \
  --lt-algorithms 1 --csv /tmp/out/x.csv --params "$W64" > /tmp/out/ncu-f64.log 2>&1; echo "exit $?"; tail -3 /tmp/out/ncu-f64.log
timeout 60 "$ncu" -i /tmp/out/f64-linpack4096.ncu-rep --page source --print-source sass --csv > /tmp/out/f64-linpack4096-sass.csv 2>&1; echo "source exit $?"; wc -l /tmp/out/f64-linpack4096-sass.csv; head -3 /tmp/out/f64-linpack4096-sass.csv | cut -c1-600
W16="ML=128,NL=128,MS=16,NS=8,U=64,KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1,ST=2"
echo "=== f16 QK^T sections $(date -u +%T)"
timeout 200 "$ncu" --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
  --section LaunchStats --section SchedulerStats -k regex:'^(isaac_gemm|nvjet|sm90|cutlass)' \
  /tmp/isaac/bin/isaac-bench-gemm sets 2048 2048 128 --batch 32 --layout TN --dtype f16 --repeats 2 --lt-algorithms 4 \
  --csv /tmp/out/y.csv --params "$W16" > /tmp/out/ncu-qk2048.txt 2> /tmp/out/ncu-qk2048.err; echo "exit $?"
grep -E "^  [a-zA-Z_]|Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|SM Busy|Registers Per|Achieved Occupancy|Block Size|Grid Size|Dynamic Shared" /tmp/out/ncu-qk2048.txt | head -80
tar cJf "$OUT/call4.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T)"
