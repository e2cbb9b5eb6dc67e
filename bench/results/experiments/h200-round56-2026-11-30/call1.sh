#!/usr/bin/env bash
# Round 56, call 1: README's main job (scripts/main.sh) from the bundle of 0.1.38 on the GPU machine.
set -uo pipefail
cd "$(dirname "$0")/.."
echo "=== start $(date -u +%T)"
ISAAC_BUILD_DIR=$OUT timeout 580 bash .bundle/run-on-device.sh
echo "=== exit $? at $(date -u +%T), $SECONDS s"
