#!/bin/bash
# Call 1: GPU TBE tests on the narrow rows' 16-byte pieces; set 9 rerun (development now); packed/aligned A/B on 04/09;
# nsys kernel breakdown of the SGD steps of set 9's 03 and 02.
T=/tmp/c1; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 240 build/prebuilt/tests/parity_gpu_tests --gtest_filter='GpuTbe*:*Tbe*' > $T/gpu_tests.log 2>&1; echo "tests rc=$?"; tail -3 $T/gpu_tests.log; grep -a "FAILED" $T/gpu_tests.log | head
S=bench/tbe/test_set_9
mkdir -p $T/set9
OUT=$T/set9 TBE_TEST_SET=$S timeout 300 scripts/gpu/tbe_test_set.sh build/prebuilt > $T/set9.log 2>&1; echo "set9 rc=$?"; tail -14 $T/set9/tbe_test_set.txt; pack
grep -h 'auto =' $T/set9/tbe_test_set_9_*.log | sed 's/.*auto = //' | paste -sd' '
for c in 04 09 05; do for rs in packed aligned; do
  timeout 60 $P bench tbe --layout $S/test_set_9_$c.json --forward-only --forward-variant auto,narrow_rows,narrow_rows_split_bags,lane_rows,warp_tile_short_bags_light --row-stride $rs --reps 20 --warmup 3 --out $T/ab_${c}_$rs.json > $T/ab_${c}_$rs.log 2>&1
  echo "$c $rs rc=$? $(python3 -c "
import json; d=json.load(open('$T/ab_${c}_$rs.json')); fv=d.get('forward_variants',{})
print(d.get('forward_auto_kernel'), ' '.join(f'{k}={v[\"median_ms\"]*1000:.1f}' for k,v in fv.items() if isinstance(v,dict) and 'median_ms' in v))" 2>&1)"
done; done; pack
which nsys || ls /usr/local/cuda/bin | grep -i nsys
for c in 03 02; do
  flags=$(python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    if c['name'].endswith('_$c'): print(' '.join(c['flags']))")
  timeout 120 nsys profile -o $T/nsys_$c --force-overwrite true $P bench tbe --layout $S/test_set_9_$c.json $flags --backward-variant batched --reps 5 --warmup 2 > $T/nsys_$c.log 2>&1; echo "nsys $c rc=$?"
  nsys stats --report cuda_gpu_kern_sum --format csv $T/nsys_$c.nsys-rep > $T/kern_$c.csv 2>/dev/null; head -25 $T/kern_$c.csv | cut -c1-220
  rm -f $T/nsys_$c.sqlite
done; pack
