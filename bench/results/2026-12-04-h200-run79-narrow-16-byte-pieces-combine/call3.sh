#!/bin/bash
# Call 3: the combine kernel's block-wide run-end search: GPU TBE tests, set 9's SGD/Adagrad steps (dev), C2 guard, ncu of 02's combine.
T=/tmp/c3; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 240 build/prebuilt/tests/parity_gpu_tests --gtest_filter='*Tbe*:*Train*' > $T/gpu_tests.log 2>&1; echo "tests rc=$?"; tail -3 $T/gpu_tests.log; grep -a "FAILED" $T/gpu_tests.log | head
S=bench/tbe/test_set_9
python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    print(c['name'], c['layout'], ' '.join(c['flags']), sep='\t')" > $T/configs.tsv
while IFS=$'\t' read -r name layout flags; do
  case $name in *_02|*_03|*_08|*_09|*_04|*_00) ;; *) continue;; esac
  timeout 60 $P bench tbe --layout $S/$layout $flags --reps 10 --warmup 3 --out $T/$name.json > $T/$name.log 2>&1
  echo "$name rc=$? $(python3 -c "
import json; d=json.load(open('$T/$name.json'))
print('step', round(d['step_fwd_bwd_opt']['median_ms'],4), 'bwd', round(d['backward_fused']['median_ms'],4))" 2>&1)"
done < $T/configs.tsv
timeout 120 $P bench tbe --config C2 --reps 20 --out $T/c2.json > $T/c2.log 2>&1; echo "C2 rc=$? $(grep -E 'fwd \+ bwd|forward' $T/c2.log | head -3 | tr '\n' ' ')"
pack
flags=$(awk -F'\t' '$1 ~ /_02$/ {print $3}' $T/configs.tsv)
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:'tbe_backward|radix|linearize' \
  $P bench tbe --layout $S/test_set_9_02.json $flags --backward-variant batched --reps 1 --warmup 0 > $T/ncu_02.csv 2> $T/ncu_02.err; echo "ncu rc=$?"
grep -a '"gpu__time_duration.sum"' $T/ncu_02.csv | awk -F'","' '{print $5, $(NF)}' | cut -c1-150 | head -24
pack
