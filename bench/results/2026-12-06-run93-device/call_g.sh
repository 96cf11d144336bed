#!/bin/bash
# Call G (binary 69cb8b4; set 16 is spent, so development figures): every forward kernel on set 16's forward misses
# (01, 03, 06, 07, 09), two runs each.
T=/tmp/r93g; mkdir -p $T/r1 $T/r2 build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
for r in r1 r2; do
  OUT=$T/$r TBE_SWEEP_SET=bench/tbe/test_set_16 TBE_SWEEP_CONFIGS=test_set_16_01,test_set_16_03,test_set_16_06,test_set_16_07,test_set_16_09 \
    timeout 250 scripts/gpu/tbe_forward_sweep_probe.sh build/pm > $T/$r/sweep.log 2>&1; echo "$r rc=$?"
done
grep -v "      -  " $T/r1/tbe_forward_sweep.txt | head -80
grep -E "kAuto|^  (auto|warp_tile_one_hot_wide_rows|wide_rows) " $T/r2/tbe_forward_sweep.txt
tar czf $OUT/call_g.tgz -C $T .
