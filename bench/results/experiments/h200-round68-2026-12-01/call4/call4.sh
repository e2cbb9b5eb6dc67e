#!/usr/bin/env bash
# Round 68, call 4 (0.1.50, final rules: loops up to 32 K tiles, ping-pong from two tiles a block,
# one ring with turns): the GEMM GPU suite, then tuned f16 (paper rows), batched f16 and five CONV
# problems as GEMMs, each with cuBLAS in the same process.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o4
echo "=== test_gpu_gemm $(date -u +%T) $SECONDS s"
timeout 380 /tmp/isaac/bin/test_gpu_gemm > /tmp/o4/test_gpu_gemm.log 2>&1; echo "exit $?"; grep -E "ping-pong|tile loop|test cases|assertions|ERROR" /tmp/o4/test_gpu_gemm.log | tail -8
echo "=== tuned f16 $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c4-tuned timeout 100 /tmp/isaac/bin/isaac-bench-gemm tuned --dtypes f16 --winners bench/results/gemm-sweep-winners.csv \
  --csv "$OUT/tuned-f16.csv" > /tmp/o4/tuned.log 2>&1; echo "exit $?"; grep -E "^top-1|geometric mean" /tmp/o4/tuned.log
echo "=== batched f16 $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c4-batched timeout 60 /tmp/isaac/bin/isaac-bench-gemm batched --dtypes f16 --csv "$OUT/batched-f16.csv" > /tmp/o4/batched.log 2>&1
echo "exit $?"; grep -iE "geometric" /tmp/o4/batched.log
echo "=== conv-as-gemm f16 $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c4-batched timeout 50 /tmp/isaac/bin/isaac-bench-gemm batched --problems .bundle/conv-as-gemm.csv --dtypes f16 \
  --csv "$OUT/conv-as-gemm-f16.csv" > /tmp/o4/conv-as-gemm.log 2>&1; echo "exit $?"; grep -iE "geometric" /tmp/o4/conv-as-gemm.log
tar cJf "$OUT/call4.tar.xz" -C /tmp/o4 .
echo "=== done $(date -u +%T) $SECONDS s"
