#!/bin/bash
# Call 7: narrow-row short chunks (8x / 4x the chunks for rows of <= 16 / 32 elements, >= 8 positions) against
# 057536d (one chunk length for every width) on the training step, alternating, two rounds; GPU TBE tests.
T=/tmp/c7; mkdir -p $T build/prebuilt build/ab
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
xz -dc build/carry/ab/parity_057536d.xz > build/ab/parity_old; chmod +x build/ab/parity_old
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt
P=build/prebuilt/bin/parity; G=build/prebuilt/tests/parity_gpu_tests
pack() { tar czf $OUT/all.tgz -C $T . ; }
timeout 170 stdbuf -oL $G --gtest_brief=1 --gtest_filter='*Tbe*:*ShortChunks*:*Embedding*' > $T/gpu_tests.log 2>&1
rc=$?; echo "tests rc=$rc $(grep -E '^\[  (PASSED|FAILED)' $T/gpu_tests.log | tr '\n' ' ')"; grep -a "FAILED\|Failure" $T/gpu_tests.log | head; pack
mkdir -p $T/step
run_cfg() {
  local name=$1; shift
  for round in 1 2; do
    for which in old new; do
      local bin=$P; [ $which = old ] && bin=build/ab/parity_old
      timeout 40 $bin bench tbe "$@" --reps 20 --warmup 5 --out $T/step/${name}_${which}_$round.json > $T/step/${name}_${which}_$round.log 2>&1 || echo "$name $which $round failed"
    done
  done
}
run_cfg C2 --config C2
for S in 11:00 11:01 11:03 11:04 11:05 10:00 9:04; do
  set_no=${S%%:*}; c=${S##*:}; D=bench/tbe/test_set_$set_no
  flags=$(python3 -c "
import json
for x in json.load(open('$D/manifest.json'))['configurations']:
    if x['name']=='test_set_${set_no}_$c': print(' '.join(x['flags']))")
  run_cfg set${set_no}_$c --layout $D/test_set_${set_no}_$c.json $flags
done
python3 - $T/step <<'PY' | tee $T/step_ab.txt
import json, glob, os, sys, statistics
d = sys.argv[1]; names = sorted({os.path.basename(p).rsplit('_', 2)[0] for p in glob.glob(d + '/*.json')})
print('config       max_dim  optimizer          step old ms (2)     step new ms (2)    new/old  bwd old us  bwd new us')
for n in names:
    def get(w, k):
        v = []
        for r in (1, 2):
            p = f'{d}/{n}_{w}_{r}.json'
            if os.path.exists(p):
                j = json.load(open(p)); v.append(j[k]['median_ms'])
        return v
    so, sn = get('old', 'step_fwd_bwd_opt'), get('new', 'step_fwd_bwd_opt')
    bo, bn = get('old', 'backward_fused'), get('new', 'backward_fused')
    if not so or not sn: print(n, 'missing'); continue
    cfg = json.load(open(f'{d}/{n}_new_1.json'))['config']
    print(f"{n:12s} {cfg.get('max_dim')!s:7s} {cfg.get('optimizer')!s:18s} {' '.join('%.4f' % x for x in so):19s} {' '.join('%.4f' % x for x in sn):19s} {statistics.median(sn)/statistics.median(so):.3f}   {statistics.median(bo)*1000:8.1f}   {statistics.median(bn)*1000:8.1f}")
PY
pack
