#!/usr/bin/env bash
# Round 60, call 2 (0.1.43: rings of 8+ stages only): test_gpu_conv; the f16 sweep of the five problems
# whose grids fit on the SMs, seeded by call 1's best sets; the tuner against the merged winners and cuDNN.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ISAAC_CACHE_DIR=/tmp/c2-cache
bench=/tmp/isaac/bin/isaac-bench-conv
echo "=== test_gpu_conv $(date -u +%T) $SECONDS s"
timeout 220 /tmp/isaac/bin/test_gpu_conv > "$OUT/test_gpu_conv.log" 2>&1; echo "exit $?"
tail -3 "$OUT/test_gpu_conv.log"; grep -E "ERROR|FAILED|wrong|outside" "$OUT/test_gpu_conv.log" | head -20
echo "=== sweep f16 $(date -u +%T) $SECONDS s"
cp .bundle/seeds.csv "$OUT/sweep-deep.csv"
timeout 180 $bench sweep --problems .bundle/problems-deep.csv --dtypes f16 --wgmma 60 --budget 150 \
  --out "$OUT/sweep-deep.csv" > "$OUT/sweep.log" 2>&1; echo "sweep: exit $?"
grep -E "^\[" "$OUT/sweep.log" | cut -c1-300
python3 - "$OUT/sweep-deep.csv" > "$OUT/winners-merged.csv" <<'PY'
import csv, sys
swept = {(r['dtype'], r['name']): r for r in csv.DictReader(open(sys.argv[1]))}
w = csv.writer(sys.stdout, lineterminator='\n')
rows = list(csv.DictReader(open('bench/results/conv-sweep-winners.csv')))
w.writerow(rows[0].keys())
for r in (r for r in rows if r['dtype'] == 'f16'):
    w.writerow(swept.get((r['dtype'], r['name']), r).values())
PY
echo "=== conv f16 $(date -u +%T) $SECONDS s"
timeout $((585 - SECONDS)) $bench tuned --winners "$OUT/winners-merged.csv" --csv "$OUT/conv-f16.csv" > "$OUT/conv-f16.log" 2>&1; echo "exit $?"
grep -E '^f16 |^top-1|^tuned' "$OUT/conv-f16.log"
echo "=== done $SECONDS s"
