#!/bin/bash
# Session call 2 (final TBE): GPU tests; held-out TBE test set 8 scored once (SGD configurations also with atomic SGD
# by name; then, as a diagnostic, the configurations whose rows the rule pads also with --row-stride packed); run 74's
# one-hot D=28 bf16 layout packed / aligned beside D=32; C2 twice.
T=/tmp/c2; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 200 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*Tbe*:*Embedding*:*Radix*:*ShortChunks*:*RowStride*' > $T/gpu_tests.log 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -E '^\[  FAILED' $T/gpu_tests.log | head -5; pack
S=bench/tbe/test_set_8
mkdir -p $T/set8
OUT=$T/set8 TBE_TEST_SET=$S timeout 300 scripts/gpu/tbe_test_set.sh build/prebuilt > $T/set8.log 2>&1; echo "set8 rc=$?"; tail -14 $T/set8/tbe_test_set.txt; pack
python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    print(c['name'], c['layout'], ' '.join(c['flags']), sep='\t')" > $T/configs.tsv
while IFS=$'\t' read -r name layout flags; do
  [[ "$flags" == *sgd* && "$flags" != *adagrad* ]] || continue
  timeout 30 $P bench tbe --layout $S/$layout $flags --backward-variant atomic_sgd --reps 10 --warmup 3 --out $T/set8/atomic_$name.json > $T/set8/atomic_$name.log 2>&1; echo "atomic $name rc=$? $(grep 'fwd + bwd' $T/set8/atomic_$name.log | awk '{print $7}')"
done < $T/configs.tsv; pack
while IFS=$'\t' read -r name layout flags; do
  grep -q 'rows padded' $T/set8/*${name}*.log 2>/dev/null || continue
  timeout 40 $P bench tbe --layout $S/$layout $flags --row-stride packed --reps 10 --warmup 3 --out $T/set8/packed_$name.json > $T/set8/packed_$name.log 2>&1
  echo "packed $name rc=$? $(grep -E 'forward auto|fwd \+ bwd' $T/set8/packed_$name.log | awk '{printf "%s %s | ", $1, $4}')"
done < $T/configs.tsv; pack
for v in 28:packed 28:aligned 32:packed; do d=${v%%:*}; rs=${v##*:}
  timeout 60 $P bench tbe --tables 31 --rows 3000000 --dim $d --batch 65536 --pooling-factor one-hot --dtype bf16 --forward-only --row-stride $rs --reps 20 --warmup 3 --out $T/onehot_${d}_$rs.json > $T/onehot_${d}_$rs.log 2>&1
  echo "onehot D=$d $rs rc=$? $(grep 'forward auto' $T/onehot_${d}_$rs.log)"
done; pack
for round in 1 2; do timeout 90 $P bench tbe --config C2 --reps 30 --warmup 5 --out $T/c2_$round.json > $T/c2_$round.log 2>&1
  echo "C2 $round rc=$? $(python3 -c "import json;d=json.load(open('$T/c2_$round.json'));print('step',d['step_fwd_bwd_opt']['median_ms'],'fwd',d['forward']['median_ms'],'bounds',d['bounds_check_clean']['median_ms'])" 2>&1)"; done; pack
