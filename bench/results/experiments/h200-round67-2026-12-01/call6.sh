#!/usr/bin/env bash
# Round 67, call 6: the GPU suites on the build whose GEMM wgmma products are one inline-asm statement
# a stage (the GEMM cubins are the same as 0.1.49's on 294 kernels, CONV's PTX byte for byte).
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
done
mkdir -p /tmp/o6
run() {
  local name=$1 limit=$2
  echo "=== $name $(date -u +%T) $SECONDS s"
  ISAAC_CACHE_DIR=/tmp/c6-$name timeout "$limit" /tmp/isaac/bin/$name > /tmp/o6/$name.log 2>&1
  echo "exit $?"; grep -E "test cases:|assertions:" /tmp/o6/$name.log
}
run test_gpu_gemm 330
run test_gpu_smoke 60
run test_gpu_program 60
run test_gpu_aot 60
run test_gpu_conv $((585 - SECONDS))
tar cJf "$OUT/call6.tar.xz" -C /tmp/o6 .
echo "=== done $(date -u +%T) $SECONDS s"
