#!/usr/bin/env bash
# Round 60, call 1: deep TMA pipelines for CONV (conv_pipeline_stages). The f16 sweep winners and 210
# sets whose grid fits on the SMs (Conv6, 7, 8, 13, 14; U = 64) timed by isaac alone, the committed
# library (old, c43ba29) and the new one under the same benchmark binary, alternating; then
# test_gpu_conv on the new library.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/old && tar xf .bundle/old.tar.xz -C /tmp/old
bench=/tmp/isaac/bin/isaac-bench-conv
ab() {  # label, library folder, sets
  LD_LIBRARY_PATH=$2:$LD_LIBRARY_PATH ISAAC_CACHE_DIR=/tmp/cache-$1 timeout 200 $bench run --winners "$3" \
    --csv "$OUT/ab-$1.csv" --benchmark_filter='^isaac/' > "$OUT/ab-$1.log" 2>&1
  echo "$1: exit $? at $SECONDS s"
}
ab winners-old /tmp/old/lib .bundle/f16-winners.csv
ab winners-new /tmp/isaac/lib .bundle/f16-winners.csv
ab deep-new /tmp/isaac/lib .bundle/deep-candidates.csv
ab deep-old /tmp/old/lib .bundle/deep-candidates.csv
for f in winners-old winners-new; do echo "== $f"; cut -d, -f2,10 "$OUT/ab-$f.csv" | tr '\n' ' '; echo; done
echo "=== test_gpu_conv $(date -u +%T) $SECONDS s"
timeout $((590 - SECONDS)) /tmp/isaac/bin/test_gpu_conv > "$OUT/test_gpu_conv.log" 2>&1; echo "exit $?"
tail -4 "$OUT/test_gpu_conv.log"; grep -E "ERROR|FAILED|wrong|outside" "$OUT/test_gpu_conv.log" | head -20
echo "=== done $SECONDS s"
