#!/usr/bin/env bash
# Round 67, call 5: is the split's prepare kernel on the critical path because an SM must drain before
# it changes its shared-memory carveout for the main kernel? Three modes, temporary switches:
#   A: as committed (trigger after the stores, the driver's carveout for prepare);
#   B: trigger at the start of prepare, and prepare prefers the largest shared-memory carveout (100);
#   C: trigger after the stores, carveout 100.
# `run` over the tuned sets of the 54 GEMM rows, A B C C B A; the split tests under B first.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o5
env_of() { case $1 in A) echo "ISAAC_PREPARE_TRIGGER=end";; B) echo "ISAAC_PREPARE_TRIGGER=start ISAAC_PREPARE_CARVEOUT=100";; C) echo "ISAAC_PREPARE_TRIGGER=end ISAAC_PREPARE_CARVEOUT=100";; esac; }
echo "=== split tests under B $(date -u +%T) $SECONDS s"
env $(env_of B) ISAAC_CACHE_DIR=/tmp/c5-test timeout 240 /tmp/isaac/bin/test_gpu_gemm \
  -tc="*overlap wait*,*awkward size and split mode*" > /tmp/o5/test.log 2>&1
echo "exit $?"; tail -3 /tmp/o5/test.log
i=0
for mode in A B C C B A; do
  i=$((i + 1))
  echo "=== run $mode ($i) $(date -u +%T) $SECONDS s"
  env $(env_of $mode) ISAAC_CACHE_DIR=/tmp/c5-$mode timeout 120 /tmp/isaac/bin/isaac-bench-gemm run \
    --winners .bundle/tuned-sets.csv --csv /tmp/o5/run-$mode-$i.csv --floor-csv /tmp/o5/floor-$mode-$i.csv > /tmp/o5/run-$mode-$i.log 2>&1
  echo "exit $?"; grep -A3 "^Geometric means" /tmp/o5/run-$mode-$i.log | tail -3
done
tar cJf "$OUT/call5.tar.xz" -C /tmp/o5 .
echo "=== done $(date -u +%T) $SECONDS s"
