#!/bin/bash
# Call 1: every forward variant on set-5 (spent, now development) misses; ncu kernel times of TBE forward 03 and of one attention backward.
T=/tmp/c1; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity
S=bench/tbe/test_set_5
flags_of() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "$S/manifest.json" "test_set_5_$1"; }
FV=auto,narrow_rows,wide_rows,fitted_groups,narrow_rows_deep,narrow_rows_light,warp_tile_one_hot,warp_tile_one_hot_prefetch,warp_tile_short_bags,warp_tile_short_bags_prefetch,warp_tile_short_bags_light,wide_rows_dedup,wide_rows_one_launch,warp_tile_one_hot_wide_rows,lane_rows,narrow_rows_split_bags,warp_tile_one_hot_eight_passes
for n in 03 04 01 08 09 07 05; do
  timeout 60 $P bench tbe --layout $S/test_set_5_$n.json $(flags_of $n) --forward-only --forward-variant $FV --reps 20 --warmup 3 --out $T/fwd_$n.json > $T/fwd_$n.log 2>&1; echo "fwd_$n rc=$?"; tar czf $OUT/all.tgz -C $T .
done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu=$NCU"
for n in 03 01 08; do
timeout 90 $NCU --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__registers_per_thread \
  $P bench tbe --layout $S/test_set_5_$n.json $(flags_of $n) --forward-only --reps 2 --warmup 1 > $T/ncu_tbe_$n.log 2>&1; echo "ncu tbe $n rc=$?"; tar czf $OUT/all.tgz -C $T .
done
timeout 150 $NCU --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
  $P bench attention --config targets --seq-len 2048 --reps 1 --warmup 0 --check-rows 0 > $T/ncu_attn.log 2>&1; echo "ncu attn rc=$?"
tar czf $OUT/all.tgz -C $T .
