#!/usr/bin/env bash
# A closing GPU call after a kernel change: the GPU suites other than test_gpu_gemm (which a sweep call
# runs first), the GEMM sanitizer sample under compute-sanitizer memcheck, and isaac against cuDNN with
# the cached CONV winners. From the repository root, through the bundle:
#   bash .bundle/run-on-device.sh bash scripts/final-suites-on-device.sh
# Writes to $OUT: one log per suite, memcheck.log, h100-conv.csv, conv-run.json.
# Environment: TESTS (default: conv, program, aot, smoke), RUN_SECONDS (CONV run budget, default 110).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache
for t in ${TESTS-test_gpu_conv test_gpu_program test_gpu_aot test_gpu_smoke}; do
  echo "=== $t $(date -u +%T) ==="
  timeout 240 "$bin/$t" > "$out/$t.log" 2>&1
  echo "$t exit $?"
  tail -3 "$out/$t.log"
done
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
echo "=== memcheck $(date -u +%T) ==="
timeout 200 "$sanitizer" --tool memcheck "$bin/test_gpu_gemm" -tc="*sample*" > "$out/memcheck.log" 2>&1
echo "memcheck exit $?"
tail -4 "$out/memcheck.log"
echo "=== isaac vs cuDNN $(date -u +%T) ==="
timeout -k 10 $((${RUN_SECONDS:-110} + 60)) "$bin/isaac-bench-conv" run --winners bench/results/conv-sweep-winners.csv \
  --csv "$out/h100-conv.csv" --budget "${RUN_SECONDS:-110}" --benchmark_out="$out/conv-run.json" \
  --benchmark_out_format=json 2>&1 | grep -E "^(f16|f32) |geometric"
echo "run exit ${PIPESTATUS[0]}"
echo "=== done $(date -u +%T) ==="
