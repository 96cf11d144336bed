#!/bin/bash
# Call 2 (prepared; not yet run): where the deterministic TBE step's time goes (ncu per kernel, caches
# kept between kernels) on spent set 13's one-hot SGD layouts under 5x torch (00, 04) and a narrow-rows
# SGD layout (07); their steps with the backward options that change the sort and the chunks
# (vendor_sort: CUB's radix sort); the forward sweep on set 13's three forward misses.
# Same binary as call 1 (build/carry/main).
T=/tmp/r90c2; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call2.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
mkdir -p $T/breakdown
OUT=$T/breakdown TBE_BREAKDOWN_SET=bench/tbe/test_set_13 TBE_BREAKDOWN_CONFIGS=test_set_13_00,test_set_13_04,test_set_13_07 \
  TBE_BREAKDOWN_CACHE=none timeout 200 bash scripts/gpu/tbe_kernel_breakdown_probe.sh build/pm > $T/breakdown.log 2>&1
echo "breakdown rc=$? $(( $(date +%s) - s ))s"; pack
S=bench/tbe/test_set_13
flags() { python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" $S/manifest.json $1; }
for n in 00 04; do
  for v in row vendor_sort large_sort_tiles long_chunks; do
    # shellcheck disable=SC2046  # the manifest's flags are words
    timeout 60 $P bench tbe --layout $S/test_set_13_$n.json $(flags test_set_13_$n) --reps 20 --warmup 3 \
      --backward-variant $v --out $T/time_${n}_$v.json > $T/time_${n}_$v.log 2>&1
    echo "$n $v rc=$? $(grep -E 'fwd \+ bwd' $T/time_${n}_$v.log | head -1 | tr -s ' ')"
  done
done
pack
# 4. The forward sweep of every kernel on spent set 13's forward misses (03: D=16 under Zipf 1.2,
#    05: bf16 one-hot mix of D 16-128+, 06: fp32 D=128 mean short bags): is kAuto's choice the fastest?
mkdir -p $T/sweep
OUT=$T/sweep TBE_SWEEP_SET=bench/tbe/test_set_13 TBE_SWEEP_CONFIGS=test_set_13_03,test_set_13_05,test_set_13_06 \
  timeout 150 bash scripts/gpu/tbe_forward_sweep_probe.sh build/pm > $T/sweep.log 2>&1
echo "sweep rc=$? $(( $(date +%s) - s ))s"; pack
