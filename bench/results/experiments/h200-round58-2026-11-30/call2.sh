#!/usr/bin/env bash
# Round 58, call 2: the GPU suites but test_gpu_conv (call 1 ran it; call 3 runs it again) on 0.1.41.
set -uo pipefail
cd "$(dirname "$0")/.."
RUN=0 TESTS="test_gpu_gemm test_gpu_smoke test_gpu_program test_gpu_aot" timeout 580 \
  bash .bundle/run-on-device.sh bash scripts/gpu-suites-on-device.sh
echo "=== done $SECONDS s"
