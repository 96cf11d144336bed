#!/bin/bash
# Session call 3 (final TBE + GEMM latency): GPU tests; held-out TBE test set 7 scored once (SGD configurations also
# with atomic SGD by name); the fp32 short-bags rule as committed on the five development layouts; C2; GEMM
# selection latency with the tighter Hopper bounds.
T=/tmp/c3; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 200 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*Tbe*:*Embedding*:*Radix*:*ShortChunks*:*Gemm*' > $T/gpu_tests.log 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -E '^\[  FAILED' $T/gpu_tests.log | head -5; pack
mkdir -p $T/set7
OUT=$T/set7 TBE_TEST_SET=bench/tbe/test_set_7 timeout 280 scripts/gpu/tbe_test_set.sh build/prebuilt > $T/set7.log 2>&1; echo "set7 rc=$?"; tail -14 $T/set7/tbe_test_set.txt; pack
S=bench/tbe/test_set_7
python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    if 'sgd' in c['flags']: print(c['name'], c['layout'], ' '.join(c['flags']), sep='\t')" > $T/sgd_configs.tsv
while IFS=$'\t' read -r name layout flags; do
  timeout 30 $P bench tbe --layout $S/$layout $flags --backward-variant atomic_sgd --reps 10 --warmup 3 --out $T/set7/atomic_$name.json > $T/set7/atomic_$name.log 2>&1; echo "atomic $name rc=$? $(grep 'fwd + bwd' $T/set7/atomic_$name.log | awk '{print $7}')"
done < $T/sgd_configs.tsv; pack
for hw in h200 mi300x mi350x; do timeout 90 $P gemm select --hw $hw --latency > $T/latency_$hw.txt 2>&1; echo "latency $hw rc=$? $(grep -E '^  p50|aligned shapes' $T/latency_$hw.txt | tr '\n' ' ')"; done; pack
flags_of() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "$1/manifest.json" "$2"; }
fv=auto,warp_tile_short_bags_light,warp_tile_one_hot_wide_rows
for c in 2:00 3:04 4:01; do s=${c%%:*}; n=${c##*:}; S=bench/tbe/test_set_$s
  timeout 60 $P bench tbe --layout $S/test_set_${s}_$n.json $(flags_of $S test_set_${s}_$n) --forward-only --forward-variant $fv --reps 30 --warmup 3 --out $T/rule_${s}_$n.json > $T/rule_${s}_$n.log 2>&1; echo "rule $s $n rc=$? $(grep -E 'forward ' $T/rule_${s}_$n.log | awk '{printf "%s %s | ", $2, $4}')"
done
for n in C7 D4; do timeout 90 $P bench tbe --config $n --forward-only --forward-variant $fv --reps 30 --warmup 3 --out $T/rule_$n.json > $T/rule_$n.log 2>&1; echo "rule $n rc=$? $(grep -E 'forward ' $T/rule_$n.log | awk '{printf "%s %s | ", $2, $4}')"; done; pack
for round in 1 2; do timeout 90 $P bench tbe --config C2 --reps 30 --warmup 5 --out $T/c2_$round.json > $T/c2_$round.log 2>&1
  echo "C2 $round rc=$? $(python3 -c "import json;d=json.load(open('$T/c2_$round.json'));print('step',d['step_fwd_bwd_opt']['median_ms'],'fwd',d['forward']['median_ms'],'bounds',d['bounds_check_clean']['median_ms'])" 2>&1)"; done
for hw in h200; do timeout 90 $P gemm select --hw $hw --latency > $T/latency2_$hw.txt 2>&1; echo "latency2 $hw rc=$? $(grep -E '^  p50|aligned shapes' $T/latency2_$hw.txt | tr '\n' ' ')"; done; pack
