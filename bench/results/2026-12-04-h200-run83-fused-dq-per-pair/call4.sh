#!/bin/bash
# Call 4 (diagnostic, attribution only): Nsight Compute sections of the fused bounds-check kernel and of the floor's
# plain read kernel on set 10's 01, set 11's 01 and C2 (clocks as found: --clock-control none).
T=/tmp/c4; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
pack() { tar czf $OUT/all.tgz -C $T . ; }
sections="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats"
for S in 10:01 11:01; do
  set_no=${S%%:*}; c=${S##*:}; D=bench/tbe/test_set_$set_no
  flags=$(python3 -c "
import json,sys
for x in json.load(open('$D/manifest.json'))['configurations']:
    if x['name']=='test_set_${set_no}_$c': print(' '.join(x['flags']))")
  timeout 120 $NCU --clock-control none $sections -k regex:'bounds_check_fused|read_vectors' --launch-skip 2 --launch-count 3 \
    $P bench tbe --layout $D/test_set_${set_no}_$c.json $flags --reps 3 --warmup 1 --out $T/s${set_no}_$c.json > $T/ncu_s${set_no}_$c.txt 2>&1
  echo "ncu set $S rc=$?"; pack
done
timeout 120 $NCU --clock-control none $sections -k regex:'bounds_check_fused' --launch-skip 2 --launch-count 1 \
  $P bench tbe --config C2 --reps 3 --warmup 1 --out $T/c2.json > $T/ncu_c2.txt 2>&1; echo "ncu c2 rc=$?"
for f in $T/ncu_*.txt; do echo "== $f"; grep -E "bounds_check_fused|read_vectors|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|No Eligible|Waves Per SM|L2 Hit|Stall" $f | head -60; done
pack
