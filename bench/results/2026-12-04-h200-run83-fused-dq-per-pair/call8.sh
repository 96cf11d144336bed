#!/bin/bash
# Call 8 (diagnostic): Nsight Compute stall breakdown of the fused bounds check on set 11's 01 (1d5da01).
T=/tmp/c8; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
D=bench/tbe/test_set_11; flags=$(python3 -c "
import json
for x in json.load(open('$D/manifest.json'))['configurations']:
    if x['name']=='test_set_11_01': print(' '.join(x['flags']))")
timeout 120 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats --section SourceCounters --section Occupancy --print-details all \
  -k regex:bounds_check_fused --launch-skip 2 --launch-count 1 $P bench tbe --layout $D/test_set_11_01.json $flags --reps 3 --warmup 1 --out $T/s.json > $T/ncu_s11_01.txt 2>&1
echo "rc=$?"; grep -v "^ *-\+ *$" $T/ncu_s11_01.txt | grep -E -i "Duration|DRAM Through|stall|Stalled|Warp Cycles|No Eligible|Occupancy|Branch|Uncoalesced" | head -60
tar czf $OUT/all.tgz -C $T .
