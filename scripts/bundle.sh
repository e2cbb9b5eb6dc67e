#!/usr/bin/env bash
# Makes the GPU bundle: isaac built (Release), installed and stripped into a relocatable tree
# (bin/: tools, tests, benchmarks; lib/libisaac.so*; include/; lib/cmake/isaac), packed as
#   .bundle/isaac.tar.xz          (unpacks to isaac/; .bundle/ is git-ignored)
#   .bundle/run-on-device.sh      (unpacks it into /tmp and runs the main job, or a command you name)
# The GPU machine needs only an NVIDIA driver: LLVM is inside libisaac and libcuda is loaded at run
# time. The cuBLAS/cuDNN benchmarks need those libraries there too (run-on-device.sh looks for them).
#
# Use with the device tool (the repository travels, the ignored .bundle/ must be carried):
#   bash scripts/bundle.sh
#   device run  carry: [".bundle"]  command: "bash .bundle/run-on-device.sh"
#   device run  carry: [".bundle"]  command: "bash .bundle/run-on-device.sh /tmp/isaac/bin/test_gpu_smoke -s"
# i.e. by hand: tar xf .bundle/isaac.tar.xz -C /tmp && /tmp/isaac/bin/isaac-info --jit
# When $OUT is set (the device tool sets it), the run's output is also saved as $OUT/run.log.
#
# Environment: ISAAC_BUILD_DIR (default build), ISAAC_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${ISAAC_BUILD_DIR:-build}
jobs=${ISAAC_JOBS:-$(nproc)}
out_dir=.bundle

echo "=== build ($build_dir, Release) ==="
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "$jobs"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/isaac
echo "=== install (stripped) into $root ==="
cmake --install "$build_dir" --prefix "$root" --strip >/dev/null

# Benchmark executables that the install did not pick up: their build RUNPATH ($ORIGIN/../lib plus
# the CUDA toolkit's library folder) still finds libisaac once they sit in bin/.
if [[ -d $build_dir/bench ]]; then
  while IFS= read -r exe; do
    name=$(basename "$exe")
    [[ -e $root/bin/$name ]] && continue
    install -m 755 "$exe" "$root/bin/$name"
    strip "$root/bin/$name"
    echo "added benchmark $name"
  done < <(find "$build_dir/bench" -path '*/CMakeFiles' -prune -o -type f -executable -print)
fi

# SQLite (the tuning database) is the one shared library libisaac needs beyond the C++ runtime; the
# GPU machine may lack it, so it travels beside libisaac (found through RUNPATH $ORIGIN).
sqlite=$(ldd "$root"/lib/libisaac.so | awk '/libsqlite3/ {print $3}')
if [[ -n $sqlite ]]; then
  cp -L "$sqlite" "$root/lib/$(basename "$sqlite")"
  echo "added $(basename "$sqlite")"
fi

# The bundle must run without LLVM, libfmt or a link-time libcuda.
if ldd "$root"/lib/libisaac.so | grep -E 'libLLVM|libcuda\.so|libfmt|not found'; then
  echo "FAILED: libisaac in the bundle depends on the above" >&2
  exit 1
fi

mkdir -p "$out_dir"
echo "=== pack $out_dir/isaac.tar.xz ==="
XZ_OPT="-T0 -6" tar -C "$tmp" -cJf "$out_dir/isaac.tar.xz.part" isaac
mv "$out_dir/isaac.tar.xz.part" "$out_dir/isaac.tar.xz"

cat >"$out_dir/run-on-device.sh" <<'EOF'
#!/usr/bin/env bash
# Written by scripts/bundle.sh. On the GPU machine, from the repository root:
#   bash .bundle/run-on-device.sh               unpack into /tmp/isaac, run the main job from there
#   bash .bundle/run-on-device.sh CMD ARGS...   unpack, then run CMD (e.g. /tmp/isaac/bin/isaac-info)
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf /tmp/isaac
tar xf .bundle/isaac.tar.xz -C /tmp
# For the cuBLAS/cuDNN benchmarks: the toolkit's libraries, and cuDNN wherever a Python package put it.
extra=/usr/local/cuda/lib64
for d in /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib /usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib; do
  [[ -d $d ]] && extra+=:$d
done
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$extra
run() {
  if (($#)); then "$@"; else ISAAC_PREFIX=/tmp/isaac bash scripts/main.sh; fi
}
if [[ -n ${OUT:-} && -d ${OUT:-} ]]; then
  run "$@" 2>&1 | tee "$OUT/run.log"
  exit "${PIPESTATUS[0]}"
fi
run "$@"
EOF
chmod +x "$out_dir/run-on-device.sh"

size=$(stat -c %s "$out_dir/isaac.tar.xz")
echo "=== bundle ==="
du -sh "$root" | sed 's/\t.*/ unpacked/'
echo "$out_dir/isaac.tar.xz: $((size / 1024 / 1024)) MiB ($size bytes), $(tar tJf "$out_dir/isaac.tar.xz" | wc -l) entries"
echo "bin/: $(ls "$root/bin" | tr '\n' ' ')"
if ((size > 60 * 1024 * 1024)); then
  echo "WARNING: over 60 MiB; the device tool carries at most 64 MiB with the working tree" >&2
fi
echo "on the device (carry .bundle): bash .bundle/run-on-device.sh"
