#!/bin/bash
# Session call 6 (development sweep): kAuto against the wide tiles on long bags of mid-width rows, by dtype,
# width, bag count and bag length (synthetic layouts, 1M rows a table, uniform rows), and on named C2/C3/D3/D5.
T=/tmp/c6; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
run() { n=$1; shift; timeout 60 $P bench tbe "$@" --forward-only --forward-variant auto,warp_tile_one_hot_wide_rows --reps 10 --warmup 2 --out $T/$n.json > $T/$n.log 2>&1 || echo "$n failed"; }
for dt in fp16 bf16 fp32; do for d in 68 128 200; do for b in 8192 32768 131072; do for l in 8 16 32 0..40; do
  [[ $dt == fp32 && $d == 200 ]] && continue
  run s_${dt}_${d}_${b}_${l/../-} --tables 4 --rows 1000000 --dim $d --batch $b --pooling-factor $l --dtype $dt --index-dtype int32
done; done; done; done
for c in C2 C3 D3 D5 C1 C6; do run n_$c --config $c; done
python3 - $T <<'PY' | tee $T/sweep.txt
import json, glob, os, sys
for p in sorted(glob.glob(sys.argv[1] + "/*.json")):
    d = json.load(open(p)); v = d["forward_variants"]
    a = v["auto"]["median_ms"]; w = v["warp_tile_one_hot_wide_rows"]["median_ms"]
    c = d["config"]; bags = c["batch_size"] * c["num_features"]
    print(f"{os.path.basename(p)[:-5]:26s} bags {bags:7d} N/bag {c['num_indices']/bags:6.1f} auto {d.get('forward_auto_kernel','?'):28s} {a*1e3:8.1f} us wide {w*1e3:8.1f} us  wide/auto {w/a:6.3f}")
PY
tar czf $OUT/all.tgz -C $T .
