#!/bin/bash
# Call 8: one-hot rows past 128 bytes: every forward kernel that takes them, forced, side by side (development:
# sets 9 and 10 are spent), and ncu DRAM bytes of kAuto's kernel on set 10's 03.
T=/tmp/c8; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
pack() { tar czf $OUT/all.tgz -C $T . ; }
V=auto,wide_rows,fitted_groups,wide_rows_one_launch,warp_tile_one_hot_wide_rows,warp_tile_one_hot,warp_tile_one_hot_prefetch,auto_feature_major_tiles,auto_sample_major_tiles,warp_tile_one_hot_eight_passes
sweep() {  # name, args...
  local name=$1; shift
  timeout 90 $P bench tbe "$@" --forward-only --forward-variant $V --reps 15 --warmup 3 --out $T/sw_$name.json > $T/sw_$name.log 2>&1
  echo "$name rc=$? $(python3 -c "
import json; d=json.load(open('$T/sw_$name.json')); fv=d['forward_variants']
print(d.get('forward_auto_kernel'), 'copy%', round(100*d['forward_bandwidth']['every_lookup_ratio_to_copy'],1), ' '.join(f'{k}={v[\"median_ms\"]*1000:.1f}' for k,v in fv.items() if isinstance(v,dict) and 'median_ms' in v))" 2>&1)"
}
sweep s10_03 --layout bench/tbe/test_set_10/test_set_10_03.json --batch 65536 --index-dtype int64
sweep s10_05 --layout bench/tbe/test_set_10/test_set_10_05.json --batch 32768 --index-dtype int64
sweep s9_00 --layout bench/tbe/test_set_9/test_set_9_00.json --batch 65536 --index-dtype int64
sweep s9_07 --layout bench/tbe/test_set_9/test_set_9_07.json --batch 65536 --index-dtype int64 --weighted
sweep bf16_512 --tables 4 --rows 500000 --dim 512 --dtype bf16 --batch 65536 --pooling-factor one-hot
sweep bf16_256 --tables 8 --rows 1000000 --dim 256 --dtype bf16 --batch 65536 --pooling-factor one-hot
sweep fp16_128 --tables 16 --rows 1000000 --dim 128 --dtype fp16 --batch 65536 --pooling-factor one-hot
sweep fp32_128 --tables 8 --rows 1000000 --dim 128 --dtype fp32 --batch 65536 --pooling-factor one-hot
sweep fp32_256 --tables 4 --rows 1000000 --dim 256 --dtype fp32 --batch 65536 --pooling-factor one-hot
pack
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv -k regex:tbe_forward \
  $P bench tbe --layout bench/tbe/test_set_10/test_set_10_03.json --batch 65536 --index-dtype int64 --forward-only --reps 1 --warmup 0 > $T/ncu_s10_03.csv 2>/dev/null
grep -a '"tbe_forward\|tbe_forward' $T/ncu_s10_03.csv | awk -F'","' '{split($5,a,"("); print substr(a[1],1,80), $(NF-2), $(NF-1), $(NF)}' | tr -d '"' | head -6
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv -k regex:copy_vectorized \
  $P bench tbe --layout bench/tbe/test_set_10/test_set_10_03.json --batch 65536 --index-dtype int64 --forward-only --reps 1 --warmup 0 > $T/ncu_copy.csv 2>/dev/null
grep -a 'copy_vectorized' $T/ncu_copy.csv | awk -F'","' '{print $(NF-2), $(NF-1), $(NF)}' | tr -d '"' | head -3
pack
