#!/usr/bin/env bash
# Session 2026-11-29e, call 7 (experiment switch ISAAC_C_POLICY, not committed): C's TMA stores with an
# L2 evict-first policy (createpolicy.fractional.L2::evict_first + .L2::cache_hint) against plain ones,
# on f16 problems whose C TMA writes: QK^T 2048 and 512 (C is 89% of the bytes), LAPACK 4096 and 3456,
# batched 64 x 256^3, LINPACK 4096 (a control). Two rounds, modes alternating; each kernel is checked
# against the float64 reference before it is timed.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rm -rf /tmp/isaac && tar xf .bundle/isaac.tar.xz -C /tmp
mkdir -p /tmp/out
B="KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1"
S='/TFLOP\/s  *\/cuBLAS/,/cuBLAS [0-9]/p'
run() {  # mode name args...
  local mode=$1 name=$2; shift 2
  if [ $mode = first ]; then export ISAAC_C_POLICY=first; else unset ISAAC_C_POLICY; fi
  echo "=== $name $mode round $round $(date -u +%T)"
  ISAAC_CACHE_DIR=/tmp/cache-$mode timeout 60 /tmp/isaac/bin/isaac-bench-gemm sets "$@" --lt-algorithms 4 --csv /tmp/out/sets-$name-$mode-r$round.csv 2>&1 | sed -n "$S" | grep -v 'TFLOP/s  '
}
for round in 1 2; do
  modes="plain first"; [ $round = 2 ] && modes="first plain"
  for mode in $modes; do
    run $mode qk2048 2048 2048 128 --batch 32 --layout TN --dtype f16 --params "ML=128,NL=128,MS=16,NS=8,U=64,$B,ST=2" --params "ML=128,NL=64,MS=16,NS=4,U=64,$B,ST=2" --params "ML=64,NL=128,MS=8,NS=8,U=64,$B,ST=2"
    run $mode qk512 512 512 64 --batch 128 --layout TN --dtype f16 --params "ML=64,NL=128,MS=8,NS=8,U=64,$B,ST=2" --params "ML=128,NL=128,MS=8,NS=8,U=64,$B,ST=1"
    run $mode lapack4096 4096 4096 32 --layout NT --dtype f16 --params "ML=128,NL=128,MS=8,NS=8,U=32,$B,ST=2" --params "ML=64,NL=128,MS=8,NS=8,U=16,KS=1,KL=1,KG=1,VA=8,VB=8,LA=8,LB=16,DB=1,SW=1,ACC=32,TC=2,TMA=1"
    run $mode lapack3456 3456 3456 32 --layout NT --dtype f16 --params "ML=64,NL=128,MS=8,NS=8,U=32,$B,ST=2"
    run $mode hpc256 256 256 256 --batch 64 --layout NN --dtype f16 --params "ML=128,NL=128,MS=16,NS=8,U=32,KS=1,KL=1,KG=1,VA=8,VB=8,LA=16,LB=4,DB=1,SW=1,ACC=32,TC=2,TMA=1"
    run $mode linpack4096 4096 4096 4096 --layout NT --dtype f16 --params "ML=128,NL=256,MS=8,NS=16,U=64,KS=1,KL=1,KG=1,VA=8,VB=8,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=2,TMA=1"
  done
done
tar cJf "$OUT/call7.tar.xz" -C /tmp/out .
echo "=== done $(date -u +%T)"
