#!/usr/bin/env bash
# README's test command: everything from a fresh clone to a tested, installed isaac.
#   1. installs the Debian packages (scripts/install-deps.sh; the CUDA toolkit must be there already)
#   2. configures (Ninja, Release) and builds everything with -j$(nproc)
#   3. runs every test with ctest; GPU tests are skipped without a GPU and the reason is printed
#   4. installs into a temporary prefix, checks the install is relocatable and self-contained
#      (RUNPATH $ORIGIN/../lib, no libLLVM/libcuda/libfmt in ldd, only isaac:: symbols exported),
#      runs an installed tool from there, and builds and runs examples/consumer against it
# Exits non-zero on the first failure. Environment: ISAAC_BUILD_DIR (default build),
# ISAAC_JOBS (default nproc), ISAAC_SKIP_DEPS=1 to skip step 1.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${ISAAC_BUILD_DIR:-build}
jobs=${ISAAC_JOBS:-$(nproc)}

stage() { printf '\n=== %s ===\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }

install_deps() {
  stage "dependencies"
  if [[ ${ISAAC_SKIP_DEPS:-0} == 1 ]]; then echo "skipped (ISAAC_SKIP_DEPS=1)"; return; fi
  bash scripts/install-deps.sh
}

configure_and_build() {
  stage "configure and build ($build_dir, Release, -j$jobs)"
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build_dir" -j "$jobs"
}

run_tests() {
  stage "tests"
  local status=0
  ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" || status=$?
  # ctest shows no output for skipped tests: print each one's reason from the full log.
  local log="$build_dir/Testing/Temporary/LastTest.log"
  if [[ -f $log ]]; then
    awk '/^[0-9]+\/[0-9]+ Test: /{name=$3} /^SKIPPED:/{print "skipped " name ": " substr($0, 10)}' "$log"
  fi
  ((status == 0)) || fail "ctest (exit $status)"
}

# runpath_has_origin_lib FILE: whether one of FILE's RUNPATH (or RPATH) entries is $ORIGIN/../lib.
runpath_has_origin_lib() {
  local paths
  paths=$(readelf -d "$1" | sed -n 's/.*Library r[un]*path: \[\(.*\)\]/\1/p')
  tr ':' '\n' <<<"$paths" | grep -qxF '$ORIGIN/../lib'
}

# check_relocatable PREFIX: what the installed tree must satisfy to run from anywhere.
check_relocatable() {
  local prefix=$1 lib forbidden='libLLVM|libcuda\.so|libfmt|not found'
  lib=$(readlink -f "$prefix/lib/libisaac.so")
  [[ -f $lib ]] || fail "no lib/libisaac.so in the install"
  [[ -f $prefix/lib/cmake/isaac/isaacConfig.cmake ]] || fail "no lib/cmake/isaac/isaacConfig.cmake"
  [[ -d $prefix/include/isaac ]] || fail "no include/isaac"
  local deps
  deps=$(ldd "$lib")
  if grep -E "$forbidden" <<<"$deps"; then fail "libisaac depends on the above"; fi
  local n=0 exe
  for exe in "$prefix"/bin/*; do
    [[ -f $exe && -x $exe ]] || continue
    n=$((n + 1))
    runpath_has_origin_lib "$exe" || fail "$exe: RUNPATH lacks \$ORIGIN/../lib: $(readelf -d "$exe" | grep -i path)"
    # The benchmarks may need cuBLAS/cuDNN, which only the GPU machine has to provide.
    if ldd "$exe" | grep -Ev 'lib(cudart|cublas|cublasLt|cudnn)[^ ]*\.so.* not found' | grep -E "$forbidden"; then
      fail "$exe depends on the above"
    fi
    local loaded
    loaded=$(ldd "$exe" | awk '/libisaac\.so/ {print $3}')
    [[ -z $loaded || $(readlink -f "$loaded") == "$lib" ]] || fail "$exe loads $loaded, not the installed libisaac"
  done
  ((n > 0)) || fail "no executables in $prefix/bin"
  # Only isaac's own API leaves the library (no llvm::, no fmt::, no std:: instantiations).
  local foreign
  foreign=$(nm -D --defined-only "$lib" | awk '{print $3}' | c++filt | grep -v 'isaac::' || true)
  [[ -z $foreign ]] || fail "libisaac exports symbols outside isaac::: $(head -5 <<<"$foreign")"
  echo "install at $prefix: $n executables with RUNPATH \$ORIGIN/../lib, libisaac $(du -h "$lib" | cut -f1)," \
    "no libLLVM/libcuda/libfmt, only isaac:: symbols exported"
}

install_and_consume() {
  stage "install, relocation and the consumer project"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cmake --install "$build_dir" --prefix "$tmp/install" >/dev/null
  # Move the tree after installing: whatever runs below proves it does not depend on where it was put.
  mv "$tmp/install" "$tmp/moved"
  local prefix=$tmp/moved
  check_relocatable "$prefix"
  echo "--- $prefix/bin/isaac-info"
  "$prefix/bin/isaac-info"
  echo "--- examples/consumer against $prefix"
  cmake -S examples/consumer -B "$tmp/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    >/dev/null || fail "configuring examples/consumer against the installed package"
  cmake --build "$tmp/consumer" -j "$jobs" >/dev/null || fail "building examples/consumer"
  "$tmp/consumer/consumer" || fail "running examples/consumer"
}

install_deps
configure_and_build
run_tests
install_and_consume
stage "all tests passed"
