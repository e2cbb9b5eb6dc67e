#!/usr/bin/env bash
# Round 67, call 2 (0.1.49 + the bench's Problem initialisers fixed): `run` with its ceilings (the
# peaks had failed since 2026-11-29: a batch of 8192 empty GEMMs), its floor CSV and plots; `bounds`
# (also broken by the same field); Nsight Compute on f16 DeepBench-F 2560x128 and 2560x64, the tuned
# sets of round 66 and the committed winners, beside cuBLAS, at the GPU's own clocks.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o2
echo "=== run $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c2-run timeout 300 /tmp/isaac/bin/isaac-bench-gemm run --winners bench/results/gemm-sweep-winners.csv \
  --csv "$OUT/h200-gemm.csv" --floor-csv "$OUT/h200-gemm-floor.csv" > /tmp/o2/run.log 2>&1
echo "exit $?"; sed -n '1,8p' /tmp/o2/run.log | grep -v "^20\|Running"; sed -n '/Bandwidth-bound rows against/,$p' /tmp/o2/run.log | head -24
python3 bench/plot_gemm.py --csv "$OUT/h200-gemm.csv" --out "$OUT/h200-gemm.png" 2>&1 | tail -1
python3 bench/plot_floor.py --csv "$OUT/h200-gemm-floor.csv" --out "$OUT/h200-gemm-floor.png" 2>&1 | tail -1
echo "=== bounds $(date -u +%T) $SECONDS s"
ISAAC_CACHE_DIR=/tmp/c2-bounds timeout 120 /tmp/isaac/bin/isaac-bench-gemm bounds --csv "$OUT/h200-gemm-bounds.csv" > /tmp/o2/bounds.log 2>&1
echo "exit $?"; grep -v "^isaac/\|^cublas/\|^---\|^Benchmark\|^20\|Running\|CPU\|L[123] \|Load Av\|WARNING" /tmp/o2/bounds.log | tail -15
echo "=== ncu $(date -u +%T) $SECONDS s"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,launch__grid_size,launch__block_size,launch__registers_per_thread,dram__throughput.avg.pct_of_peak_sustained_elapsed
head -1 bench/results/gemm-sweep-winners.csv > /tmp/o2/sets.csv
grep "^f16,DeepBench-F,2560,\(128\|64\)," bench/results/gemm-sweep-winners.csv >> /tmp/o2/sets.csv
for which in committed tuned; do
  if [[ $which == tuned ]]; then
    { head -1 bench/results/gemm-sweep-winners.csv
      echo 'f16,DeepBench-F,2560,128,2560,0,0,"ML=128,NL=64,MS=16,NS=4,U=64,KS=1,KL=1,KG=3,VA=8,VB=8,LA=16,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1,ST=8",0,0,0,0'
      echo 'f16,DeepBench-F,2560,64,2560,0,0,"ML=128,NL=32,MS=16,NS=2,U=64,KS=1,KL=1,KG=3,VA=8,VB=8,LA=16,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1,ST=9",0,0,0,0'
    } > /tmp/o2/sets.csv
  fi
  timeout 150 "$ncu" --clock-control none --csv --metrics "$metrics" /tmp/isaac/bin/isaac-bench-gemm run --winners /tmp/o2/sets.csv \
    --dtypes f16 --repeats 5 --peak-size 256 --csv /tmp/o2/ncu-run.csv --floor-csv /tmp/o2/ncu-floor.csv > /tmp/o2/ncu-$which.csv 2> /tmp/o2/ncu-$which.err
  echo "--- $which: ncu exit $?"
  python3 - /tmp/o2/ncu-$which.csv <<'PY'
import csv, sys, collections
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
per = collections.defaultdict(dict)
for r in csv.DictReader(rows):
    per[(r['ID'], r['Kernel Name'][:60])][r['Metric Name']] = r['Metric Value']
seen = collections.OrderedDict()
for (i, name), m in per.items():
    seen.setdefault((name, m.get('launch__grid_size')), []).append(m)
for (name, grid), ms in seen.items():
    def med(key):
        v = sorted(float(x[key].replace(',', '')) for x in ms if key in x)
        return v[len(v) // 2] if v else float('nan')
    print(f"{len(ms):3d}x {name:60s} {med('gpu__time_duration.sum')/1e3:7.2f} us rd {med('dram__bytes_read.sum')/1e6:6.2f} MB"
          f" wr {med('dram__bytes_write.sum')/1e6:6.2f} MB dram {med('dram__throughput.avg.pct_of_peak_sustained_elapsed'):5.1f}%"
          f" warps {med('sm__warps_active.avg.pct_of_peak_sustained_active'):5.1f}% grid {med('launch__grid_size'):.0f}"
          f" x {med('launch__block_size'):.0f} regs {med('launch__registers_per_thread'):.0f}")
PY
done
tar cJf "$OUT/call2.tar.xz" -C /tmp/o2 .
echo "=== done $(date -u +%T) $SECONDS s"
