#!/bin/bash
# Call 10: the one-hot 16-bit tiles rule (new, this build) against 15d4312's build (old): GPU TBE tests; kAuto and the
# forced one-hot / wide one-hot tiles on one-hot 16-bit rows of 144-1024 bytes and an fp32 output.
T=/tmp/c10; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
xz -dc build/carry/ab/parity_old.xz > /tmp/parity_old; chmod +x /tmp/parity_old
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
NEW=build/prebuilt/bin/parity; OLD=/tmp/parity_old
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 200 build/prebuilt/tests/parity_gpu_tests --gtest_filter='*Tbe*' > $T/gpu_tests.log 2>&1; echo "tests rc=$?"; tail -2 $T/gpu_tests.log; grep -a "FAILED" $T/gpu_tests.log | head
V=auto,warp_tile_one_hot_wide_rows,warp_tile_one_hot
ab() {  # name, args...
  local name=$1; shift
  for b in old new; do
    P=$OLD; [ $b = new ] && P=$NEW
    timeout 60 $P bench tbe "$@" --forward-only --forward-variant $V --reps 15 --warmup 3 --out $T/ab_${name}_$b.json > $T/ab_${name}_$b.log 2>&1
    echo "$name $b $(python3 -c "
import json; d=json.load(open('$T/ab_${name}_$b.json')); fv=d['forward_variants']
print(d.get('forward_auto_kernel'), 'copy%', round(100*d['forward_bandwidth']['every_lookup_ratio_to_copy'],1) if 'forward_bandwidth' in d else '', ' '.join(f'{k}={v[\"median_ms\"]*1000:.1f}' for k,v in fv.items() if isinstance(v,dict) and 'median_ms' in v))" 2>&1)"
  done
}
ab s9_00 --layout bench/tbe/test_set_9/test_set_9_00.json --batch 65536 --index-dtype int64
ab fp16_128 --tables 16 --rows 1000000 --dim 128 --dtype fp16 --batch 65536 --pooling-factor one-hot
ab bf16_256 --tables 8 --rows 1000000 --dim 256 --dtype bf16 --batch 65536 --pooling-factor one-hot
ab bf16_192 --tables 8 --rows 1000000 --dim 192 --dtype bf16 --batch 65536 --pooling-factor one-hot
ab bf16_72 --tables 16 --rows 1000000 --dim 72 --dtype bf16 --batch 65536 --pooling-factor one-hot
ab fp16_100 --tables 16 --rows 1000000 --dim 100 --dtype fp16 --batch 65536 --pooling-factor one-hot
ab fp16_128_fp32out --tables 16 --rows 1000000 --dim 128 --dtype fp16 --output-dtype fp32 --batch 65536 --pooling-factor one-hot
ab s10_03 --layout bench/tbe/test_set_10/test_set_10_03.json --batch 65536 --index-dtype int64
pack
