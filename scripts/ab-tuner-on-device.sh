#!/usr/bin/env bash
# Two builds of isaac, A (.bundle-a) and B (.bundle), as tuners: `isaac-bench-gemm tuned` over every
# GEMM winner (f32, f16, f64; the brute-force winner, the model's top-1, its top-10 re-benchmark and
# cuBLAS, in one process) in alternating processes. Run from the repository root with both folders
# carried: bash scripts/ab-tuner-on-device.sh ORDER..., e.g. "b a" (B then A); first B's GPU suites named
# in TESTS (e.g. TESTS="gemm smoke"). Writes to $OUT: tuned-<n>-<build>.csv, candidates-<n>-<build>.csv
# (RUN=<n>), test_gpu_<suite>.log. DTYPES limits the GEMM rows (default f32,f16,f64). TEMPLATE=conv runs `isaac-bench-conv tuned` over the CONV winners
# instead (conv-tuned-<n>-<build>.csv, conv-candidates-<n>-<build>.csv). They come back in one tar,
# $OUT/ab-<n>-<template>.tar. B_MODELS names a folder of model files (<template>-<dtype>.json) that B
# takes as the user's models (the cache folder's, which take precedence over the shipped ones): an A/B of
# models alone, where A without a .bundle-a folder is B's build.
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
export ISAAC_CACHE_DIR=/tmp/isaac-cache-ab
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unpack() { rm -rf /tmp/isaac "$ISAAC_CACHE_DIR"; tar xf "$1/isaac.tar.xz" -C /tmp; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[[ -n ${TESTS:-} ]] && unpack .bundle
for suite in ${TESTS:-}; do
  echo "=== B: test_gpu_$suite $(date -u +%T)"
  timeout 240 "/tmp/isaac/bin/test_gpu_$suite" > "$out/test_gpu_$suite.log" 2>&1
  echo "exit $?"; tail -3 "$out/test_gpu_$suite.log" | head -2
done
n=${RUN:-1}
template=${TEMPLATE:-gemm}
for build in "$@"; do
  if [[ $build == a && -d .bundle-a ]]; then unpack .bundle-a; else unpack .bundle; fi
  if [[ $build == b && -n ${B_MODELS:-} ]]; then
    mkdir -p "$ISAAC_CACHE_DIR/models" && cp "$B_MODELS"/*.json "$ISAAC_CACHE_DIR/models/" && ls "$ISAAC_CACHE_DIR/models"
  fi
  extra=(--candidates-csv "$out/candidates-$n-$build.csv")
  echo "=== $template tuned, build $build, run $n $(date -u +%T)"
  if [[ $template == conv ]]; then
    timeout 240 /tmp/isaac/bin/isaac-bench-conv tuned --winners bench/results/conv-sweep-winners.csv \
      --top-k 10 --csv "$out/conv-tuned-$n-$build.csv" --candidates-csv "$out/conv-candidates-$n-$build.csv" 2>&1 |
      grep -E "^top-1|^tuned|candidates:"
    continue
  fi
  timeout 200 /tmp/isaac/bin/isaac-bench-gemm tuned --winners bench/results/gemm-sweep-winners.csv \
    --dtypes "${DTYPES:-f32,f16,f64}" --top-k 10 --csv "$out/tuned-$n-$build.csv" "${extra[@]}" 2>&1 |
    grep -E "^top-1|geometric mean|rows;"
done
echo "=== done $(date -u +%T)"
# The device tool brings back at most 8 files: everything this run wrote goes back as one tar
# (tar xf ab-<n>-<template>.tar here).
( cd "$out" && files=$(find . -maxdepth 1 -type f ! -name '*.tar' -printf '%f\n') &&
  [[ -n $files ]] && tar cf "ab-$n-$template.tar" $files && rm -f $files )
