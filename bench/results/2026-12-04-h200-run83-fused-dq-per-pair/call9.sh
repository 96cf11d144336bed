#!/bin/bash
# Call 9: bounds check, offsets entries with their predecessors by shuffle / shared memory (48 bytes a thread, prebuilt) against 1d5da01
# (two loads per entry, 8 entries a thread), alternating, two rounds; GPU bounds tests on it.

T=/tmp/c9; mkdir -p $T build/prebuilt build/ab
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
for b in parity_1d5da01; do xz -dc build/carry/ab/$b.xz > build/ab/$b; chmod +x build/ab/$b; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
lscpu > $T/lscpu.txt
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 100 stdbuf -oL $G --gtest_brief=1 --gtest_filter='GpuTbeBoundsCheck.*' > $T/gpu_tests.log 2>&1
rc=$?; echo "tests rc=$rc $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -a "FAILED\|Failure" $T/gpu_tests.log | head; pack
mkdir -p $T/bounds
run_cfg() {  # name, then bench flags
  local name=$1; shift
  for round in 1 2; do
    for which in old w1; do
      local bin=$P; [ $which = old ] && bin=build/ab/parity_1d5da01; [ $which = w2 ] && bin=build/ab/parity_vec_w2
      timeout 40 $bin bench tbe "$@" --reps 30 --warmup 5 --out $T/bounds/${name}_${which}_$round.json > $T/bounds/${name}_${which}_$round.log 2>&1 || echo "$name $which $round failed"
    done
  done
}
run_cfg C2 --config C2
run_cfg BC --config BC
for S in 11:01 10:01 11:04 11:08 9:03 11:03 11:07 10:03; do
  set_no=${S%%:*}; c=${S##*:}; D=bench/tbe/test_set_$set_no
  flags=$(python3 -c "
import json,sys
for x in json.load(open('$D/manifest.json'))['configurations']:
    if x['name']=='test_set_${set_no}_$c': print(' '.join(x['flags']))")
  run_cfg set${set_no}_$c --layout $D/test_set_${set_no}_$c.json $flags
done
python3 - $T/bounds <<'PY' | tee $T/bounds_ab.txt
import json, glob, os, sys, statistics
d = sys.argv[1]; names = sorted({os.path.basename(p).rsplit('_', 2)[0] for p in glob.glob(d + '/*.json')})
print('config        old (1d5da01)     shuffled          floor    old/floor w1/floor')
for n in names:
    def get(w, k):
        v = []
        for r in (1, 2):
            p = f'{d}/{n}_{w}_{r}.json'
            if os.path.exists(p): v.append(json.load(open(p))[k]['median_ms'] * 1000)
        return v
    cols = [get(w, 'bounds_check_clean') for w in ('old', 'w1')]
    fl = get('w1', 'bounds_check_floor_index_offsets_read')
    if not all(cols) or not fl: print(n, 'missing'); continue
    f = statistics.median(fl)
    print(f'{n:12s} ' + ' '.join(f'{" ".join("%.2f" % x for x in c):16s}' for c in cols) + f' {f:7.2f}   ' + '  '.join(f'{statistics.median(c)/f:.2f}' for c in cols))
PY
pack
pack
