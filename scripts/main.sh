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
#   gemm, conv    the paper's GEMM and CONV problems against cuBLAS/cuDNN: not there yet
# Exits non-zero when a stage that exists fails.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${ISAAC_BUILD_DIR:-build}
jobs=${ISAAC_JOBS:-$(nproc)}
prefix=${ISAAC_PREFIX:-}
has_gpu=0
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
  local out
  local out status=0
  out=$("$prefix/bin/isaac-info" --jit 2>&1) || status=$?
  printf '%s\n' "$out"
  ((status == 0)) || { echo "FAILED: isaac-info (exit $status)"; exit 1; }
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

stage_not_yet() {
  local name=$1 what=$2
  stage "$name"
  echo "not there yet: $what"
  record "$name" "not there yet: $what"
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
stage_not_yet gemm "the GEMM generator (DeepBench/paper problems vs cuBLAS) is in progress"
stage_not_yet conv "the CONV generator (paper problems vs cuDNN) is in progress"

stage "summary"
printf '%s\n' "${summary[@]}"
