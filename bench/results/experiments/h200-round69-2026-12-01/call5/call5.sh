#!/usr/bin/env bash
# Round 69, call 5 (call 3's bundle, the same kernels as the committed 0.1.51): test_gpu_conv's TMA
# cases, the two tile loops among them, under compute-sanitizer memcheck, then racecheck.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export ISAAC_CACHE_DIR=/tmp/c5
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  echo "=== $tool $(date -u +%T) $SECONDS s"
  timeout 185 $san --tool $tool --print-limit 20 /tmp/isaac/bin/test_gpu_conv -tc="CONV TMA*" > "$OUT/$tool.log" 2>&1
  echo "exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases|assertions" "$OUT/$tool.log" | tail -4
done
echo "=== done $SECONDS s"
