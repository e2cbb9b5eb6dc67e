#!/usr/bin/env bash
# README's main-job command: set up, build, then run isaac's main job and print what it found.
#
#   bash scripts/main.sh                           # fresh machine: deps, build, install, run
#   ISAAC_PREFIX=/tmp/isaac bash scripts/main.sh   # run from an installed tree (e.g. the bundle on a
#                                                  # GPU machine): no deps, no build
#
# Stages (one function each; the summary at the end lists every stage as ok, skipped with the reason,
# or not there yet):
#   deps, build   scripts/install-deps.sh; configure, build and install into $ISAAC_BUILD_DIR/install
#   info          isaac-info: version, driver, devices, the LLVM target for each
#   smoke         on a GPU: the LLVM -> PTX -> JIT -> launch smoke test, checked against the CPU
#   gemm, conv    on a GPU: the paper's GEMM and CONV problems tuned by isaac (the shipped model ranks
#                 the whole legal space, the 10 best are timed), beside the brute-force sweep's winners
#                 (cached in bench/results) and cuBLAS / cuDNN in the same process: tables, CSVs and
#                 PNG plots in $ISAAC_BUILD_DIR/main-job
#   report        without a GPU: the same problems compiled to PTX with the parameters isaac would
#                 choose, and each kernel's threads, shared memory, registers and spills (isaac-report)
# Exits non-zero when a stage that exists fails.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${ISAAC_BUILD_DIR:-build}
jobs=${ISAAC_JOBS:-$(nproc)}
prefix=${ISAAC_PREFIX:-}
has_gpu=0
failed=0
summary=()

stage() { printf '\n=== %s ===\n' "$*"; }
record() { summary+=("$(printf '%-8s %s' "$1" "$2")"); }

stage_deps() {
  stage "deps"
  bash scripts/install-deps.sh
  record deps ok
}

stage_build() {
  stage "build ($build_dir, Release, -j$jobs) and install into $build_dir/install"
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build_dir" -j "$jobs"
  cmake --install "$build_dir" --prefix "$build_dir/install" >/dev/null
  prefix=$(cd "$build_dir/install" && pwd)
  record build "ok: $prefix"
}

stage_info() {
  stage "info"
  local out status=0
  out=$("$prefix/bin/isaac-info" --jit 2>&1) || status=$?
  printf '%s\n' "$out"
  # 77: no driver, so the JIT check was skipped (the code the GPU tests exit with).
  ((status == 0 || status == 77)) || { echo "FAILED: isaac-info (exit $status)"; exit 1; }
  if grep -q '^device 0:' <<<"$out"; then
    has_gpu=1
    record info "ok: $(grep '^device 0:' <<<"$out")"
  else
    record info "ok: no GPU on this machine"
  fi
}

stage_smoke() {
  stage "smoke"
  if ((!has_gpu)); then
    echo "skipped: needs a GPU"
    record smoke "skipped: needs a GPU"
    return
  fi
  if [[ ! -x $prefix/bin/test_gpu_smoke ]]; then
    record smoke "skipped: $prefix/bin/test_gpu_smoke is not installed (ISAAC_BUILD_TESTS=OFF?)"
    return
  fi
  "$prefix/bin/test_gpu_smoke" --duration=true
  record smoke ok
}

out_dir=${ISAAC_BUILD_DIR:-build}/main-job

stage_gemm() {
  stage "gemm: the paper's GEMM problems tuned by isaac (model + top-10), beside the brute-force best and cuBLAS"
  mkdir -p "$out_dir"
  local status=0
  "$prefix/bin/isaac-bench-gemm" tuned --winners bench/results/gemm-sweep-winners.csv \
    --csv "$out_dir/gemm-tuned.csv" >"$out_dir/gemm-tuned.log" 2>&1 || status=$?
  sed -n '/^problem  *brute/,$p' "$out_dir/gemm-tuned.log"
  python3 bench/plot_tuned.py "$out_dir/gemm-tuned.csv" "$out_dir/gemm-tuned.png" || true
  if ((status != 0)); then record gemm "FAILED (exit $status): see $out_dir/gemm-tuned.log"; failed=1; return; fi
  record gemm "ok: $out_dir/gemm-tuned.csv and .png"
}

stage_bf16() {
  stage "bf16: the paper's GEMM and CONV problems tuned by isaac (model + top-10) beside cuBLAS and cuDNN (no brute-force sweep in bf16)"
  mkdir -p "$out_dir"
  local status=0 bench=$prefix/bin/isaac-bench-conv
  "$prefix/bin/isaac-bench-gemm" batched --problems bench/problems/gemm_problems.csv --dtypes bf16 \
    --csv "$out_dir/gemm-bf16.csv" >"$out_dir/gemm-bf16.log" 2>&1 || status=$?
  sed -n '/^problem  *top1/,$p' "$out_dir/gemm-bf16.log"
  python3 bench/plot_batched.py "$out_dir/gemm-bf16.csv" "$out_dir/gemm-bf16.png" || true
  if ((status != 0)); then record bf16 "FAILED (exit $status): see $out_dir/gemm-bf16.log"; failed=1; return; fi
  [[ -x $bench ]] || { record bf16 "GEMM ok: $out_dir/gemm-bf16.csv; CONV skipped: $bench is not installed"; return; }
  "$bench" tuned --bf16 --winners bench/results/conv-sweep-winners.csv --csv "$out_dir/conv-bf16.csv" \
    >"$out_dir/conv-bf16.log" 2>&1 || status=$?
  grep -E '^bf16 |^tuned' "$out_dir/conv-bf16.log" || true
  python3 bench/plot_tuned.py "$out_dir/conv-bf16.csv" "$out_dir/conv-bf16.png" || true
  if ((status != 0)); then record bf16 "FAILED (exit $status): see $out_dir/conv-bf16.log"; failed=1; return; fi
  record bf16 "ok: $out_dir/gemm-bf16.csv, conv-bf16.csv and their .png"
}

stage_conv() {
  stage "conv: the paper's CONV problems tuned by isaac (model + top-10), beside the brute-force best and cuDNN"
  mkdir -p "$out_dir"
  local bench=$prefix/bin/isaac-bench-conv status=0
  [[ -x $bench ]] || { record conv "skipped: $bench is not installed (cuDNN not found at build time)"; return; }
  "$bench" tuned --winners bench/results/conv-sweep-winners.csv --csv "$out_dir/conv-tuned.csv" \
    >"$out_dir/conv-tuned.log" 2>&1 || status=$?
  grep -E '^(f32|f16) |^top-1|^tuned' "$out_dir/conv-tuned.log" || true
  python3 bench/plot_tuned.py "$out_dir/conv-tuned.csv" "$out_dir/conv-tuned.png" || true
  if ((status != 0)); then record conv "FAILED (exit $status): see $out_dir/conv-tuned.log"; failed=1; return; fi
  record conv "ok: $out_dir/conv-tuned.csv and .png"
}

stage_report() {
  stage "report: the paper's problems compiled to PTX (no GPU here)"
  "$prefix/bin/isaac-report"
  record report "ok: parameters chosen by the shipped H100 models, resources from ptxas"
}

if [[ -z $prefix ]]; then
  stage_deps
  stage_build
else
  prefix=$(cd "$prefix" && pwd)
  record deps "skipped: running from $prefix"
  record build "skipped: running from $prefix"
fi
stage_info
stage_smoke
if ((has_gpu)); then
  stage_gemm
  stage_bf16
  stage_conv
else
  stage_report
fi

stage "summary"
printf '%s\n' "${summary[@]}"
exit "$failed"
