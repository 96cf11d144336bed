#!/bin/bash
# Call 2: one-hot positional index guess (A: 4 blocks/SM; B: 6 blocks/SM, spills) on one-hot dev cases; GPU tests; ncu of the attention backward pieces.
T=/tmp/c2; mkdir -p $T build/prebuilt build/prebuilt_b
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
tar -C build/prebuilt_b -xaf build/carry/prebuilt_b.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
G=build/prebuilt/tests/parity_gpu_tests
timeout 200 $G --gtest_filter='*TbeForward*:*Tbe*Forward*:*ForwardCandidates*' > $T/tests_fwd.log 2>&1; echo "tests_fwd rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/tests_fwd.log | head -3 | tr '\n' ' ')"; tar czf $OUT/all.tgz -C $T .
flags_of() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "bench/tbe/test_set_$1/manifest.json" "test_set_$1_$2"; }
CASES="5:03 5:04 5:01 4:06 4:07 4:09 1:02 1:04 3:00 2:05"
for build in prebuilt prebuilt_b; do
  P=build/$build/bin/parity
  for c in $CASES; do s=${c%%:*}; n=${c##*:}
    timeout 40 $P bench tbe --layout bench/tbe/test_set_$s/test_set_${s}_$n.json $(flags_of $s $n) --forward-only --forward-variant auto,warp_tile_one_hot,warp_tile_one_hot_wide_rows --reps 30 --warmup 3 --out $T/${build}_${s}_$n.json > $T/${build}_${s}_$n.log 2>&1; echo "$build ${s}_$n rc=$?"
  done
  tar czf $OUT/all.tgz -C $T .
done
timeout 60 build/prebuilt/bin/parity bench tbe --config C2 --forward-only --reps 30 --warmup 5 --out $T/c2.json > $T/c2.log 2>&1; echo "c2 rc=$?"
timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
  build/prebuilt/bin/parity bench attention --config targets --seq-len 2048 --reps 1 --warmup 0 --check-rows 1 > $T/ncu_attn.log 2>&1; echo "ncu attn rc=$?"
tar czf $OUT/all.tgz -C $T .
