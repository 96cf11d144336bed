#!/bin/bash
# Session call 4 (diagnostic): 16-bit rows off 16-byte boundaries against the nearest aligned widths, same
# bags and tables, forward only (auto and the wide tiles); bytes per row differ by < 3%.
T=/tmp/c4; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
pack() { tar czf $OUT/all.tgz -C $T . ; }
run() { n=$1; shift; timeout 60 $P bench tbe "$@" --forward-only --forward-variant auto,warp_tile_one_hot_wide_rows,wide_rows --reps 20 --warmup 3 --out $T/$n.json > $T/$n.log 2>&1; echo "$n rc=$? $(grep -E 'forward ' $T/$n.log | awk '{printf "%s %s %s | ", $2, $4, $10}')"; }
for round in 1 2; do
run off_388_444_$round --tables 3 --rows 142000,5895000,3000000 --dim 16,388,444 --batch 65536 --pooling-factor one-hot --dtype bf16 --index-dtype int64
run on_384_448_$round --tables 3 --rows 142000,5895000,3000000 --dim 16,384,448 --batch 65536 --pooling-factor one-hot --dtype bf16 --index-dtype int64
run off_28_$round --tables 31 --rows 3000000 --dim 28 --batch 65536 --pooling-factor one-hot --dtype bf16 --index-dtype int32
run on_32_$round --tables 31 --rows 3000000 --dim 32 --batch 65536 --pooling-factor one-hot --dtype bf16 --index-dtype int32
run off_84_$round --tables 3 --rows 1000000 --dim 84 --batch 65536 --pooling-factor 0..60 --dtype fp16 --index-dtype int32
run on_88_$round --tables 3 --rows 1000000 --dim 88 --batch 65536 --pooling-factor 0..60 --dtype fp16 --index-dtype int32
run off_212_$round --tables 2 --rows 3000000 --dim 212 --batch 32768 --pooling-factor 0..134 --dtype fp16 --index-dtype int32
run on_216_$round --tables 2 --rows 3000000 --dim 216 --batch 32768 --pooling-factor 0..134 --dtype fp16 --index-dtype int32
done; pack
