#!/bin/bash
# Call 6: combine kernel A/B in one call: v0 (serial run-end walk), v1 (block-wide search), v2 (+ one-load fast path,
# strands by the row's vecs), v3 (v2 with the launch's vec slots): ncu combine time on set 9's 02 / 03 / 08, steps.
T=/tmp/c6; mkdir -p $T
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
pack() { tar czf $OUT/all.tgz -C $T . ; }
for v in v0 v1 v2 v3; do xz -dc build/carry/ab/parity_$v.xz > /tmp/parity_$v; chmod +x /tmp/parity_$v; done
S=bench/tbe/test_set_9
python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    print(c['name'], c['layout'], ' '.join(c['flags']), sep='\t')" > $T/configs.tsv
for c in 02 03 08; do
  flags=$(awk -F'\t' -v n="test_set_9_$c" '$1 == n {print $3}' $T/configs.tsv)
  for v in v0 v1 v2 v3; do
    timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:'tbe_backward_combine' \
      /tmp/parity_$v bench tbe --layout $S/test_set_9_$c.json $flags --backward-variant batched --reps 1 --warmup 0 > $T/ncu_${c}_$v.csv 2> /dev/null
    echo "ncu $c $v $(grep -a '"gpu__time_duration.sum"' $T/ncu_${c}_$v.csv | awk -F'","' '{print $(NF)}' | tr -d '"' | tr '\n' ' ')"
  done
done; pack
for c in 02 03; do
  flags=$(awk -F'\t' -v n="test_set_9_$c" '$1 == n {print $3}' $T/configs.tsv)
  for rep in 1 2; do for v in v0 v1 v2 v3; do
    timeout 60 /tmp/parity_$v bench tbe --layout $S/test_set_9_$c.json $flags --reps 20 --warmup 3 --out $T/st_${c}_$v.json > /dev/null 2>&1
    echo "$c $v rep$rep $(python3 -c "
import json; d=json.load(open('$T/st_${c}_$v.json'))
print('step', round(d['step_fwd_bwd_opt']['median_ms'],4), 'bwd', round(d['backward_fused']['median_ms'],4))" 2>&1)"
  done; done
done; pack
