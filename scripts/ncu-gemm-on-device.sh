#!/usr/bin/env bash
# Nsight Compute's view of chosen GEMM rows, isaac beside cuBLAS: every kernel that
# `isaac-bench-gemm run` launches for one row (isaac's prepare/main/reduce and each cuBLAS candidate),
# with duration, DRAM bytes, achieved occupancy and launch shape, so that a gap to the roofline can be
# split into launches, bytes and latency. From the repository root, through the bundle:
#   ROWS="f16,DeepBench-F,2560,16 f16,LAPACK,4096,4096" bash .bundle/run-on-device.sh bash scripts/ncu-gemm-on-device.sh
# Writes $OUT/ncu-<dtype>-<suite>-<m>x<n>.csv (ncu's raw CSV) and prints a summary per row.
# NCU_CLOCKS=none times the kernels at the GPU's own clocks (ncu locks them to base by default).
set -uo pipefail
out=${OUT:?set OUT to the folder that receives the results}
bin=/tmp/isaac/bin
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,launch__grid_size,launch__block_size,launch__registers_per_thread,dram__throughput.avg.pct_of_peak_sustained_elapsed
for row in ${ROWS:?name the rows: dtype,suite,m,n ...}; do
  IFS=, read -r dtype suite m n <<<"$row"
  name=ncu-$dtype-$suite-${m}x$n
  { head -1 bench/results/gemm-sweep-winners.csv; grep "^$dtype,$suite,$m,$n," bench/results/gemm-sweep-winners.csv; } > /tmp/one.csv
  # Few repeats and no peak GEMM: every kernel launched is profiled, so keep the launches few.
  timeout 120 "$ncu" --clock-control "${NCU_CLOCKS:-base}" --csv --metrics "$metrics" \
    "$bin/isaac-bench-gemm" run --winners /tmp/one.csv --dtypes "$dtype" --repeats 3 --peak-size 256 \
    --csv /tmp/one-out.csv > "$out/$name.csv" 2> "$out/$name.err"
  echo "=== $row: ncu exit $? ==="
  python3 - "$out/$name.csv" <<'EOF'
import csv, sys, collections
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
per = collections.defaultdict(dict)
for r in csv.DictReader(rows):
    per[(r['ID'], r['Kernel Name'][:70])][r['Metric Name']] = r['Metric Value']
seen = collections.OrderedDict()
for (i, name), m in per.items():
    seen.setdefault(name, []).append(m)
for name, ms in seen.items():
    def med(key):
        v = sorted(float(x[key].replace(',', '')) for x in ms if key in x)
        return v[len(v) // 2] if v else float('nan')
    print(f"{len(ms):3d}x {name:70s} {med('gpu__time_duration.sum')/1e3:8.2f} us  rd {med('dram__bytes_read.sum')/1e6:7.2f} MB"
          f"  wr {med('dram__bytes_write.sum')/1e6:7.2f} MB  dram {med('dram__throughput.avg.pct_of_peak_sustained_elapsed'):5.1f}%"
          f"  warps {med('sm__warps_active.avg.pct_of_peak_sustained_active'):5.1f}%  grid {med('launch__grid_size'):.0f}"
          f" x {med('launch__block_size'):.0f}  regs {med('launch__registers_per_thread'):.0f}")
EOF
done
