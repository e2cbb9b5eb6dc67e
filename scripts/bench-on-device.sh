#!/usr/bin/env bash
# The GEMM benchmark on the GPU machine, in one go (issue 4):
#
#   bash scripts/bench-on-device.sh BIN_DIR OUT_DIR
#
# BIN_DIR holds isaac-bench-gemm (e.g. /tmp/isaac/bin of the unpacked bundle, whose ../lib has libisaac
# and libbenchmark); OUT_DIR receives everything (the device tool's $OUT):
#   bench.log                   all output of this script
#   gemm-sweep-winners.csv      the sweep's winners (copy it to bench/results/ to cache it in the repo)
#   gemm-sweep-all.csv          every trial of the sweep (phase, status, time, registers, reason of failures)
#   h100-gemm.csv, .png         isaac vs cuBLAS per problem and dtype, and the plot of the ratios
#   gemm-run.json               Google Benchmark's JSON of the same run
#   h100-gemm-bounds.csv        what bounds checks cost
#   summary.txt                 each stage: ok or failed (exit code), and its time
# Stages and their budgets (seconds; environment overrides), about 9 minutes at most in all (7 to 8 expected):
#   sweep   SWEEP_BUDGET=360 (the sweep stops itself within it; if a kernel breaks the CUDA context the
#           sweep exits 3 and is resumed without that kernel, within the same budget)
#   run     RUN_TIMEOUT=100  (isaac vs cuBLAS with the winners; expected well under a minute)
#   bounds  BOUNDS_TIMEOUT=30
#   plot    PLOT_TIMEOUT=20
# The sweep: per problem x dtype, 40% of its time on seeds + a random sample (--candidates 96), 60% on hill
# climbing from the fastest (see bench/README.md).
# SWEEP_ARGS adds options to the sweep (e.g. "--dtypes f32 --candidates 64 --random-share 0.3").
# SWEEP_FROM=path/to/gemm-sweep-winners.csv (absolute, or relative to the current folder or to the repo
# root, e.g. bench/results/gemm-sweep-winners.csv from an earlier call) starts from those winners: each
# seeds its problem's search, and stays unless the sweep finds a faster one or it is no longer legal
# (--merge), so several calls add up.
# Exits non-zero when a stage fails; later stages still run where they can.
set -uo pipefail

if (($# != 2)); then
  echo "usage: bash scripts/bench-on-device.sh BIN_DIR OUT_DIR" >&2
  exit 2
fi
bin=$(cd "$1" && pwd) || { echo "no such folder: $1" >&2; exit 2; }
mkdir -p "$2" || exit 2
out=$(cd "$2" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
exe=$bin/isaac-bench-gemm

SWEEP_BUDGET=${SWEEP_BUDGET:-360}
RUN_TIMEOUT=${RUN_TIMEOUT:-100}
BOUNDS_TIMEOUT=${BOUNDS_TIMEOUT:-30}
PLOT_TIMEOUT=${PLOT_TIMEOUT:-20}
SWEEP_ARGS=${SWEEP_ARGS:-}
SWEEP_FROM=${SWEEP_FROM:-}

failed=0
: >"$out/summary.txt"
note() { printf '%-7s %s\n' "$1" "$2" >>"$out/summary.txt"; }
stage() { printf '\n=== %s (%s) ===\n' "$*" "$(date -u +%H:%M:%S)"; }

# cuBLAS: the toolkit's folder, or wherever a Python package put it, if the loader does not find it.
find_cublas() {
  if ! ldd "$exe" | grep -q 'libcublas.*not found'; then return 0; fi
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64 \
    /usr/local/cuda-13*/targets/x86_64-linux/lib /opt/*/.venv/lib/python3*/site-packages/nvidia/cublas/lib \
    /opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib /usr/local/lib/python3*/dist-packages/nvidia/cublas/lib; do
    if [[ -e $d/libcublas.so.13 ]]; then
      export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      echo "cuBLAS from $d"
      break
    fi
  done
}

main() {
  stage "setup"
  echo "bin $bin, out $out, repo $repo"
  if [[ ! -x $exe ]]; then
    echo "FAILED: no $exe"
    note setup "FAILED: no isaac-bench-gemm in $bin"
    return 1
  fi
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,memory.used \
    --format=csv 2>&1 || true
  find_cublas
  if ldd "$exe" | grep 'not found'; then
    echo "FAILED: isaac-bench-gemm cannot load the libraries above"
    note setup "FAILED: missing shared libraries (see the log)"
    return 1
  fi
  ldd "$exe" | grep -E 'libisaac|cublas|benchmark' || true
  note setup ok

  # --- sweep ---------------------------------------------------------------------------------------------
  stage "sweep (budget ${SWEEP_BUDGET} s)"
  local t0=$SECONDS deadline=$((SECONDS + SWEEP_BUDGET)) attempt=1 rc=0 left
  local -a resume=()
  if [[ -n $SWEEP_FROM && ! -f $SWEEP_FROM && $SWEEP_FROM != /* && -f $repo/$SWEEP_FROM ]]; then
    SWEEP_FROM=$repo/$SWEEP_FROM
  fi
  if [[ -n $SWEEP_FROM ]]; then
    if [[ -f $SWEEP_FROM && $SWEEP_FROM -ef $out/gemm-sweep-winners.csv ]]; then
      echo "sweep: starting from the winners in $SWEEP_FROM (already in OUT)"
      resume=(--merge)
    elif [[ -f $SWEEP_FROM ]] && cp "$SWEEP_FROM" "$out/gemm-sweep-winners.csv"; then
      echo "sweep: starting from the winners in $SWEEP_FROM"
      resume=(--merge)
    else
      echo "sweep: SWEEP_FROM=$SWEEP_FROM is not a file; starting afresh"
    fi
  fi
  while :; do
    left=$((deadline - SECONDS))
    if ((left < 20)); then
      echo "sweep: no time left for attempt $attempt"
      break
    fi
    # shellcheck disable=SC2086
    timeout -k 10 $((left + 45)) "$exe" sweep --budget-seconds "$left" --out "$out/gemm-sweep-winners.csv" \
      --all "$out/gemm-sweep-all.csv" "${resume[@]}" $SWEEP_ARGS
    rc=$?
    if ((rc == 3 && attempt < 5)); then
      echo "sweep: a kernel broke the CUDA context; resuming without it (attempt $((attempt + 1)))"
      resume=(--resume)
      attempt=$((attempt + 1))
      continue
    fi
    break
  done
  case $rc in
    0) note sweep "ok ($((SECONDS - t0)) s, $attempt attempt(s))" ;;
    2) note sweep "PARTIAL: some problems have no winner (exit 2, $((SECONDS - t0)) s)"; failed=1 ;;
    124 | 137) note sweep "FAILED: killed by timeout after $((SECONDS - t0)) s (winners so far kept)"; failed=1 ;;
    *) note sweep "FAILED (exit $rc, $((SECONDS - t0)) s)"; failed=1 ;;
  esac
  local winners=0
  [[ -f $out/gemm-sweep-winners.csv ]] && winners=$(($(grep -vc '^#' "$out/gemm-sweep-winners.csv") - 1))
  echo "sweep: $winners winners in $out/gemm-sweep-winners.csv"
  if ((winners < 1)); then
    note run "skipped: no winners"
    note bounds "skipped: no winners"
    return 1
  fi

  # --- run: isaac vs cuBLAS ------------------------------------------------------------------------------
  stage "run (timeout ${RUN_TIMEOUT} s)"
  t0=$SECONDS
  timeout -k 10 "$RUN_TIMEOUT" "$exe" run --winners "$out/gemm-sweep-winners.csv" --csv "$out/h100-gemm.csv" \
    -- --benchmark_out="$out/gemm-run.json" --benchmark_out_format=json
  rc=$?
  if ((rc == 0)); then note run "ok ($((SECONDS - t0)) s)"; else note run "FAILED (exit $rc, $((SECONDS - t0)) s)"; failed=1; fi

  # --- bounds --------------------------------------------------------------------------------------------
  stage "bounds (timeout ${BOUNDS_TIMEOUT} s)"
  t0=$SECONDS
  timeout -k 10 "$BOUNDS_TIMEOUT" "$exe" bounds --winners "$out/gemm-sweep-winners.csv" --csv "$out/h100-gemm-bounds.csv"
  rc=$?
  if ((rc == 0)); then note bounds "ok ($((SECONDS - t0)) s)"; else note bounds "FAILED (exit $rc, $((SECONDS - t0)) s)"; failed=1; fi

  # --- plot ----------------------------------------------------------------------------------------------
  stage "plot"
  local py=""
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import matplotlib' 2>/dev/null; then py=$p; break; fi
  done
  if [[ ! -f $out/h100-gemm.csv ]]; then
    note plot "skipped: no h100-gemm.csv"
  elif [[ -z $py ]]; then
    note plot "skipped: no python3 with matplotlib (run bench/plot_gemm.py elsewhere)"
  elif timeout "$PLOT_TIMEOUT" "$py" "$repo/bench/plot_gemm.py" --csv "$out/h100-gemm.csv" --out "$out/h100-gemm.png"; then
    note plot ok
  else
    note plot "FAILED"
    failed=1
  fi
  return $failed
}

main 2>&1 | tee "$out/bench.log"
status=${PIPESTATUS[0]}
printf '\n=== summary ===\n' | tee -a "$out/bench.log"
tee -a "$out/bench.log" <"$out/summary.txt"
exit "$status"
