#!/usr/bin/env bash
# The closing GPU call for the tensor-core work: every GPU suite, the sanitizer sample (TC=1 cases
# included) under compute-sanitizer memcheck, isaac against cuBLAS with the cached winners and its
# plot, and Nsight Compute's view of the f16 LINPACK 4096 kernel. From the repository root, through
# the bundle: bash .bundle/run-on-device.sh bash scripts/final-tc-on-device.sh
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache-final
TESTS="${TESTS-test_gpu_smoke test_gpu_gemm test_gpu_program test_gpu_conv test_gpu_aot}" RUN=1 \
  bash scripts/gpu-suites-on-device.sh
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
echo "=== memcheck $(date -u +%T) ==="
timeout 200 "$sanitizer" --tool memcheck "$bin/test_gpu_gemm" -tc="*sample*" > "$out/memcheck.log" 2>&1
echo "memcheck exit $?"
tail -6 "$out/memcheck.log"
echo "=== ncu $(date -u +%T) ==="
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
{ head -1 bench/results/gemm-sweep-winners.csv; grep '^f16,LINPACK,4096' bench/results/gemm-sweep-winners.csv; } > /tmp/one.csv
timeout 150 "$ncu" --kernel-name regex:isaac_gemm --launch-skip 2 --launch-count 1 --section SpeedOfLight \
  --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
  "$bin/isaac-bench-gemm" run --winners /tmp/one.csv --dtypes f16 --csv /tmp/one-out.csv > "$out/ncu-f16-linpack4096.txt" 2>&1
echo "ncu exit $?"
grep -E "Duration|Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles|Theoretical Occupancy|Block Limit" "$out/ncu-f16-linpack4096.txt" | head -40
echo "=== done $(date -u +%T) ==="
