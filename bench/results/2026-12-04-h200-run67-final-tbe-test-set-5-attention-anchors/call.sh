#!/bin/bash
# Call 3 (final TBE + attention anchors): selection latency, GPU tests of this round's areas, held-out TBE test
# set 5 (scored once; SGD configurations also with the atomic SGD backward by name), C2, attention with anchors.
T=/tmp/c3; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
for hw in h200 mi300x mi350x; do timeout 60 $P gemm select --hw $hw --latency > $T/latency_$hw.txt 2>&1; echo "latency $hw rc=$?"; done
timeout 170 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*Attention*Backward*:*Tbe*:*Embedding*:*Radix*:*ShortChunks*' > $T/gpu_tests.log 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; pack
mkdir -p $T/set5
OUT=$T/set5 TBE_TEST_SET=bench/tbe/test_set_5 timeout 230 scripts/gpu/tbe_test_set.sh build/prebuilt > $T/set5.log 2>&1; echo "set5 rc=$?"; pack
S=bench/tbe/test_set_5
python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    if 'sgd' in c['flags']: print(c['name'], c['layout'], ' '.join(c['flags']), sep='\t')" > $T/sgd_configs.tsv
while IFS=$'\t' read -r name layout flags; do
  timeout 30 $P bench tbe --layout $S/$layout $flags --backward-variant atomic_sgd --reps 10 --warmup 3 --out $T/set5/atomic_$name.json > $T/set5/atomic_$name.log 2>&1; echo "atomic $name rc=$?"
done < $T/sgd_configs.tsv; pack
for i in 1 2; do timeout 40 $P bench tbe --config C2 --reps 30 --warmup 5 --out $T/c2_$i.json > $T/c2_$i.log 2>&1; echo "c2 $i rc=$?"; done; pack
mkdir -p $T/attn
OUT=$T/attn ATTN_CONFIGS=targets ATTN_FORWARD_VARIANTS= ATTN_BACKWARD_VARIANTS=attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh timeout 250 scripts/gpu/bench_attention.sh build/prebuilt > $T/attn.log 2>&1; echo "attn rc=$?"; pack
