#!/usr/bin/env bash
# Round 56, call 5: collect's operands from blocks made once per run (C) against the breakdown-only
# build (A), alternating A C A C, 60 s each, seed 31; then C's spot checks on every kernel, GEMM and
# CONV, 20 s each.
set -uo pipefail
cd "$(dirname "$0")/.."
rm -rf /tmp/A /tmp/C && mkdir -p /tmp/A /tmp/C
tar xf .bundle-a/isaac.tar.xz -C /tmp/A && tar xf .bundle/isaac.tar.xz -C /tmp/C
for run in A C A C; do
  echo "=== collect $run $(date -u +%T)"
  rm -rf /tmp/cache-$run
  ISAAC_CACHE_DIR=/tmp/cache-$run timeout 100 /tmp/$run/isaac/bin/isaac-tune collect --seconds 60 --seed 31 \
    --out "/tmp/collect-$run-$SECONDS.csv" --quiet 2>&1 | tail -4
done
for t in gemm conv; do
  echo "=== C $t, a spot check on every kernel $(date -u +%T)"
  ISAAC_CACHE_DIR=/tmp/cache-check timeout 60 /tmp/C/isaac/bin/isaac-tune collect --template $t --seconds 20 --seed 5 \
    --check-every 1 --out "/tmp/check-$t.csv" --quiet 2>&1 | tail -4
done
echo "=== done $(date -u +%T) $SECONDS s"
