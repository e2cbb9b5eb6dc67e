#!/usr/bin/env bash
# Round 67, call 3: is L2 -> SM traffic what holds the thin f16 rows? Nsight Compute's SpeedOfLight
# and memory-workload sections on isaac's main kernels (the tuned sets of f16 DeepBench-F 2560x128 and
# 2560x64, and the committed 64 x 64 KG = 1 winner of 2560x128) and cuBLAS's kernels, at the GPU's clocks.
set -uo pipefail
cd "$(dirname "$0")/.."
bash .bundle/run-on-device.sh true > /dev/null
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/o3
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
{ head -1 bench/results/gemm-sweep-winners.csv
  echo 'f16,DeepBench-F,2560,128,2560,0,0,"ML=128,NL=64,MS=16,NS=4,U=64,KS=1,KL=1,KG=3,VA=8,VB=8,LA=16,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1,ST=8",0,0,0,0'
  echo 'f16,DeepBench-F,2560,64,2560,0,0,"ML=128,NL=32,MS=16,NS=2,U=64,KS=1,KL=1,KG=3,VA=8,VB=8,LA=16,LB=8,DB=1,SW=1,ACC=32,TC=2,TMA=1,ST=9",0,0,0,0'
  grep "^f16,DeepBench-B,2560,128," bench/results/gemm-sweep-winners.csv
} > /tmp/o3/sets.csv
cat /tmp/o3/sets.csv
echo "=== ncu $(date -u +%T) $SECONDS s"
timeout 400 "$ncu" --clock-control none -k 'regex:^(isaac_gemm_f16_[NT]N|nvjet)' --launch-skip 0 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
  --metrics lts__t_sectors_srcunit_tex_op_read.sum,lts__t_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum \
  --csv --page raw /tmp/isaac/bin/isaac-bench-gemm run --winners /tmp/o3/sets.csv --dtypes f16 --repeats 3 --peak-size 256 \
  --lt-algorithms 3 --csv /tmp/o3/run.csv --floor-csv /tmp/o3/floor.csv > /tmp/o3/ncu.csv 2> /tmp/o3/ncu.err
echo "ncu exit $?"; tail -3 /tmp/o3/ncu.err
python3 - /tmp/o3/ncu.csv <<'PY'
import csv, sys, collections
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rd = list(csv.reader(lines))
head = rd[0]; rows = rd[2:]  # second line holds units
col = {h: i for i, h in enumerate(head)}
want = ['gpu__time_duration.sum', 'launch__grid_size', 'launch__block_size', 'dram__bytes_read.sum',
        'lts__t_bytes.sum', 'lts__throughput.avg.pct_of_peak_sustained_elapsed', 'l1tex__m_xbar2l1tex_read_bytes.sum',
        'dram__throughput.avg.pct_of_peak_sustained_elapsed', 'sm__throughput.avg.pct_of_peak_sustained_elapsed',
        'sm__warps_active.avg.pct_of_peak_sustained_active']
groups = collections.OrderedDict()
for r in rows:
    key = (r[col['Kernel Name']][:48], r[col['launch__grid_size']])
    groups.setdefault(key, []).append(r)
print(' | '.join(['kernel', 'grid'] + [w.split('.')[0].replace('__', ':') for w in want]))
for (name, grid), rs in groups.items():
    def med(w):
        if w not in col: return float('nan')
        v = sorted(float(r[col[w]].replace(',', '')) for r in rs if r[col[w]] not in ('', 'n/a'))
        return v[len(v)//2] if v else float('nan')
    print(f"{len(rs):2d}x {name:48s} {grid:>4s} " + ' '.join(f"{med(w):.4g}" for w in want))
PY
tar cJf "$OUT/call3.tar.xz" -C /tmp/o3 .
echo "=== done $(date -u +%T) $SECONDS s"
