#!/usr/bin/env bash
# Round 56, call 4: where collect's GPU thread spends its time (A: the summary's new breakdown), and
# operands filled on the device from one uploaded block (B), alternating A B A B, 60 s each, seed 31;
# then test_gpu_smoke on B (Buffer::repeat_prefix).
set -uo pipefail
cd "$(dirname "$0")/.."
rm -rf /tmp/A /tmp/B && mkdir -p /tmp/A /tmp/B
tar xf .bundle-a/isaac.tar.xz -C /tmp/A && tar xf .bundle/isaac.tar.xz -C /tmp/B
for run in A B A B; do
  echo "=== collect $run $(date -u +%T)"
  rm -rf /tmp/cache-$run
  ISAAC_CACHE_DIR=/tmp/cache-$run timeout 100 /tmp/$run/isaac/bin/isaac-tune collect --seconds 60 --seed 31 \
    --out "/tmp/collect-$run-$SECONDS.csv" --quiet 2>&1 | tail -5
done
echo "=== smoke B $(date -u +%T)"
/tmp/B/isaac/bin/test_gpu_smoke 2>&1 | tail -3
echo "=== done $(date -u +%T) $SECONDS s"
