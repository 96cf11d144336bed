#!/bin/bash
# Call 2: ncu kernel breakdown of the deterministic SGD steps (set 9's 03, 02, 08) and the bounds check of 08.
T=/tmp/c2; mkdir -p $T build/prebuilt
[ -x build/prebuilt/bin/parity ] || tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
pack() { tar czf $OUT/all.tgz -C $T . ; }
S=bench/tbe/test_set_9
for c in 03 02 08; do
  flags=$(python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    if c['name'].endswith('_$c'): print(' '.join(c['flags']))")
  timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv \
    $P bench tbe --layout $S/test_set_9_$c.json $flags --backward-variant batched --reps 1 --warmup 1 > $T/ncu_$c.csv 2> $T/ncu_$c.err; echo "ncu $c rc=$?"
  python3 - $T/ncu_$c.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; i_id = hdr.index('ID'); i_k = hdr.index('Kernel Name'); i_m = hdr.index('Metric Name'); i_v = hdr.index('Metric Value'); i_u = hdr.index('Metric Unit')
per = collections.OrderedDict()
for r in rows[1:]:
    key = (int(r[i_id]), r[i_k][:90]); per.setdefault(key, {})[r[i_m]] = r[i_v] + r[i_u]
for (i, k), m in per.items():
    print(f"{i:4d} t {m.get('gpu__time_duration.sum')} rd {m.get('dram__bytes_read.sum')} wr {m.get('dram__bytes_write.sum')} {k}")
PY
done > $T/breakdown.txt 2>&1; cat $T/breakdown.txt | cut -c1-200 | head -150; pack
