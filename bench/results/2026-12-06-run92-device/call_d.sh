#!/bin/bash
# Call D (call C's binary): the deep-window A/B where rows take four vecs per lane (there the deep window is 2
# positions instead of 1): spent set 13's 04 again, 05 and 09; and on the named configurations C1-C7, D1, D3-D7
# (guards), alternating (default, deep, default, deep). Development figures.
T=/tmp/r92d; mkdir -p $T/ab build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
pack() { tar czf $OUT/call_d.tgz -C $T . ; }
P=build/pm/bin/parity; s=$(date +%s)
S=bench/tbe/test_set_13
flags_of() { python3 -c "
import json,sys
for c in json.load(open('$S/manifest.json'))['configurations']:
    if c['name']==sys.argv[1]: print('--layout $S/'+c['layout'], ' '.join(c['flags']))" $1; }
for round in 1 2; do
  for cfg in test_set_13_04 test_set_13_05 test_set_13_09 C1 C2 C3 C4 C5 C6 C7 D1 D3 D4 D5 D6 D7; do
    for v in row_at_a_time deep_window; do
      case $cfg in test_set*) f=$(flags_of $cfg);; *) f="--config $cfg";; esac
      bv=$([ $v = deep_window ] && echo deep_window || echo row)
      # shellcheck disable=SC2086
      timeout 60 $P bench tbe $f --backward-variant $bv --reps 10 --warmup 3 --out $T/ab/${cfg}_${v}_$round.json > $T/ab/${cfg}_${v}_$round.log 2>&1
      echo "$cfg $v r$round rc=$? $(grep -E 'fwd \+ bwd' $T/ab/${cfg}_${v}_$round.log | head -1 | tr -s ' ' | cut -c1-120)"
    done
  done; pack
done
python3 - $T/ab <<'PY'
import glob, json, os, statistics, sys
d = sys.argv[1]
def metric(path, key):
    return json.load(open(path)).get(key, {}).get("median_ms")
for cfg in "test_set_13_04 test_set_13_05 test_set_13_09 C1 C2 C3 C4 C5 C6 C7 D1 D3 D4 D5 D6 D7".split():
    for key in ("step_fwd_bwd_opt", "backward_fused"):
        vals = {v: [x for x in (metric(p, key) for p in sorted(glob.glob(os.path.join(d, f"{cfg}_{v}_*.json")))) if x]
                for v in ("row_at_a_time", "deep_window")}
        if vals["row_at_a_time"] and vals["deep_window"]:
            a, b = statistics.median(vals["row_at_a_time"]), statistics.median(vals["deep_window"])
            print(f"{cfg:15s} {key:17s} default {a:.4f} deep {b:.4f} ms  default/deep {a / b:.3f}  runs {vals}")
PY
pack
