#!/bin/bash
# Session call 7: the many-bags rule as committed: GPU tests; C2 step (its forward now on the wide tiles) and
# C3/C6/D3/D5 (kAuto's choice and time); development layouts the rule takes (s5_00, s7_02) and two synthetic ones.
T=/tmp/c7; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 240 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*Tbe*:*Embedding*:*Radix*:*ShortChunks*' > $T/gpu_tests.log 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -E '^\[  FAILED' $T/gpu_tests.log | head -5; pack
for round in 1 2; do timeout 90 $P bench tbe --config C2 --reps 30 --warmup 5 --out $T/c2_$round.json > $T/c2_$round.log 2>&1
  echo "C2 $round rc=$? $(python3 -c "import json;d=json.load(open('$T/c2_$round.json'));print('step',d['step_fwd_bwd_opt']['median_ms'],'fwd',d['forward']['median_ms'],d['forward']['tbps'],'bwd',d['backward_fused']['median_ms'],d['forward_auto_kernel'])" 2>&1)"; done; pack
for c in C3 C6 D3 D5 C5; do timeout 60 $P bench tbe --config $c --forward-only --forward-variant auto,wide_rows,warp_tile_one_hot_wide_rows --reps 20 --warmup 3 --out $T/n_$c.json > $T/n_$c.log 2>&1; echo "$c rc=$? $(head -1 $T/n_$c.log | sed 's/.*auto = //') $(grep -E 'forward ' $T/n_$c.log | awk '{printf "%s %s %s | ", $2, $4, $10}')"; done; pack
flags_of() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "$1/manifest.json" "$2"; }
for c in 5:00 7:02; do s=${c%%:*}; n=${c##*:}; S=bench/tbe/test_set_$s
  timeout 60 $P bench tbe --layout $S/test_set_${s}_$n.json $(flags_of $S test_set_${s}_$n) --forward-only --forward-variant auto,wide_rows,warp_tile_one_hot_wide_rows --reps 20 --warmup 3 --out $T/d_${s}_$n.json > $T/d_${s}_$n.log 2>&1; echo "s${s}_$n rc=$? $(head -1 $T/d_${s}_$n.log | sed 's/.*auto = //') $(grep -E 'forward ' $T/d_${s}_$n.log | awk '{printf "%s %s %s | ", $2, $4, $10}')"; done
timeout 60 $P bench tbe --tables 4 --rows 1000000 --dim 68 --batch 65536 --pooling-factor 8 --dtype fp16 --index-dtype int32 --forward-only --forward-variant auto,wide_rows --reps 20 --warmup 3 --out $T/syn1.json > $T/syn1.log 2>&1; echo "syn fp16 D68 262k L8 $(head -1 $T/syn1.log | sed 's/.*auto = //') $(grep -E 'forward ' $T/syn1.log | awk '{printf "%s %s %s | ", $2, $4, $10}')"
pack
