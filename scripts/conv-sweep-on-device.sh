#!/usr/bin/env bash
# A CONV sweep on the GPU machine in one call (issue 5): isaac-bench-conv sweep, seeded with the
# cached winners and the shipped model's best sets, then isaac against cuDNN with the new winners.
# Run from the repository root through the bundle
# (bash .bundle/run-on-device.sh bash scripts/conv-sweep-on-device.sh); writes to $OUT:
#   conv-sweep-winners.csv, h100-conv.csv, conv-run.json, sweep.log.
# Environment: SWEEP_DTYPES (default f32,f16), SWEEP_SECONDS (default 330; 0: no sweep),
#   CANDIDATES (random sample per problem and dtype, default 150), WINOGRAD (WG=1 sets sampled per
#   problem and dtype besides, default 60), WGMMA (TC=2 sets likewise, f16 on sm_90, default 60), MODEL_SEEDS (default 8), REFINE_TOP (default 4),
#   RUN_SECONDS (default 200; 0: no run).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
export ISAAC_CACHE_DIR=/tmp/isaac-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv || true
cp bench/results/conv-sweep-winners.csv "$out/conv-sweep-winners.csv"
if [[ ${SWEEP_SECONDS:-330} != 0 ]]; then
  echo "=== conv sweep $(date -u +%T) ==="
  timeout -k 10 $((${SWEEP_SECONDS:-330} + 60)) "$bin/isaac-bench-conv" sweep --dtypes "${SWEEP_DTYPES:-f32,f16}" \
    --candidates "${CANDIDATES:-150}" --winograd "${WINOGRAD:-60}" --wgmma "${WGMMA:-60}" --model-seeds "${MODEL_SEEDS:-8}" --refine-top "${REFINE_TOP:-4}" --budget "${SWEEP_SECONDS:-330}" --out "$out/conv-sweep-winners.csv" \
    > "$out/sweep.log" 2>&1
  echo "sweep exit $?"
  grep -E "^\[|sweep:" "$out/sweep.log" | cut -c1-260
fi
if [[ ${RUN_SECONDS:-200} != 0 ]]; then
  echo "=== isaac vs cuDNN $(date -u +%T) ==="
  timeout -k 10 $((${RUN_SECONDS:-200} + 60)) "$bin/isaac-bench-conv" run --winners "$out/conv-sweep-winners.csv" \
    --csv "$out/h100-conv.csv" --budget "${RUN_SECONDS:-200}" \
    --benchmark_out="$out/conv-run.json" --benchmark_out_format=json 2>&1 | tail -40
  echo "run exit ${PIPESTATUS[0]}"
fi
echo "=== done $(date -u +%T) ==="
