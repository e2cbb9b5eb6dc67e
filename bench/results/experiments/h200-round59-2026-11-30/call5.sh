#!/usr/bin/env bash
# Round 59, call 5 (the committed library): the GEMM suite (its staged epilogue's loops are now shared
# with CONV's) and the smaller suites.
set -uo pipefail
cd "$(dirname "$0")/.."
RUN=0 TESTS="test_gpu_gemm test_gpu_smoke test_gpu_program test_gpu_aot" bash .bundle/run-on-device.sh bash scripts/gpu-suites-on-device.sh
