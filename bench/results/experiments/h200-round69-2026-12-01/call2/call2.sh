#!/usr/bin/env bash
# Round 69, call 2 (the loop rule now also asks that the loop's staging cost the grid no blocks per SM;
# the temporary switch ISAAC_EXPERIMENT_NO_CONV_LOOP gives 0.1.50's grids): the GPU CONV tests whose
# cases loop, then chosen sets of Conv9, Conv10 and ResNet-50 layers (.bundle/loop-problems.csv,
# loop-sets.csv) as loops and as grids in turns, with the tuner's choice and cuDNN beside them.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bench=/tmp/isaac/bin/isaac-bench-conv
export ISAAC_CACHE_DIR=/tmp/c2-tests
echo "=== test_gpu_conv (TMA, bf16, staged) $(date -u +%T) $SECONDS s"
timeout 120 /tmp/isaac/bin/test_gpu_conv -tc="CONV TMA*,CONV bf16*,CONV staged*" > /tmp/conv-tests.log 2>&1; echo "exit $?"
tail -3 /tmp/conv-tests.log; grep -E "ERROR|FAILED" /tmp/conv-tests.log | head -10
sets() {  # name, environment
  export ISAAC_CACHE_DIR=/tmp/c2-$1
  echo "=== sets $1 ($2) $(date -u +%T) $SECONDS s"
  env $2 timeout 100 $bench tuned --problems .bundle/loop-problems.csv --winners .bundle/loop-sets.csv \
    --csv "$OUT/sets-$1.csv" > "/tmp/sets-$1.log" 2>&1
  echo "exit $?"; grep -E '^f16 ' "/tmp/sets-$1.log"
}
sets loop "ISAAC_NONE=1"
sets grid "ISAAC_EXPERIMENT_NO_CONV_LOOP=1"
(( SECONDS < 380 )) && sets loop2 "ISAAC_NONE=1"
(( SECONDS < 470 )) && sets grid2 "ISAAC_EXPERIMENT_NO_CONV_LOOP=1"
echo "=== done $SECONDS s"
