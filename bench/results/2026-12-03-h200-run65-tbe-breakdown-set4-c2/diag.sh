#!/bin/bash
# Diagnostic: per-kernel breakdown of set-4 (development) narrow / SGD cases, C2 step repeats.
T=/tmp/diag; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity
for i in 1 2 3; do timeout 60 $P bench tbe --config C2 --reps 30 --warmup 5 --out $T/c2_$i.json > $T/c2_$i.log 2>&1; echo "c2 $i rc=$?"; done
S=bench/tbe/test_set_4
for n in 00 02 03 06 08 09; do
  flags="$(python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "$S/manifest.json" "test_set_4_$n")"
  timeout 40 $P bench tbe --layout $S/test_set_4_$n.json $flags --reps 20 --warmup 3 --out $T/s4_$n.json > $T/s4_$n.log 2>&1; echo "s4_$n rc=$?"
done
OUT=$T TBE_BREAKDOWN_SET=$S TBE_BREAKDOWN_CONFIGS=test_set_4_00,test_set_4_02,test_set_4_03,test_set_4_06,test_set_4_08,test_set_4_09 timeout 300 scripts/gpu/tbe_kernel_breakdown_probe.sh build/prebuilt > $T/breakdown.log 2>&1
echo "breakdown rc=$?"
N=$(ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1); N=${N:-ncu}
timeout 120 $N --clock-control none --metrics gpu__time_duration.sum --csv $P bench tbe --config C2 --reps 2 --warmup 1 --out $T/c2_ncu.json > $T/tbe_breakdown_C2.csv 2> $T/c2_ncu.err; echo "c2 ncu rc=$?"
/opt/nvidia/nsight-compute/*/ncu --version 2>/dev/null | tail -1; which ncu nsys
tar czf $OUT/all.tgz -C $T .
