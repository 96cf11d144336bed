#!/bin/bash
# Session call 2: tests; C2 step with the sort's first histogram counted in the linearise (indices prefetched)
# against the separate histogram, alternated; the fp32 short-bags rule (auto) against the light short-bag tiles
# (the previous choice) on the development layouts it changes; small steps A/B.
T=/tmp/c2; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 240 $G --gtest_brief=1 --gtest_filter='*TbeBackward*:*Radix*:*GpuTbeForward*:*LinearizeTiles*' > $T/gpu_tests.log 2>&1; echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -E '^\[  FAILED' $T/gpu_tests.log | head -5; pack
for round in 1 2 3; do for v in row separate_sort_histogram; do
  timeout 90 $P bench tbe --config C2 --reps 30 --warmup 5 --backward-variant $v --out $T/c2_${v}_$round.json > $T/c2_${v}_$round.log 2>&1
  echo "C2 $round $v rc=$? $(python3 -c "import json;d=json.load(open('$T/c2_${v}_$round.json'));print('step',d['step_fwd_bwd_opt']['median_ms'],'bwd',d['backward_fused']['median_ms'],'fwd',d['forward']['median_ms'])" 2>&1)"
done; done; pack
flags_of() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "$1/manifest.json" "$2"; }
fv=auto,warp_tile_short_bags_light,warp_tile_one_hot_wide_rows
for c in 2:00 3:04 4:01; do s=${c%%:*}; n=${c##*:}; S=bench/tbe/test_set_$s
  timeout 60 $P bench tbe --layout $S/test_set_${s}_$n.json $(flags_of $S test_set_${s}_$n) --forward-only --forward-variant $fv --reps 30 --warmup 3 --out $T/rule_${s}_$n.json > $T/rule_${s}_$n.log 2>&1; echo "rule $s $n rc=$?"; grep "forward " $T/rule_${s}_$n.log
done
for n in C7 D4; do timeout 90 $P bench tbe --config $n --forward-only --forward-variant $fv --reps 30 --warmup 3 --out $T/rule_$n.json > $T/rule_$n.log 2>&1; echo "rule $n rc=$?"; grep "forward " $T/rule_$n.log; done; pack
for round in 1 2; do for c in 4:00 4:03 4:06 6:02; do s=${c%%:*}; n=${c##*:}; S=bench/tbe/test_set_$s
  for v in row separate_sort_histogram; do
    timeout 60 $P bench tbe --layout $S/test_set_${s}_$n.json $(flags_of $S test_set_${s}_$n) --reps 20 --warmup 3 --backward-variant $v --out $T/step_${s}_${n}_${v}_$round.json > $T/step_${s}_${n}_${v}_$round.log 2>&1
    echo "step $round set$s $n $v rc=$? $(python3 -c "import json;d=json.load(open('$T/step_${s}_${n}_${v}_$round.json'));print(d['step_fwd_bwd_opt']['median_ms'], d['backward_fused']['median_ms'])" 2>&1)"
  done; done; done; pack
