#!/bin/bash
# Call 4: combine v2 (single-load fast path, strands by the row's vecs): GPU TBE tests, set 9 steps (dev), C2 guard;
# bag-length imbalance probe for the split-bags forward (fixed L=49 against U[0,98]).
T=/tmp/c4; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 240 build/prebuilt/tests/parity_gpu_tests --gtest_filter='*Tbe*:*Train*' > $T/gpu_tests.log 2>&1; echo "tests rc=$?"; tail -2 $T/gpu_tests.log; grep -a "FAILED" $T/gpu_tests.log | head
S=bench/tbe/test_set_9
python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    print(c['name'], c['layout'], ' '.join(c['flags']), sep='\t')" > $T/configs.tsv
while IFS=$'\t' read -r name layout flags; do
  case $name in *_02|*_03|*_08|*_09|*_00) ;; *) continue;; esac
  timeout 60 $P bench tbe --layout $S/$layout $flags --reps 10 --warmup 3 --out $T/$name.json > $T/$name.log 2>&1
  echo "$name rc=$? $(python3 -c "
import json; d=json.load(open('$T/$name.json'))
print('step', round(d['step_fwd_bwd_opt']['median_ms'],4), 'bwd', round(d['backward_fused']['median_ms'],4))" 2>&1)"
done < $T/configs.tsv
timeout 120 $P bench tbe --config C2 --reps 20 --out $T/c2.json > $T/c2.log 2>&1; echo "C2 rc=$? $(grep -E 'fwd \+ bwd' $T/c2.log | head -1)"
pack
for spec in "44 fp16" "64 bf16" "24 bf16"; do set -- $spec
for L in 49 0..98 24 0..48; do
  timeout 60 $P bench tbe --tables 3 --rows 4000000 --dim $1 --dtype $2 --batch 8192 --pooling mean --pooling-factor $L --forward-only --forward-variant auto,narrow_rows_split_bags,narrow_rows --reps 20 --warmup 3 --out $T/imb_$1_$L.json > $T/imb_$1_$L.log 2>&1
  echo "D=$1 $2 L=$L rc=$? $(python3 -c "
import json; d=json.load(open('$T/imb_$1_$L.json')); fv=d.get('forward_variants',{})
print(d.get('forward_auto_kernel'), ' '.join(f'{k}={v[\"median_ms\"]*1000:.1f}' for k,v in fv.items() if isinstance(v,dict) and 'median_ms' in v), 'copy%', round(100*d['forward_bandwidth']['every_lookup_ratio_to_copy'],1))" 2>&1)"
done; done; pack
