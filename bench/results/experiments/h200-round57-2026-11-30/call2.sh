#!/usr/bin/env bash
# Round 57, call 2: every GPU suite on 0.1.40 (f60ddff).
set -uo pipefail
cd "$(dirname "$0")/.."
RUN=0 bash .bundle/run-on-device.sh bash scripts/gpu-suites-on-device.sh
echo "=== done $SECONDS s"
