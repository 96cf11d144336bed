#!/bin/bash
# Call 6 (diagnostic, attribution only): Nsight Compute warp-state sections of set 11's 01 bounds check (rolled walk)
# and of the small D=16 forward / backward kernels of set 11's 04 and 05 (clocks as found).
T=/tmp/c6; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
pack() { tar czf $OUT/all.tgz -C $T . ; }
sections="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
D=bench/tbe/test_set_11
for c in 01 04 05; do
  flags=$(python3 -c "
import json
for x in json.load(open('$D/manifest.json'))['configurations']:
    if x['name']=='test_set_11_$c': print(' '.join(x['flags']))")
  timeout 100 $NCU --clock-control none $sections -k regex:'bounds_check_fused|tbe_forward|tbe_backward_chunk|tbe_backward_combine|radix_scatter|tbe_linearize' --launch-skip 0 --launch-count 12 \
    $P bench tbe --layout $D/test_set_11_$c.json $flags --reps 1 --warmup 0 --out $T/s11_$c.json > $T/ncu_s11_$c.txt 2>&1
  echo "ncu $c rc=$?"
  python3 - $T/ncu_s11_$c.txt <<'PY'
import re, sys
name=None; seen=set()
for line in open(sys.argv[1], errors='replace'):
    m = re.match(r'\s+(void )?([A-Za-z_0-9]+)[<(]', line)
    if m and ('Context' in line): name = m.group(2); continue
    for key in ('Duration', 'DRAM Throughput', 'No Eligible', 'Achieved Occupancy', 'Registers Per Thread', 'Grid Size'):
        if name and re.match(r'\s+' + key + r'\s', line): print(f'{name:40s} {" ".join(line.split())}')
    m2 = re.search(r'spends ([0-9.]+) cycles being stalled (\w+ )?(.*?)\.', line)
    if name and 'each warp of this workload spends' in line: print(f'{name:40s} STALL {line.strip()[:150]}'); nxt = True; continue
    if name and globals().get('nxt'): print(f'{name:40s}       {line.strip()[:150]}'); nxt = False
PY
done
pack
