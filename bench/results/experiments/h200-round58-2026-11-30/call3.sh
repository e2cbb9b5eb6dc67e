#!/usr/bin/env bash
# Round 58, call 3: cuDNN through PyTorch (f16 and bf16) as a cross-check of the legacy API's figures,
# then README's main job on 0.1.41.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "=== cuDNN through PyTorch $(date -u +%T)"
py=python3
for candidate in python3 /opt/*/.venv/bin/python3; do
  if "$candidate" -c "import torch" 2>/dev/null; then py=$candidate; break; fi
done
timeout 120 "$py" bench/conv/torch_cudnn.py bench/problems/conv_problems.csv "$OUT/torch-cudnn.csv" f16,bf16 2>&1 | tail -30
echo "=== main job $(date -u +%T)"
ISAAC_BUILD_DIR=$OUT timeout 300 bash .bundle/run-on-device.sh > "$OUT/main-job.log" 2>&1; echo "exit $?"
sed -n '/=== summary/,$p' "$OUT/main-job.log"
grep -E "^top-1|^tuned isaac|geometric mean" "$OUT/main-job.log"
echo "=== done $(date -u +%T) $SECONDS s"
