#!/usr/bin/env bash
# Round 55, call 4: the neighbour step's second center (one of the two neighbour places goes to the
# fastest timed set of another kind of kernel, where the first pass timed one): A = 0.1.37 (.bundle-a),
# B = the change (.bundle), over the rows whose first pass holds two kinds with a non-wgmma first choice
# (9 GEMM rows, 9 CONV rows: on the others both builds time the same candidates), A B, B A, A B.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
done
rm -rf /tmp/out /tmp/ia /tmp/ib /tmp/c4-* && mkdir -p /tmp/out /tmp/ia /tmp/ib
tar xf .bundle-a/isaac.tar.xz -C /tmp/ia && tar xf .bundle/isaac.tar.xz -C /tmp/ib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "=== B test_gpu_smoke $(date -u +%T)"
ISAAC_CACHE_DIR=/tmp/c4-smoke timeout 100 /tmp/ib/isaac/bin/test_gpu_smoke > /tmp/out/test_gpu_smoke.log 2>&1; echo "exit $?"; tail -3 /tmp/out/test_gpu_smoke.log | head -2
round=0
for order in "a b" "b a" "a b"; do
  round=$((round+1))
  for build in $order; do
    bin=/tmp/i$build/isaac/bin
    echo "=== conv $build round $round $(date -u +%T)"
    ISAAC_CACHE_DIR=/tmp/c4-conv-$build-$round timeout 90 $bin/isaac-bench-conv tuned --winners .bundle/conv-affected.csv --top-k 10 \
      --csv /tmp/out/conv-tuned-$round-$build.csv 2>&1 | grep -E "^top-1"
    echo "=== gemm $build round $round $(date -u +%T)"
    ISAAC_CACHE_DIR=/tmp/c4-gemm-$build-$round timeout 90 $bin/isaac-bench-gemm tuned --winners .bundle/gemm-affected.csv --dtypes f32,f16 \
      --top-k 10 --csv /tmp/out/gemm-tuned-$round-$build.csv 2>&1 | grep -E "^top-1"
  done
done
tar cJf "$OUT/call4.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T) $SECONDS s"
