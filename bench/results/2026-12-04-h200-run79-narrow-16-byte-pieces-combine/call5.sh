#!/bin/bash
# Call 5: combine v2 under ncu (set 9's 02, 03, 08 and C2: chunk + combine kernels), backward variants on 03 / 08, set 9 rerun with torch (dev).
T=/tmp/c5; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
pack() { tar czf $OUT/all.tgz -C $T . ; }
S=bench/tbe/test_set_9
python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    print(c['name'], c['layout'], ' '.join(c['flags']), sep='\t')" > $T/configs.tsv
for c in 02 03 08; do
  flags=$(awk -F'\t' -v n="test_set_9_$c" '$1 == n {print $3}' $T/configs.tsv)
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:'tbe_backward_c' \
    $P bench tbe --layout $S/test_set_9_$c.json $flags --backward-variant batched --reps 1 --warmup 0 > $T/ncu_$c.csv 2> $T/ncu_$c.err
  echo "ncu $c rc=$? $(grep -a '"gpu__time_duration.sum"' $T/ncu_$c.csv | awk -F'","' '{split($5,a,"<"); print a[1] "=" $(NF)}' | tr -d '"' | head -4 | tr '\n' ' ')"
done
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:'tbe_backward_c' \
    $P bench tbe --config C2 --reps 1 --warmup 0 > $T/ncu_c2.csv 2> $T/ncu_c2.err
echo "ncu C2 rc=$? $(grep -a '"gpu__time_duration.sum"' $T/ncu_c2.csv | awk -F'","' '{split($5,a,"<"); print a[1] "=" $(NF)}' | tr -d '"' | head -4 | tr '\n' ' ')"
pack
for c in 03 08; do
  flags=$(awk -F'\t' -v n="test_set_9_$c" '$1 == n {print $3}' $T/configs.tsv)
  for v in both long_chunks short_chunks small_batch_short_chunks large_sort_tiles separate_sort_histogram; do
    timeout 60 $P bench tbe --layout $S/test_set_9_$c.json $flags --backward-variant $v --reps 10 --warmup 3 --out $T/bv_${c}_$v.json > $T/bv_${c}_$v.log 2>&1
    echo "$c $v rc=$? $(python3 -c "
import json; d=json.load(open('$T/bv_${c}_$v.json'))
print('step', round(d['step_fwd_bwd_opt']['median_ms'],4), 'bwd', round(d['backward_fused']['median_ms'],4))" 2>&1)"
  done
done; pack
mkdir -p $T/set9
OUT=$T/set9 TBE_TEST_SET=$S timeout 300 scripts/gpu/tbe_test_set.sh build/prebuilt > $T/set9.log 2>&1; echo "set9 rc=$?"; tail -14 $T/set9/tbe_test_set.txt | cut -c1-100; pack
