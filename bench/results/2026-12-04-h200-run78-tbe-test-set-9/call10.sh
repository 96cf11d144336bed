#!/bin/bash
# Session call 10: held-out TBE test set 9 scored once (binary built from f74d02e, whose TBE code is the final one),
# SGD configurations also with atomic SGD by name.
T=/tmp/c10; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
pack() { tar czf $OUT/all.tgz -C $T . ; }
S=bench/tbe/test_set_9
mkdir -p $T/set9
OUT=$T/set9 TBE_TEST_SET=$S timeout 300 scripts/gpu/tbe_test_set.sh build/prebuilt > $T/set9.log 2>&1; echo "set9 rc=$?"; tail -14 $T/set9/tbe_test_set.txt; pack
python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    print(c['name'], c['layout'], ' '.join(c['flags']), sep='\t')" > $T/configs.tsv
while IFS=$'\t' read -r name layout flags; do
  [[ "$flags" == *sgd* && "$flags" != *adagrad* ]] || continue
  timeout 30 $P bench tbe --layout $S/$layout $flags --backward-variant atomic_sgd --reps 10 --warmup 3 --out $T/set9/atomic_$name.json > $T/set9/atomic_$name.log 2>&1; echo "atomic $name rc=$? $(grep 'fwd + bwd' $T/set9/atomic_$name.log | awk '{print $7}')"
done < $T/configs.tsv
grep -h 'auto =' $T/set9/tbe_test_set_9_*.log | sed 's/.*auto = //' | paste -sd' '; pack
