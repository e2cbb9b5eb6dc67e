#!/usr/bin/env bash
# Round 56, call 3: isaac-tune collect's throughput with its defaults on the H200 machine (16 cores),
# 60 s each, seeds 31 and 32 (as round 18 measured it on the H100 machine).
set -uo pipefail
cd "$(dirname "$0")/.."
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
nproc
for seed in 31 32; do
  echo "=== collect seed $seed $(date -u +%T)"
  ISAAC_CACHE_DIR=/tmp/c3-$seed timeout 120 /tmp/isaac/bin/isaac-tune collect --seconds 60 --seed $seed \
    --out "$OUT/collect-seed$seed.csv" 2>&1 | tr '\r' '\n' | grep -v "^ *$" | tail -6
done
echo "=== done $(date -u +%T) $SECONDS s"
