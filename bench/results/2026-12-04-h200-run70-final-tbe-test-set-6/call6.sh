#!/bin/bash
# Call 6 (final TBE): GPU tests; the mixed-width short-bags rule A/B on development cases and named C5/C7;
# held-out TBE test set 6 scored once (SGD configurations also with atomic SGD by name); C2.
T=/tmp/c6; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 200 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*Tbe*:*Embedding*:*Radix*:*ShortChunks*' > $T/gpu_tests.log 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; pack
mkdir -p $T/set6
OUT=$T/set6 TBE_TEST_SET=bench/tbe/test_set_6 timeout 260 scripts/gpu/tbe_test_set.sh build/prebuilt > $T/set6.log 2>&1; echo "set6 rc=$?"; tail -14 $T/set6/tbe_test_set.txt; pack
S=bench/tbe/test_set_6
python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    if 'sgd' in c['flags']: print(c['name'], c['layout'], ' '.join(c['flags']), sep='\t')" > $T/sgd_configs.tsv
while IFS=$'\t' read -r name layout flags; do
  timeout 30 $P bench tbe --layout $S/$layout $flags --backward-variant atomic_sgd --reps 10 --warmup 3 --out $T/set6/atomic_$name.json > $T/set6/atomic_$name.log 2>&1; echo "atomic $name rc=$? $(grep 'fwd + bwd' $T/set6/atomic_$name.log | awk '{print $7}')"
done < $T/sgd_configs.tsv; pack
flags_of() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "bench/tbe/test_set_$1/manifest.json" "test_set_$1_$2"; }
FV=auto,wide_rows,warp_tile_short_bags_light,warp_tile_one_hot_wide_rows
for c in 1:05 2:08 3:04 3:08 4:02 5:05 1:07 5:07; do s=${c%%:*}; n=${c##*:}
  timeout 60 $P bench tbe --layout bench/tbe/test_set_$s/test_set_${s}_$n.json $(flags_of $s $n) --forward-only --forward-variant $FV --reps 20 --warmup 3 --out $T/rule_${s}_$n.json > $T/rule_${s}_$n.log 2>&1; echo "${s}_$n rc=$? $(grep -E 'forward (auto|wide_rows|warp_tile_short_bags_light) ' $T/rule_${s}_$n.log | awk '{printf "%s %s %s | ", $2, $4, $10}')"
done
for c in C5 C7; do timeout 60 $P bench tbe --config $c --forward-only --forward-variant $FV --reps 20 --warmup 3 --out $T/rule_$c.json > $T/rule_$c.log 2>&1; echo "$c rc=$? $(grep -E 'forward (auto|wide_rows|warp_tile_short_bags_light) ' $T/rule_$c.log | awk '{printf "%s %s %s | ", $2, $4, $10}')"; done
pack
for i in 1 2; do timeout 40 $P bench tbe --config C2 --reps 30 --warmup 5 --out $T/c2_$i.json > $T/c2_$i.log 2>&1; echo "c2 $i rc=$? $(grep -E 'forward  |fwd \+ bwd' $T/c2_$i.log | awk '{print $1, $4, $5, $6, $7}' | tr '\n' ' ')"; done; pack
