#!/usr/bin/env bash
# Round 68, call 6: the GEMMs of a BERT-base layer (8192 tokens), tuned f16, under 0.1.49 and 0.1.50 in
# turns (two processes each), cuBLAS in the same processes.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o6 /tmp/old && xz -dc .bundle/old/libisaac.so.0.1.xz > /tmp/old/libisaac.so.0.1
i=0
for lib in old new old new; do
  i=$((i + 1)); lp=$LD_LIBRARY_PATH; [ $lib = old ] && lp=/tmp/old:$LD_LIBRARY_PATH
  echo "=== $lib $(date -u +%T) $SECONDS s"
  LD_LIBRARY_PATH=$lp ISAAC_CACHE_DIR=/tmp/c6-$i timeout $((200 - SECONDS)) /tmp/isaac/bin/isaac-bench-gemm batched --problems .bundle/transformer.csv \
    --dtypes f16 --csv "$OUT/transformer-$i-$lib.csv" > /tmp/o6/transformer-$i-$lib.log 2>&1; echo "exit $?"
  grep -iE "geometric" /tmp/o6/transformer-$i-$lib.log
  sed 1,2d "$OUT/transformer-$i-$lib.csv" | cut -d, -f2,4-6,10,11 | sed 's/^/  /'
done
tar cJf "$OUT/call6.tar.xz" -C /tmp/o6 .
echo "=== done $(date -u +%T) $SECONDS s"
