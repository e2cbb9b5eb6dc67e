#!/usr/bin/env bash
# Round 70, call 4 (call 2's bundle, the committed 0.1.52's kernels): test_gpu_conv's staged-store cases
# and TMA cases (each with beta != 0 also run with beta = 0: the 16-bit staging by stmatrix, and the
# tile loops') under compute-sanitizer racecheck, then memcheck, while time is left.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export ISAAC_CACHE_DIR=/tmp/c4
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
check() {  # tool, test cases, name, timeout
  (( SECONDS < 470 - $4 / 2 )) || return
  echo "=== $1 $2 $(date -u +%T) $SECONDS s"
  timeout $4 $san --tool $1 --print-limit 20 /tmp/isaac/bin/test_gpu_conv -tc="$2" > "$OUT/$1-$3.log" 2>&1
  echo "exit $?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases|assertions" "$OUT/$1-$3.log" | tail -4
}
check racecheck "CONV staged*" staged 150
check racecheck "CONV TMA*" tma 150
check memcheck "CONV staged*" staged 90
check memcheck "CONV TMA*" tma 90
echo "=== done $SECONDS s"
