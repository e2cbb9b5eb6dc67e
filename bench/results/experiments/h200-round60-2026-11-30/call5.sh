#!/usr/bin/env bash
# Round 60, call 5: test_gpu_conv on the committed library (b3fec46); then an experiment, not committed:
# rings of 8+ stages also where the grid fits on the SMs two blocks each (at most 264 blocks, each
# ring within half an SM's shared memory), `exp`, against the committed rule, on the 41 sets of the
# five problems with such grids and 8+ stages within 112 KB, and the two one-wave winners; isaac alone,
# alternating, twice each.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "=== test_gpu_conv $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c5-cache timeout 240 /tmp/isaac/bin/test_gpu_conv > "$OUT/test_gpu_conv.log" 2>&1; echo "exit $?"
tail -3 "$OUT/test_gpu_conv.log"; grep -E "ERROR|FAILED|wrong|outside" "$OUT/test_gpu_conv.log" | head -20
mkdir -p /tmp/exp && tar xf .bundle/exp.tar.xz -C /tmp/exp
bench=/tmp/isaac/bin/isaac-bench-conv
ab() {  # label, library folder
  LD_LIBRARY_PATH=$2:$LD_LIBRARY_PATH ISAAC_CACHE_DIR=/tmp/cache-$1 timeout 100 $bench run --winners .bundle/two-candidates.csv \
    --csv "/tmp/ab-$1.csv" --benchmark_filter='^isaac/' > "/tmp/ab-$1.log" 2>&1
  echo "$1: exit $? at $SECONDS s"
}
for i in 1 2; do ab rule-$i /tmp/isaac/lib; ab exp-$i /tmp/exp/lib; done
cp /tmp/ab-rule-1.csv /tmp/ab-exp-1.csv /tmp/ab-rule-2.csv /tmp/ab-exp-2.csv "$OUT/"
cut -d, -f2,10 /tmp/ab-rule-1.csv | head -3
echo "=== done $SECONDS s"
