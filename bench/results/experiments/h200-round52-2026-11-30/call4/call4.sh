#!/usr/bin/env bash
# Session 2026-11-30 (round 52), call 4 (0.1.34): Nsight Compute's source view (SASS with stall samples)
# of f16 QK^T 32 x 2048 x 2048 x 128: isaac's winner (128 x 128 grid, ST=2) and cuBLAS's nvjet kernels.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
export ISAAC_CACHE_DIR=/tmp/cache
W16="ML=128,NL=128,MS=16,NS=8,U=64,KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1,ST=2"
echo "=== isaac $(date -u +%T)"
timeout 200 "$ncu" --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy --import-source no -k regex:'^isaac_gemm' -c 1 \
  -o /tmp/out/qk-isaac -f /tmp/isaac/bin/isaac-bench-gemm sets 2048 2048 128 --batch 32 --layout TN --dtype f16 --repeats 2 \
  --lt-algorithms 1 --csv /tmp/out/x.csv --params "$W16" > /tmp/out/ncu-isaac.log 2>&1; echo "exit $?"; tail -2 /tmp/out/ncu-isaac.log
echo "=== cublas $(date -u +%T)"
timeout 250 "$ncu" --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy --import-source no -k regex:'^nvjet' -c 1 \
  -o /tmp/out/qk-cublas -f /tmp/isaac/bin/isaac-bench-gemm sets 2048 2048 128 --batch 32 --layout TN --dtype f16 --repeats 2 \
  --lt-algorithms 1 --csv /tmp/out/y.csv --params "$W16" > /tmp/out/ncu-cublas.log 2>&1; echo "exit $?"; tail -2 /tmp/out/ncu-cublas.log
for r in qk-isaac qk-cublas; do
  [ -f /tmp/out/$r.ncu-rep ] || continue
  timeout 60 "$ncu" -i /tmp/out/$r.ncu-rep --page source --print-source sass --csv > /tmp/out/$r-sass.csv 2>&1; echo "$r source exit $? $(wc -l < /tmp/out/$r-sass.csv)"
  timeout 60 "$ncu" -i /tmp/out/$r.ncu-rep --page details > /tmp/out/$r-details.txt 2>&1
  grep -E "^  [a-zA-Z_]|Duration|Registers Per|Block Size|Grid Size|Cluster|Shared Memory|Achieved Occupancy|Warp Cycles Per Issued" /tmp/out/$r-details.txt | head -30
  xz -9 /tmp/out/$r-sass.csv
done
rm -f /tmp/out/*.ncu-rep
tar cJf "$OUT/call4.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
