#!/bin/bash
# Call 5: forward variants for short bags of wide rows on development sets 1-5 (kAuto rule data).
T=/tmp/c5; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
flags_of() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "bench/tbe/test_set_$1/manifest.json" "test_set_$1_$2"; }
for c in 1:05 1:06 1:07 2:00 2:03 2:07 2:08 3:03 3:04 3:08 3:09 4:01 4:02 4:04 5:02 5:05 5:07; do s=${c%%:*}; n=${c##*:}
  timeout 60 $P bench tbe --layout bench/tbe/test_set_$s/test_set_${s}_$n.json $(flags_of $s $n) --forward-only --forward-variant auto,warp_tile_one_hot_wide_rows,wide_rows,wide_rows_dedup,wide_rows_one_launch --reps 20 --warmup 3 --out $T/fwd_${s}_$n.json > $T/fwd_${s}_$n.log 2>&1; echo "${s}_$n rc=$? $(grep -E 'forward (auto|warp_tile_one_hot_wide_rows|wide_rows_dedup) ' $T/fwd_${s}_$n.log | awk '{printf "%s %s %s | ", $2, $4, $10}')"
done
tar czf $OUT/all.tgz -C $T .
