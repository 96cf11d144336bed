#!/bin/bash
# Call D (binary 40ef04c; set 15 is spent, so development figures): every forward kernel on set 15's forward misses
# (00, 04, 05), and the SGD step misses (01, 04, 06, 09) with the default sorted backward against atomic_sgd
# (non-deterministic, by name) and vendor_sort.
T=/tmp/r93d; mkdir -p $T/step build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_d.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
OUT=$T TBE_SWEEP_SET=bench/tbe/test_set_15 TBE_SWEEP_CONFIGS=test_set_15_00,test_set_15_04,test_set_15_05 \
  timeout 200 scripts/gpu/tbe_forward_sweep_probe.sh build/pm > $T/sweep.log 2>&1; echo "sweep rc=$? $(( $(date +%s) - s ))s"
cat $T/tbe_forward_sweep.txt | grep -v "      -  " | head -60; pack
S=bench/tbe/test_set_15
for cfg in 01 04 06 09; do
  name=test_set_15_$cfg
  flags=$(python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    if c['name']=='$name': print(' '.join(c['flags']))")
  for v in both atomic_sgd vendor_sort; do
    # shellcheck disable=SC2086
    timeout 60 $P bench tbe --layout $S/$name.json $flags --backward-variant $v --reps 10 --warmup 3 --out $T/step/${name}_$v.json > $T/step/${name}_$v.log 2>&1
    echo "$name $v rc=$? $(grep -E 'fwd \+ bwd|backward \+ optimizer' $T/step/${name}_$v.log | tr -s ' ' | cut -c1-70 | tr '\n' '|')"
  done
done
pack
