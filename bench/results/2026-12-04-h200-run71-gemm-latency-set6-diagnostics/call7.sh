#!/bin/bash
# Call 7: GEMM selection latency after the merged selector changes; CLI smoke on the GPU paths after the CLI
# refactor; diagnostics on test set 6 (spent in call 6): every forward variant on its forward misses.
T=/tmp/c7; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
for hw in h200 mi300x mi350x; do timeout 60 $P gemm select --hw $hw --latency > $T/latency_$hw.txt 2>&1; echo "latency $hw rc=$? $(grep -iE 'p50|p99' $T/latency_$hw.txt | head -4 | tr '\n' ' ')"; done; pack
timeout 120 $G --gtest_brief=1 --gtest_filter='*Gemm*:*Bench*:*Cli*' > $T/gpu_tests.log 2>&1; echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; pack
timeout 60 $P bench attention --config targets --seq-len 2048 --reps 3 --warmup 1 --out $T/attn_smoke.json > $T/attn_smoke.log 2>&1; echo "attn smoke rc=$?"
timeout 60 $P bench gemm --help > /dev/null 2>&1; echo "gemm help rc=$?"
S=bench/tbe/test_set_6
flags_of() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "$S/manifest.json" "test_set_6_$1"; }
FV=auto,narrow_rows,wide_rows,fitted_groups,narrow_rows_deep,narrow_rows_light,warp_tile_one_hot,warp_tile_short_bags_light,wide_rows_dedup,wide_rows_one_launch,warp_tile_one_hot_wide_rows,lane_rows,narrow_rows_split_bags
for n in 05 06 00 08 04 07; do
  timeout 60 $P bench tbe --layout $S/test_set_6_$n.json $(flags_of $n) --forward-only --forward-variant $FV --reps 20 --warmup 3 --out $T/diag_$n.json > $T/diag_$n.log 2>&1; echo "diag $n rc=$? $(grep -E 'forward ' $T/diag_$n.log | grep median | sort -k4 -n | head -3 | awk '{printf "%s %s | ", $2, $4}')"
done; pack
