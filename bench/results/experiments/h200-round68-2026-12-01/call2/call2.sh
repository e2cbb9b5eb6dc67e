#!/usr/bin/env bash
# Round 68, call 2: ping-pong loops through one shared ring with turns (this build) against 0.1.49's
# halves; tile and ping-pong loops over long K (temporary env switches ISAAC_X_KTILES, ISAAC_X_PP_MIN100).
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o2 /tmp/old && xz -dc .bundle/old/libisaac.so.0.1.xz > /tmp/old/libisaac.so.0.1
relax() { export ISAAC_X_KTILES=1000 ISAAC_X_PP_MIN100=120; }
strict() { unset ISAAC_X_KTILES ISAAC_X_PP_MIN100; }
echo "=== tests (strict) $(date -u +%T) $SECONDS s"; strict
timeout 150 /tmp/isaac/bin/test_gpu_gemm -tc="*ping-pong*,*tile loops*" > /tmp/o2/test-strict.log 2>&1; echo "exit $?"; grep -E "MESSAGE|cases|test cases|assertions" /tmp/o2/test-strict.log | tail -6
echo "=== tests (relaxed) $(date -u +%T) $SECONDS s"; relax
timeout 150 /tmp/isaac/bin/test_gpu_gemm -tc="*ping-pong*,*tile loops*" > /tmp/o2/test-relaxed.log 2>&1; echo "exit $?"; grep -E "MESSAGE|cases|test cases|assertions" /tmp/o2/test-relaxed.log | tail -6
B="VA=8,VB=8,LA=8,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1"
sets() {  # tag lib(new|old) env(strict|relax) M N K layout batch sets...
  local tag=$1 lib=$2 env=$3 m=$4 n=$5 k=$6 lay=$7 batch=$8; shift 8
  local args=(); for p in "$@"; do args+=(--params "$p"); done
  $env
  local lp=$LD_LIBRARY_PATH; [ $lib = old ] && lp=/tmp/old:$LD_LIBRARY_PATH
  echo "=== $tag $lib $env $(date -u +%T) $SECONDS s"
  LD_LIBRARY_PATH=$lp ISAAC_CACHE_DIR=/tmp/c2-$lib-$env timeout 120 /tmp/isaac/bin/isaac-bench-gemm sets $m $n $k --layout $lay --batch $batch --dtype f16 "${args[@]}" \
    --csv "$OUT/$tag-$lib-$env.csv" > /tmp/o2/$tag-$lib-$env.log 2>&1
  echo "exit $?"; grep -E "^(set|cublas)[0-9]*/" /tmp/o2/$tag-$lib-$env.log | awk '{print $1, $2, $NF}' | sed 's/iterations:1.manual_time//' | grep -v "ERROR OCC"
}
PP="ML=128,NL=128,MS=16,NS=8,U=64,$B"; PP32="ML=128,NL=128,MS=16,NS=8,U=32,$B,ST=8"; PPW="ML=64,NL=256,MS=8,NS=16,U=64,$B"
for lib in old new old new; do sets qkt2048 $lib strict 2048 2048 128 TN 32 "$PP" "$PPW"; done
for lib in old new; do sets qkt512 $lib strict 512 512 64 TN 128 "$PP"; done
sets conv10 new relax 25088 256 1152 TN 1 "ML=128,NL=256,MS=8,NS=16,U=64,$B" "$PP" "$PP32" "$PPW" "ML=128,NL=128,MS=8,NS=8,U=64,$B"
sets conv9 new relax 100352 128 576 TN 1 "ML=128,NL=128,MS=16,NS=8,U=64,VA=8,VB=8,LA=8,LB=8,DB=0,SW=1,ACC=32,TC=2,TMA=1" "$PP" "$PP32" "ML=128,NL=128,MS=8,NS=8,U=64,$B"
sets linpack4096 new relax 4096 4096 4096 NT 1 "ML=128,NL=256,MS=8,NS=16,U=64,VA=8,VB=8,LA=16,LB=32,DB=1,SW=8,ACC=32,TC=2,TMA=1" "$PP" "$PP32" "$PPW"
sets linpack2048 new relax 2048 2048 2048 NT 1 "ML=128,NL=256,MS=16,NS=8,U=64,VA=8,VB=8,LA=16,LB=32,DB=1,SW=1,ACC=32,TC=2,TMA=1" "$PP" "$PP32"
sets pv new relax 128 2048 2048 NN 32 "ML=128,NL=128,MS=16,NS=8,U=64,VA=8,VB=8,LA=16,LB=8,DB=0,SW=1,ACC=32,TC=2,TMA=1" "$PP" "$PP32" "$PPW"
tar cJf "$OUT/call2.tar.xz" -C /tmp/o2 .
echo "=== done $(date -u +%T) $SECONDS s"
