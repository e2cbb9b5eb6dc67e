#!/usr/bin/env bash
# Round 72, call C (0.1.54 before commit: fitted filter tiles, TMA sets free of the load-layout rule,
# the f16 CONV model retrained with focus72-f16-nhwc): the tuner on the paper's f16 rows against the
# sweep winners and cuDNN, then test_gpu_conv's TMA cases (five with fitted tiles) under
# compute-sanitizer memcheck.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python3 - > /tmp/winners-f16.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open('bench/results/conv-sweep-winners.csv')))
w = csv.writer(sys.stdout, lineterminator='\n')
w.writerow(rows[0].keys())
for r in rows:
    if r['dtype'] == 'f16': w.writerow(r.values())
PY
export ISAAC_CACHE_DIR=/tmp/cC-f16
echo "=== tuned f16 $(date -u +%T) $SECONDS s"
timeout 110 /tmp/isaac/bin/isaac-bench-conv tuned --winners /tmp/winners-f16.csv --csv "$OUT/tuned-f16.csv" > /tmp/tuned-f16.log 2>&1
echo "exit $?"; grep -E '^(f16|bf16) |^top-1|^tuned' /tmp/tuned-f16.log
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
export ISAAC_CACHE_DIR=/tmp/cC-tests
echo "=== memcheck CONV TMA* $(date -u +%T) $SECONDS s"
timeout $((350 - SECONDS)) $san --tool memcheck --print-limit 20 /tmp/isaac/bin/test_gpu_conv -tc="CONV TMA*" > "$OUT/memcheck-tma.log" 2>&1
echo "exit $?"; grep -E "ERROR SUMMARY|test cases|assertions" "$OUT/memcheck-tma.log" | tail -3
echo "=== done $SECONDS s"
