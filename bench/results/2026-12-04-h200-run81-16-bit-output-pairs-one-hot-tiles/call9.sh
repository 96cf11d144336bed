#!/bin/bash
# Call 9: 16-byte stores of 16-bit output pairs (new, this build) against two 8-byte stores (old, 15d4312's build):
# GPU TBE tests; forward A/B on one-hot 16-bit rows and narrow 16-bit rows; forced wide one-hot tiles against the
# one-hot warp tiles in the new build (the rule question for 16-bit one-hot rows of 129-512 bytes).
T=/tmp/c9; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
xz -dc build/carry/ab/parity_old.xz > /tmp/parity_old; chmod +x /tmp/parity_old
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
NEW=build/prebuilt/bin/parity; OLD=/tmp/parity_old
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 200 build/prebuilt/tests/parity_gpu_tests --gtest_filter='*Tbe*' > $T/gpu_tests.log 2>&1; echo "tests rc=$?"; tail -2 $T/gpu_tests.log; grep -a "FAILED" $T/gpu_tests.log | head
V=auto,warp_tile_one_hot_wide_rows,warp_tile_one_hot,narrow_rows_split_bags
ab() {  # name, args...
  local name=$1; shift
  for b in old new; do
    P=$OLD; [ $b = new ] && P=$NEW
    timeout 60 $P bench tbe "$@" --forward-only --forward-variant $V --reps 15 --warmup 3 --out $T/ab_${name}_$b.json > $T/ab_${name}_$b.log 2>&1
    echo "$name $b $(python3 -c "
import json; d=json.load(open('$T/ab_${name}_$b.json')); fv=d['forward_variants']
print(d.get('forward_auto_kernel'), ' '.join(f'{k}={v[\"median_ms\"]*1000:.1f}' for k,v in fv.items() if isinstance(v,dict) and 'median_ms' in v))" 2>&1)"
  done
}
ab s9_00 --layout bench/tbe/test_set_9/test_set_9_00.json --batch 65536 --index-dtype int64
ab s10_03 --layout bench/tbe/test_set_10/test_set_10_03.json --batch 65536 --index-dtype int64
ab fp16_128 --tables 16 --rows 1000000 --dim 128 --dtype fp16 --batch 65536 --pooling-factor one-hot
ab bf16_256 --tables 8 --rows 1000000 --dim 256 --dtype bf16 --batch 65536 --pooling-factor one-hot
ab bf16_192 --tables 8 --rows 1000000 --dim 192 --dtype bf16 --batch 65536 --pooling-factor one-hot
ab bf16_96 --tables 8 --rows 1000000 --dim 96 --dtype bf16 --batch 65536 --pooling-factor 2
ab bf16_64_1h --tables 8 --rows 1000000 --dim 64 --dtype bf16 --batch 32768 --pooling-factor one-hot
ab s9_03 --layout bench/tbe/test_set_9/test_set_9_03.json --batch 32768 --index-dtype int32
ab s9_04 --layout bench/tbe/test_set_9/test_set_9_04.json --batch 4096 --index-dtype int64
ab s9_09 --layout bench/tbe/test_set_9/test_set_9_09.json --batch 8192 --index-dtype int32
ab fp16_128_L8 --tables 16 --rows 1000000 --dim 128 --dtype fp16 --batch 16384 --pooling-factor 8
ab bf16_128_fp32out --tables 16 --rows 1000000 --dim 128 --dtype bf16 --output-dtype fp32 --batch 65536 --pooling-factor one-hot
pack
