#!/usr/bin/env bash
# The closing GPU call for f32 on the tensor cores (TC=1, three TF32 products): the GEMM suite, the
# sanitizer sample, the tuner against the brute-force winners (f32), then the f32 winners against
# cuBLAS. Run from the repository root through the bundle
# (bash .bundle/run-on-device.sh bash scripts/final-f32-on-device.sh); writes to $OUT.
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
export ISAAC_CACHE_DIR=/tmp/isaac-cache-final
bin=/tmp/isaac/bin
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "=== test_gpu_gemm $(date -u +%T)"
timeout 240 "$bin/test_gpu_gemm" > "$out/test_gpu_gemm.log" 2>&1
echo "test_gpu_gemm exit $?"; tail -3 "$out/test_gpu_gemm.log" | head -2
echo "=== memcheck $(date -u +%T)"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
# doctest splits -tc at commas: the name is matched by its start.
timeout 120 "$sanitizer" --tool memcheck "$bin/test_gpu_gemm" -tc="GEMM: a sample of the cases*" > "$out/memcheck.log" 2>&1
echo "memcheck exit $?"; tail -4 "$out/memcheck.log"
echo "=== tuned f32 $(date -u +%T)"
timeout 150 "$bin/isaac-bench-gemm" tuned --winners bench/results/gemm-sweep-winners.csv --dtypes f32 --top-k 10 \
  --repeats 20 --csv "$out/h200-gemm-tuned-f32.csv" --candidates-csv "$out/h200-gemm-candidates-f32.csv" 2>&1 |
  sed -n '/^problem  /,$p'
echo "=== f32 against cuBLAS $(date -u +%T)"
timeout 100 "$bin/isaac-bench-gemm" run --winners bench/results/gemm-sweep-winners.csv --dtypes f32 \
  --csv "$out/h200-gemm-f32.csv" 2>&1 | sed -n '/^type suite/,$p'
echo "=== done $(date -u +%T)"
