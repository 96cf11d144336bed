#!/bin/bash
# Call 4: onesweep with early aggregates and windowed look-back vs reduce-then-scan.
T=/tmp/c4; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
G=build/prebuilt/tests/parity_gpu_tests
P=build/prebuilt/bin/parity
timeout 120 $G --gtest_filter='*Radix*:GpuTbeBackward.*' > $T/tests.log 2>&1; echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/tests.log | head -3 | tr '\n' ' ')"; tar czf $OUT/all.tgz -C $T .
for i in 1 2; do for v in both reduce_then_scan_sort; do
  timeout 60 $P bench tbe --config C2 --backward-variant $v --reps 30 --warmup 5 --out $T/c2_${v}_$i.json > $T/c2_${v}_$i.log 2>&1; echo "c2 $v $i rc=$? $(grep 'fwd + bwd' $T/c2_${v}_$i.log | awk '{print $7}')"
done; done
tar czf $OUT/all.tgz -C $T .
flags_of() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "bench/tbe/test_set_$1/manifest.json" "test_set_$1_$2"; }
for c in 4:00 4:06 5:09; do s=${c%%:*}; n=${c##*:}
  for v in both reduce_then_scan_sort; do
    timeout 60 $P bench tbe --layout bench/tbe/test_set_$s/test_set_${s}_$n.json $(flags_of $s $n) --backward-variant $v --reps 20 --warmup 3 --out $T/step_${s}_${n}_$v.json > $T/step_${s}_${n}_$v.log 2>&1; echo "step ${s}_$n $v rc=$? $(grep 'fwd + bwd' $T/step_${s}_${n}_$v.log | awk '{print $7}')"
  done
done
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:radix $P bench tbe --config C2 --reps 1 --warmup 0 > $T/ncu_c2_sort.log 2>&1; echo "ncu rc=$?"
grep -E "radix|gpu__time" $T/ncu_c2_sort.log | sed 's/(const.*//' | paste - - | awk '{print $1,$2,$(NF)}' | head -4
tar czf $OUT/all.tgz -C $T .
