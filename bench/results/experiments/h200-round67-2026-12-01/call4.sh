#!/usr/bin/env bash
# Round 67, call 4: the split's prepare kernel lets the main kernel launch at its start instead of after
# its stores (ISAAC_PREPARE_TRIGGER=start, a temporary switch). The overlap test under it; then
# `run` over the tuned sets of the 54 GEMM rows (round 66's main job), the two modes alternating, twice.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o4
echo "=== overlap and split tests, trigger at the start $(date -u +%T) $SECONDS s"
ISAAC_PREPARE_TRIGGER=start ISAAC_CACHE_DIR=/tmp/c4-test timeout 200 /tmp/isaac/bin/test_gpu_gemm \
  -tc="*overlap wait*,*every dtype, layout, awkward size and split mode*" > /tmp/o4/test.log 2>&1
echo "exit $?"; tail -3 /tmp/o4/test.log
for round in 1 2; do
  for mode in end start; do
    [[ $round == 2 && $mode == end ]] && continue
    echo "=== run $mode round $round $(date -u +%T) $SECONDS s"
    ISAAC_PREPARE_TRIGGER=$mode ISAAC_CACHE_DIR=/tmp/c4-$mode timeout 200 /tmp/isaac/bin/isaac-bench-gemm run \
      --winners .bundle/tuned-sets.csv --lt-algorithms 8 --csv /tmp/o4/run-$mode-$round.csv --floor-csv /tmp/o4/floor-$mode-$round.csv \
      > /tmp/o4/run-$mode-$round.log 2>&1
    echo "exit $?"; grep -A3 "^Geometric means" /tmp/o4/run-$mode-$round.log
  done
  [[ $round == 2 ]] && { echo "=== run end round 2 $(date -u +%T) $SECONDS s"
    ISAAC_PREPARE_TRIGGER=end ISAAC_CACHE_DIR=/tmp/c4-end timeout 200 /tmp/isaac/bin/isaac-bench-gemm run \
      --winners .bundle/tuned-sets.csv --lt-algorithms 8 --csv /tmp/o4/run-end-2.csv --floor-csv /tmp/o4/floor-end-2.csv \
      > /tmp/o4/run-end-2.log 2>&1; echo "exit $?"; grep -A3 "^Geometric means" /tmp/o4/run-end-2.log; }
done
tar cJf "$OUT/call4.tar.xz" -C /tmp/o4 .
echo "=== done $(date -u +%T) $SECONDS s"
