#!/usr/bin/env bash
# Round 66, call 2 (0.1.49 as in call 1): a probe of where a candidate timing's wall time goes
# (.bundle/probe/probe_timer.cpp, not part of the project); the f32 CONV rows tuned (the race and the
# Winograd hedges, now timed inside select_best), fresh cache.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o2
cp .bundle/probe/probe_timer /tmp/isaac/bin/
echo "=== probe $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c2-probe timeout 100 /tmp/isaac/bin/probe_timer; echo "exit $?"
echo "=== conv tuned f32 $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c2-conv timeout 250 /tmp/isaac/bin/isaac-bench-conv tuned --dtypes f32 --winners bench/results/conv-sweep-winners.csv \
  --csv /tmp/o2/conv-tuned-f32.csv > /tmp/o2/conv-tuned-f32.log 2>&1
echo "exit $?"; grep -E '^top-1|^tuned' /tmp/o2/conv-tuned-f32.log
grep -o "top-10: rank [0-9]* in [0-9.]* s" /tmp/o2/conv-tuned-f32.log | awk '{s+=$5; n++} END {printf "tuning: %d rows, %.1f s\n", n, s}'
tar cJf "$OUT/call2.tar.xz" -C /tmp/o2 .
echo "=== done $(date -u +%T) $SECONDS s"
