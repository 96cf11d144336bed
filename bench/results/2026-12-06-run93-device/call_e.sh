#!/bin/bash
# Call E (binary 40ef04c; development figures): kAuto against the wide one-hot tiles on the spent mixed-width layouts
# of 16k-64k bags (the mixed-width short-bags rule starts at 65536): is there a shorter-bag rule below that edge?
T=/tmp/r93e; mkdir -p $T build/pm
[ -x build/pm/bin/parity ] || tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
P=build/pm/bin/parity
for cfg in 1_07 3_04 6_05 8_07 8_09 12_05 14_00 15_00; do
  S=bench/tbe/test_set_${cfg%_*}; name=test_set_$cfg
  flags=$(python3 -c "
import json
for c in json.load(open('$S/manifest.json'))['configurations']:
    if c['name']=='$name': print(' '.join(c['flags']))")
  for round in 1 2; do
    # shellcheck disable=SC2086
    timeout 60 $P bench tbe --layout $S/$name.json $flags --forward-variant auto,warp_tile_one_hot_wide_rows,wide_rows,warp_tile_short_bags_light --forward-only --out $T/${name}_$round.json > $T/${name}_$round.log 2>&1
  done
  python3 - $T/${name}_1.json $T/${name}_2.json <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[1:]]
row = [f"{sys.argv[1].split('/')[-1][:-7]}: kAuto takes {docs[0].get('forward_auto_kernel')}"]
for v in ("auto", "warp_tile_one_hot_wide_rows", "wide_rows", "warp_tile_short_bags_light"):
    ms = [d.get("forward_variants", {}).get(v, {}).get("median_ms") for d in docs]
    row.append(f"{v} {' / '.join(f'{x:.4f}' if x else '-' for x in ms)}")
print("; ".join(row))
PY
done | tee $T/summary.txt
tar czf $OUT/call_e.tgz -C $T .
