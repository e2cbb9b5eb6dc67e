#!/usr/bin/env bash
# Installs every Debian package isaac needs to build and test. Idempotent: safe to run again.
# The CUDA 13 toolkit (headers, ptxas, cuBLAS, cuDNN) is expected to be installed already;
# CMake finds it with FindCUDAToolkit.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config git xz-utils file
  llvm-19-dev libzstd-dev zlib1g-dev libxml2-dev libedit-dev libffi-dev libncurses-dev
  libboost-dev doctest-dev libbenchmark-dev libeigen3-dev nlohmann-json3-dev
  libsqlite3-dev libcli11-dev libfmt-dev
  python3-matplotlib
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
echo "isaac dependencies: all installed"
