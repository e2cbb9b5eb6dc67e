#!/usr/bin/env bash
# Nsight Compute's sections (speed of light, compute workload, instruction statistics, occupancy,
# launch) for one GEMM row's winner and every cuBLAS kernel its `isaac-bench-gemm run` launches. From
# the repository root, through the bundle:
#   ROW=f16,LINPACK,4096 bash .bundle/run-on-device.sh bash scripts/ncu-sections-on-device.sh
# Writes $OUT/ncu-<dtype>-<suite>-<m>.txt (ncu's report) and prints each kernel's headline figures.
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
IFS=, read -r dtype suite m <<<"${ROW:?name the row: dtype,suite,m}"
report=$out/ncu-$dtype-$suite-$m.txt
{ head -1 bench/results/gemm-sweep-winners.csv; grep "^$dtype,$suite,$m," bench/results/gemm-sweep-winners.csv; } > /tmp/one.csv
timeout 400 "$ncu" --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats \
  --section Occupancy --section LaunchStats -k regex:'^(isaac_gemm|nvjet|sm90|cutlass)' \
  "$bin/isaac-bench-gemm" run --winners /tmp/one.csv --dtypes "$dtype" --repeats 2 --peak-size 256 \
  --csv /tmp/one-out.csv > "$report" 2> "$out/ncu.err"
echo "ncu exit $?"
grep -E "^  [a-z_]|Duration|SM Busy|L2 Cache Throughput|Executed Instructions  |Registers Per|Achieved Occupancy" "$report"
